package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/capacity"
	"github.com/showdownlab/showdown/internal/machine"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/rounds"
	"github.com/showdownlab/showdown/internal/sequential"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/internal/warmup"
	"github.com/showdownlab/showdown/internal/wording"
)

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
	if err := rn.Steps.check(p, rn.NoiseSeconds >= 0); err != nil {
		return "", nil, err
	}
	dir, err := newResultsDir(parent, p.Name, time.Now())
	if err != nil {
		return "", nil, err
	}
	x := &execution{rn: rn, plan: p, dir: dir, manifests: map[string]*service.Manifest{}}
	x.rec = &results.Run{Version: 1, Command: rn.Command, Plan: p, Start: time.Now().UTC(),
		Placement: p.Placement, Builds: map[string]*results.Build{}}
	x.Say("results: %s", dir)
	x.rec.Machine = DescribeMachine(rn.Root)
	x.sayCores()
	defer func() {
		x.rec.End = time.Now().UTC()
		if ctx.Err() != nil {
			x.rec.Interrupted = true
		}
		_ = results.WriteRun(dir, x.rec)
	}()
	ms, err := stack.Discover(rn.Root, p)
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
		if err := machine.PinTree(os.Getpid(), cpus); err != nil {
			x.Warn("generator not pinned to CPUs %s: %v", cpus, err)
		}
		x.sizeGenerator(cpus)
	}
	if p.SLO != nil || p.AtRate != nil {
		x.measureHostFloor(ctx)
	}
	x.progress = newProgress(rn.Progress, rn.TTY, p)
	defer x.progress.close()
	if p.Rounds.Neighbour {
		if stop := x.startNeighbour(); stop != nil {
			defer stop()
		}
	}
	w, why := wayOf(p)
	if why != "" {
		x.Say("measured one start after another, not in interleaved rounds: %s", why)
	}
	switch w {
	case byCapacity:
		capacity.Run(ctx, x)
	case inRounds:
		rounds.Run(ctx, x)
	default:
		sequential.Run(ctx, x)
	}
	if p.Faults != nil && ctx.Err() == nil {
		rn.Steps.Faults(ctx, p, dir, x.rec, x.manifests, func(s string) { x.Say("%s", s) }, func(s string) { x.Warn("%s", s) })
	}
	return dir, x.rec, ctx.Err()
}

// way is a way of measuring a plan, each a package of its own.
type way int

const (
	oneAfterAnother way = iota // internal/sequential
	inRounds                   // internal/rounds
	byCapacity                 // internal/capacity
)

// wayOf is the way of measuring a plan asks for, and why a plan of
// several arms is not measured in rounds ("" when it is, or has one
// arm): an objective asks for its capacity, arms that can be kept warm
// together for interleaved rounds, and the others are started one after
// another.
func wayOf(p *plan.Plan) (way, string) {
	ok, why := p.Interleaved()
	switch {
	case p.SLO != nil:
		return byCapacity, ""
	case ok:
		return inRounds, ""
	case len(p.Arms()) > 1:
		return oneAfterAnother, why
	}
	return oneAfterAnother, ""
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
		x.Warn("the generator runs on at most %d of its %d CPUs (%s) at once: GOMAXPROCS is %d", n, c, cpus, n)
	}
}

// startNeighbour starts the plan's noisy neighbour on the service's CPUs
// (CPU 0 without a placement), for the whole measurement, says so, and
// returns how to stop it (nil: none started).
func (x *execution) startNeighbour() func() {
	cpus := cpuSet(x.plan.Placement.ServiceCPUs)
	if len(cpus) == 0 {
		cpus = []int{0}
	}
	var turns []time.Duration
	for _, t := range x.plan.Rounds.NeighbourTurns {
		turns = append(turns, time.Duration(t))
	}
	stop, span, err := x.rn.Steps.Neighbour(cpus, turns)
	if err != nil {
		x.Warn("no noisy neighbour: %v", err)
		return nil
	}
	x.Warn("a noisy neighbour (neighbour: true) hogged CPUs %v at random, half of the time on average, its share drifting between turns %s apart, while the services were measured: these figures measure the method on a disturbed machine, not the stacks", cpus, span)
	return stop
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
		x.Warn("%v", err) // validation refused it already; a changed machine
		return
	}
	x.Say("cores %s: each arm's service on CPUs 0..n-1 (%s at %d), generator on CPUs %s, databases on CPUs %s",
		plan.CoresLabel(p.Cores), p.CoreCPUs(slices.Max(p.Cores)), slices.Max(p.Cores), p.Placement.GeneratorCPUs, p.Placement.DatabaseCPUs)
	for _, n := range cp.Notes {
		x.Warn("%s", n)
	}
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
	x.Say("measuring the machine's own noise on CPUs %v", cpus)
	f, err := x.rn.Steps.Noise(ctx, cpus, secs)
	if err != nil {
		x.Warn("machine noise not measured: %v", err)
		return
	}
	x.rec.Machine.Noise = &f
	x.Say("machine noise: per-second CV %s on CPUs %v (%d s)", percents(f.CV), cpus, f.Seconds)
	if f.Max > warmup.SteadyMaxCV {
		x.Warn("this machine's own speed varies %.0f%% from second to second (a memory-bound probe on each of its CPUs at once, nothing else running); "+
			"a JIT runtime's warm-up needs a longer window to rule out a remaining rise, and single-trial differences of that order are within the machine's noise (plans/README.md)",
			f.Max*100)
	}
}

// measureHostFloor measures this host's own latency floor with the
// pinned generator against a trivial server on the service's first CPU,
// before a capacity search, and records it in run.json: the search
// judges the generator's lateness against it, and every capacity names
// it.
func (x *execution) measureHostFloor(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	cpu := -1
	if cs := cpuSet(x.plan.Placement.ServiceCPUs); len(cs) > 0 {
		cpu = cs[0]
	}
	f, err := x.rn.Steps.HostFloor(ctx, x.Attacker(nil), cpu)
	if err != nil {
		x.Warn("this host's own latency floor not measured: %v", err)
		return
	}
	x.rec.Machine.HostFloor = &f
	x.Say("%s", wording.HostFloor(&f))
}

// percents formats fractions as whole percents: "7%, 18%".
func percents(v []float64) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = fmt.Sprintf("%.0f%%", f*100)
	}
	return strings.Join(parts, ", ")
}
