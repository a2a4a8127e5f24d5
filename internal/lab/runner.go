package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/showdownlab/showdown/internal/cgroup"
	"github.com/showdownlab/showdown/internal/neighbour"
	"github.com/showdownlab/showdown/internal/noise"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/load/atomicfile"
)

// Runner executes plans and writes results folders.
type Runner struct {
	// Root is the project folder (services/, workloads/).
	Root string
	// ResultsDir is where results folders are created (default
	// Root/results).
	ResultsDir string
	// Progress receives progress lines (nil: discarded).
	Progress io.Writer
	// TTY redraws one live status line instead of printing lines.
	TTY bool
	// Command is the command line that started the run, for run.json.
	Command string
	// NoiseSeconds is how long the machine's own noise is measured before
	// the first service starts (0: noise.DefaultSeconds; negative: not
	// measured, and the warm-up rule keeps its own thresholds).
	NoiseSeconds int
}

// execution is the state of one plan being executed.
type execution struct {
	rn        *Runner
	plan      *plan.Plan
	dir       string
	rec       *results.Run
	manifests map[string]*service.Manifest
	dbs       *stack.Databases
	known     []int64
	progress  *progress
	starts    int // service starts so far
	// skuIndex is whether the sku table has its index now (the
	// database dimension switches it).
	skuIndex bool
	// mu keeps lines and warnings whole while builds and the databases'
	// start run side by side.
	mu sync.Mutex
}

// Run executes p and returns the results folder and its record. A failure
// of one implementation is recorded and the plan goes on; Run returns an
// error only when nothing useful can be measured (no results folder, no
// database). When ctx is cancelled it stops everything it started, writes
// what was measured and returns ctx's error.
func (rn *Runner) Run(ctx context.Context, p *plan.Plan) (string, *results.Run, error) {
	parent := rn.ResultsDir
	if parent == "" {
		parent = filepath.Join(rn.Root, "results")
	}
	dir, err := newResultsDir(parent, p.Name, time.Now())
	if err != nil {
		return "", nil, err
	}
	x := &execution{rn: rn, plan: p, dir: dir, manifests: map[string]*service.Manifest{}}
	x.rec = &results.Run{Version: 1, Command: rn.Command, Plan: p, Start: time.Now().UTC(),
		Placement: p.Placement, Builds: map[string]*results.Build{}}
	x.say("results: %s", dir)
	x.rec.Machine = DescribeMachine(rn.Root)
	x.sayCores()
	defer func() {
		x.rec.End = time.Now().UTC()
		if ctx.Err() != nil {
			x.rec.Interrupted = true
		}
		_ = results.WriteRun(dir, x.rec)
	}()
	ms, err := service.Discover(rn.Root)
	if err != nil {
		return dir, x.rec, err
	}
	for _, m := range ms {
		x.manifests[m.Name] = m
	}
	// The builds and the databases' start (initdb, data) are independent
	// and neither is measured: they run side by side. A database that
	// fails to start stops the builds, as nothing could be measured.
	bctx, stopBuilds := context.WithCancel(ctx)
	built := make(chan struct{})
	go func() {
		defer close(built)
		x.build(bctx)
	}()
	dbErr := x.startDatabases(ctx)
	if dbErr != nil {
		stopBuilds()
	}
	<-built
	stopBuilds()
	if dbErr != nil {
		return dir, x.rec, dbErr
	}
	defer x.dbs.Stop()
	x.measureNoise(ctx)
	// The generator is this process: pin it now, after the builds, which
	// should have every CPU.
	if cpus := p.Placement.GeneratorCPUs; cpus != "" {
		if err := cgroup.PinTree(os.Getpid(), cpus); err != nil {
			x.warn("generator not pinned to CPUs %s: %v", cpus, err)
		}
		x.sizeGenerator(cpus)
	}
	x.progress = newProgress(rn.Progress, rn.TTY, p)
	defer x.progress.close()
	if p.Rounds.Neighbour {
		if n := x.startNeighbour(); n != nil {
			defer n.Stop()
		}
	}
	if ok, why := p.Interleaved(); p.SLO != nil {
		x.runCapacity(ctx)
	} else if ok {
		x.runInterleaved(ctx)
	} else {
		if len(p.Arms()) > 1 {
			x.say("measured one start after another, not in interleaved rounds: %s", why)
		}
		x.runSequential(ctx)
	}
	if p.Faults != nil && ctx.Err() == nil {
		x.runFaults(ctx)
	}
	return dir, x.rec, ctx.Err()
}

// sizeGenerator runs the generator on as many threads at once as it now
// has CPUs. GOMAXPROCS was sized to the CPUs the process could use at its
// start (every CPU, for the builds); the runtime follows a change of
// affinity only at its next check, up to a second later, so it is reset
// here and the first level runs on every generator CPU, and on no more. A
// GOMAXPROCS set in the environment is the user's and is kept; a value
// under the CPUs is said, since the generator then cannot use them all.
func (x *execution) sizeGenerator(cpus string) {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.SetDefaultGOMAXPROCS()
	}
	if n, c := runtime.GOMAXPROCS(0), affinityCPUs(); c > 0 && n < c {
		x.warn("the generator runs on at most %d of its %d CPUs (%s) at once: GOMAXPROCS is %d", n, c, cpus, n)
	}
}

// runSequential measures every start alone, one after the other: trial
// by trial, implementations in a rotated order.
func (x *execution) runSequential(ctx context.Context) {
	p := x.plan
	last := p.Trials
	if p.TrialsAuto {
		last = p.TrialsMax
	}
	for trial := 1; trial <= last && ctx.Err() == nil; trial++ {
		if trial > p.Trials && x.precise() {
			break
		}
		if trial > p.Trials {
			x.progress.addTrial()
		}
		for _, s := range schedule(p, trial) {
			if ctx.Err() != nil {
				break
			}
			x.rec.Services = append(x.rec.Services, x.runStart(ctx, s)...)
			_ = results.WriteRun(x.dir, x.rec)
		}
	}
}

// startNeighbour starts the plan's noisy neighbour on the service's CPUs
// (CPU 0 without a placement), for the whole measurement, and says so.
func (x *execution) startNeighbour() *neighbour.Neighbour {
	cpus := cpuSet(x.plan.Placement.ServiceCPUs)
	if len(cpus) == 0 {
		cpus = []int{0}
	}
	o := neighbour.Options{CPUs: cpus, Max: 24 * time.Hour}
	if t := x.plan.Rounds.NeighbourTurns; len(t) == 2 {
		o.MinPeriod, o.MaxPeriod = time.Duration(t[0]), time.Duration(t[1])
	}
	n, err := neighbour.Start(o)
	if err != nil {
		x.warn("no noisy neighbour: %v", err)
		return nil
	}
	x.warn("a noisy neighbour (neighbour: true) hogged CPUs %v at random, half of the time on average, its share drifting between turns %v-%v apart, while the services were measured: these figures measure the method on a disturbed machine, not the stacks", cpus, n.Options().MinPeriod, n.Options().MaxPeriod)
	return n
}

// sayCores says where a plan with cores placed everything, and warns
// where the machine fell short of the placement rule.
func (x *execution) sayCores() {
	p := x.plan
	if len(p.Cores) == 0 {
		return
	}
	cp, err := p.PlaceCores()
	if err != nil {
		x.warn("%v", err) // validation refused it already; a changed machine
		return
	}
	x.say("cores %s: each arm's service on CPUs 0..n-1 (%s at %d), generator on CPUs %s, databases on CPUs %s",
		plan.CoresLabel(p.Cores), p.CoreCPUs(slices.Max(p.Cores)), slices.Max(p.Cores), p.Placement.GeneratorCPUs, p.Placement.DatabaseCPUs)
	for _, n := range cp.Notes {
		x.warn("%s", n)
	}
}

// newResultsDir creates results/<UTC time>-<plan>/, never reusing one.
func newResultsDir(parent, name string, now time.Time) (string, error) {
	base := filepath.Join(parent, now.UTC().Format("20060102T150405Z")+"-"+sanitizeName(name))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	for i := 0; i < 100; i++ {
		dir := base
		if i > 0 {
			dir = fmt.Sprintf("%s-%d", base, i+1)
		}
		if err := os.Mkdir(dir, 0o755); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("cannot create a new results folder next to %s", base)
}

func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == '+' || r == '@' {
			return r
		}
		return '_'
	}, s)
}

func (x *execution) say(format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.progress != nil {
		x.progress.line(fmt.Sprintf(format, args...))
		return
	}
	if x.rn.Progress != nil {
		fmt.Fprintf(x.rn.Progress, format+"\n", args...)
	}
}

func (x *execution) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	x.mu.Lock()
	x.rec.Warnings = append(x.rec.Warnings, msg)
	x.mu.Unlock()
	x.say("warning: %s", msg)
}

// sayWriter turns writes of whole lines into progress lines.
type sayWriter struct{ x *execution }

func (w sayWriter) Write(b []byte) (int, error) {
	w.x.say("%s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// build builds every service the plan uses, once; cached builds are free.
// Builds of one language take turns, as they share a toolchain's local
// store (two Maven processes downloading into one ~/.m2 at once can
// corrupt it); languages build side by side, one per CPU, so that a long
// single-threaded step (rust-axum's link-time optimisation, a JVM's
// training run) leaves the other CPUs to the next build.
func (x *execution) build(ctx context.Context) {
	if err := os.MkdirAll(filepath.Join(x.dir, "builds"), 0o755); err != nil {
		return
	}
	var langs [][]string // service names by language, in plan order
	lane := map[string]int{}
	for _, im := range x.plan.Implementations {
		name := im.Service
		if _, done := x.rec.Builds[name]; done {
			continue
		}
		b := &results.Build{}
		x.rec.Builds[name] = b
		m := x.manifests[name]
		if m == nil {
			b.Error = "no manifest services/" + name + "/showdown.yaml"
			continue
		}
		i, ok := lane[m.Language]
		if !ok {
			i = len(langs)
			lane[m.Language] = i
			langs = append(langs, nil)
		}
		langs[i] = append(langs[i], name)
	}
	work := make(chan []string)
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), len(langs)) {
		wg.Go(func() {
			for names := range work {
				for _, name := range names {
					x.buildOne(ctx, x.manifests[name], x.rec.Builds[name])
				}
			}
		})
	}
	for _, names := range langs {
		work <- names
	}
	close(work)
	wg.Wait()
}

// buildOne builds m into b, its log in builds/<name>.log.
func (x *execution) buildOne(ctx context.Context, m *service.Manifest, b *results.Build) {
	name := m.Name
	logPath := filepath.Join(x.dir, "builds", name+".log")
	f, err := atomicfile.Create(logPath, 0o644)
	if err != nil {
		b.Error = err.Error()
		return
	}
	x.say("building %s", name)
	res, err := m.Build(ctx, f)
	if cerr := f.Commit(); cerr != nil {
		x.warn("%s: %v", logPath, cerr)
	}
	b.Cached, b.Seconds, b.ArtifactBytes = res.Cached, res.Duration.Seconds(), res.ArtifactBytes
	if err != nil {
		b.Error = err.Error()
		b.LogTail = tailFile(logPath, 30)
		x.warn("%s failed to build: %v", name, err)
		return
	}
	if res.Cached {
		x.say("built %s (cached)", name)
	} else {
		x.say("built %s in %.1fs", name, res.Duration.Seconds())
	}
}

func tailFile(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// measureNoise measures the machine's own per-second variation on the
// placement's service and generator CPUs, after the builds and before any
// service starts or the generator is pinned, records it in run.json and
// says so when it is more than the warm-up rule allows a service.
func (x *execution) measureNoise(ctx context.Context) {
	secs := x.rn.NoiseSeconds
	if secs < 0 || ctx.Err() != nil {
		return
	}
	if secs == 0 {
		secs = noise.DefaultSeconds
	}
	pl := x.plan.Placement
	seen := map[int]bool{}
	var cpus []int
	for _, c := range append(cpuSet(pl.ServiceCPUs), cpuSet(pl.GeneratorCPUs)...) {
		if !seen[c] {
			seen[c] = true
			cpus = append(cpus, c)
		}
	}
	sort.Ints(cpus)
	x.say("measuring the machine's own noise on CPUs %v (%d s)", cpus, secs)
	f, err := noise.Measure(ctx, cpus, secs)
	if err != nil {
		x.warn("machine noise not measured: %v", err)
		return
	}
	nf := results.NoiseFloor(f)
	x.rec.Machine.Noise = &nf
	x.say("machine noise: per-second CV %s on CPUs %v", percents(f.CV), cpus)
	if f.Max > stats.DefaultSteadyMaxCV {
		x.warn("this machine's own speed varies %.0f%% from second to second (a memory-bound probe on each of its CPUs at once, nothing else running); "+
			"the warm-up rule holds services to that instead of %.0f%%, and single-trial differences of that order are within the machine's noise (plans/README.md)",
			f.Max*100, stats.DefaultSteadyMaxCV*100)
	}
}

// percents formats fractions as whole percents: "7%, 18%".
func percents(v []float64) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = fmt.Sprintf("%.0f%%", f*100)
	}
	return strings.Join(parts, ", ")
}
