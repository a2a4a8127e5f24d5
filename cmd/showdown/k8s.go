package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/images"
	"github.com/showdownlab/showdown/internal/k8s"
	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/report"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/warmup"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/load/atomicfile"
	"github.com/showdownlab/showdown/workloads"
)

func init() {
	register(&command{
		name:    "k8s",
		summary: "run a plan on Kubernetes: render its manifests, or run it with client-go",
		run:     runK8s,
	})
}

// k8sCommands are the subcommands of k8s; all but the first two run
// inside the cluster's pods.
var k8sCommands = []struct {
	name, summary string
	run           func(st *state, args []string) error
}{
	{"render", "print the manifests of a plan, ready for kubectl apply -f -", runK8sRender},
	{"run", "run a plan on a cluster and write its results folder and report", runK8sRun},
	{"shard", "(in a generator pod) run shard INDEX+1 of an attack at the start instant", runK8sShard},
	{"sampler", "(beside a service) sample the service's process tree every second", runK8sSampler},
	{"initdb", "(in a database pod) write the schema and data files the image loads", runK8sInitDB},
	{"pack", "(in a pod) write a results folder as a tar stream to stdout", runK8sPack},
	{"audit", "(in a pod) check a workload's invariants in the database its services use", runK8sAudit},
	{"warmup", "(in a pod) warm a service up until the steady-state rule holds", runK8sWarmup},
}

func runK8s(st *state, args []string) error {
	if len(args) > 0 {
		for _, c := range k8sCommands {
			if c.name == args[0] {
				return c.run(st, args[1:])
			}
		}
	}
	var b strings.Builder
	b.WriteString("Usage: showdown k8s <command> [flags]\n\nCommands:\n")
	for _, c := range k8sCommands {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(st.stderr, b.String())
	if len(args) == 0 {
		return usageError{err: errors.New("k8s: which command?"), hint: "showdown k8s render PLAN | kubectl apply -f -"}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return errHelp
	}
	return usageError{err: fmt.Errorf("unknown k8s command %q", args[0]), hint: "showdown k8s render plans/default.yaml | kubectl apply -f -"}
}

// loadPlanFile reads and validates a plan against the services under the
// repository root, printing every problem.
func loadPlanFile(st *state, path string) (*plan.Plan, error) {
	cwd, _ := os.Getwd()
	root, err := service.FindRoot(cwd)
	if err != nil {
		return nil, err
	}
	ms, err := service.Discover(root)
	if err != nil {
		return nil, err
	}
	catalog := plan.Catalog{}
	for _, m := range ms {
		catalog[m.Name] = m.Workloads
	}
	p, err := plan.LoadPlan(path, catalog)
	if err != nil {
		var list plan.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				fmt.Fprintln(st.stderr, e.Error())
			}
			return nil, usageError{err: fmt.Errorf("%s: %d problem(s)", path, len(list)), hint: "plans/README.md describes every field"}
		}
		return nil, err
	}
	return p, nil
}

// renderFlags are the flags render and run share.
type renderFlags struct {
	namespace, registry, tag string
}

func (f *renderFlags) define(st *state, name, synopsis string) *flag.FlagSet {
	fs := newFlagSet(st, "k8s "+name, synopsis)
	fs.StringVar(&f.namespace, "namespace", "", "the run's `namespace` (default showdown-PLAN-RUNID)")
	fs.StringVar(&f.registry, "registry", k8s.DefaultRegistry, "images are `REGISTRY`/NAME:TAG, as 'showdown images build --push' named them")
	fs.StringVar(&f.tag, "tag", k8s.DefaultTag, "image `tag`")
	return fs
}

func runK8sRender(st *state, args []string) error {
	var f renderFlags
	fs := f.define(st, "render", "PLAN [flags]\n\nPrints the manifests of PLAN: a namespace, the databases, each implementation at each\nreplica count, and a generator Job per level, each starting at its own instant.")
	startAt := fs.String("start", "", "first level's start `instant` (RFC 3339; default: the next minute plus one)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{err: errors.New("one plan expected"), hint: "showdown k8s render plans/api-showdown.yaml | kubectl apply -f -"}
	}
	o := k8s.Options{Namespace: f.namespace, Registry: f.registry, Tag: f.tag}
	if *startAt != "" {
		if o.Start, err = time.Parse(time.RFC3339, *startAt); err != nil {
			return usageError{err: fmt.Errorf("--start: %w", err), hint: "e.g. --start 2026-11-23T08:00:00Z"}
		}
	}
	p, err := loadPlanFile(st, pos[0])
	if err != nil {
		return err
	}
	m, err := k8s.Render(p, o)
	if err != nil {
		return err
	}
	return k8s.WriteYAML(st.stdout, m.Objects())
}

func runK8sShard(st *state, args []string) error {
	fs := newFlagSet(st, "k8s shard", "--count N [flags] -- ATTACK FLAGS\n\nRuns 'showdown attack --shard i/N' with i = INDEX+1 (Kubernetes' completion index is\n0-based, shards are 1-based), starting at --start-at, then keeps its results until collected.")
	count := fs.Int("count", 0, "number of shards `N` (required)")
	index := fs.Int("index", -1, "0-based `index` (default: $JOB_COMPLETION_INDEX)")
	startAt := fs.String("start-at", "", "RFC 3339 `instant` every shard starts at")
	out := fs.String("out", k8s.ResultsDir, "write results to `dir`/shard-i")
	hold := fs.Duration("hold", k8s.DefaultHold, "keep the results this `long` for the controller to copy")
	skuRows := fs.Int("sku-rows", 0, "sku workload: the rows the database holds, from which the known sku_ids follow")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var errs []error
	if *index < 0 {
		v := st.getenv("JOB_COMPLETION_INDEX")
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("--index not given and JOB_COMPLETION_INDEX is %q", v))
		}
		*index = n
	}
	if *count < 1 || *index >= *count {
		errs = append(errs, fmt.Errorf("--count %d and index %d: want 0 <= index < count", *count, *index))
	}
	var start time.Time
	if *startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, *startAt)
		if err != nil {
			errs = append(errs, fmt.Errorf("--start-at: %w", err))
		}
		start = t
	}
	if len(errs) > 0 {
		return usageError{err: errors.Join(errs...), hint: "showdown k8s shard --count 4 --index 0 --start-at 2026-11-23T08:00:00Z -- --rate 1000 --duration 10s URL"}
	}
	shard := fmt.Sprintf("%d/%d", *index+1, *count)
	dir := filepath.Join(*out, "shard-"+strconv.Itoa(*index+1))
	afs := newFlagSet(st, "attack", attackSynopsis)
	var af attackFlags
	af.define(afs)
	apos, err := parseInterspersed(afs, append(fs.Args(), "--shard", shard, "--out", dir))
	if err != nil {
		return err
	}
	p, err := af.plan(apos)
	if err != nil {
		return err
	}
	p.record = map[string]string{"shard": shard, "start-at": *startAt}
	if err := skuScenario(&af, p, *skuRows); err != nil {
		return err
	}
	if !start.IsZero() {
		wait := time.Until(start)
		fmt.Fprintf(st.stderr, "shard %s: starting at %s (in %s)\n", shard, start.UTC().Format(time.RFC3339Nano), wait.Round(time.Millisecond))
		select {
		case <-time.After(wait):
		case <-st.ctx.Done():
			return exitError{code: exitInterrupted, err: errors.New("interrupted before the start instant")}
		}
	}
	aerr := attack(st, p)
	verdict := "ok\n"
	if aerr != nil {
		verdict = aerr.Error() + "\n"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, k8s.DoneFile), []byte(verdict), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(st.stderr, "shard %s: done (%s), holding %s for collection\n", shard, strings.TrimSpace(verdict), dir)
	if *hold > 0 && !k8s.Hold(st.ctx, dir, *hold) {
		fmt.Fprintf(st.stderr, "shard %s: not collected within %s\n", shard, *hold)
	}
	return aerr
}

// skuScenario loads the sku scenario with the ids the database holds,
// which follow from the seed and the row count (skuRows > 0).
func skuScenario(af *attackFlags, p *attackPlan, skuRows int) error {
	if skuRows <= 0 || af.scenario == "" {
		return nil
	}
	ids := db.KnownSKUIDs(af.seed, skuRows, db.DefaultKnownSKUs)
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = strconv.FormatInt(id, 10)
	}
	sc, err := scenario.Load(af.scenario, scenario.Options{BaseURL: af.baseURL, Seed: af.seed, Lists: map[string][]string{"sku_ids": list}})
	if err != nil {
		return err
	}
	p.sc = load.StatusChecked(sc)
	return nil
}

func runK8sWarmup(st *state, args []string) error {
	fs := newFlagSet(st, "k8s warmup", "--max D [--auto] [flags] -- ATTACK FLAGS\n\nDrives the attack's load for at most --max and, with --auto, stops as soon as the\nlocal lab's steady-state rule holds; writes the warm-up's record to --out/warmup.json\nand keeps it until collected.")
	maxD := fs.Duration("max", 0, "the warm-up's longest `time` (required)")
	auto := fs.Bool("auto", false, "stop once the steady-state rule holds (warmup: auto)")
	out := fs.String("out", k8s.ResultsDir+"/"+k8s.WarmupDir, "write warmup.json to `dir`")
	hold := fs.Duration("hold", k8s.DefaultHold, "keep the record this `long` for the controller to copy")
	skuRows := fs.Int("sku-rows", 0, "sku workload: the rows the database holds")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *maxD <= 0 {
		return usageError{err: errors.New("--max is required"), hint: "showdown k8s warmup --max 3m --auto -- --rate 500 --duration 3m URL"}
	}
	afs := newFlagSet(st, "attack", attackSynopsis)
	var af attackFlags
	af.define(afs)
	apos, err := parseInterspersed(afs, append(fs.Args(), "--duration", maxD.String()))
	if err != nil {
		return err
	}
	p, err := af.plan(apos)
	if err != nil {
		return err
	}
	if err := skuScenario(&af, p, *skuRows); err != nil {
		return err
	}
	_, open := p.model.(load.OpenModel)
	watch := warmup.NewWatch(plan.Warmup{Auto: *auto, Max: plan.Duration(*maxD), Time: plan.Duration(*maxD)}, open)
	ctx, stop := context.WithCancel(st.ctx)
	defer stop()
	var mu sync.Mutex
	opts := append(append([]load.Option(nil), p.opts...), load.OnProgress(func(pr load.Progress) {
		if pr.Warmup || pr.Elapsed == 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if watch.Observe(pr.Rate, pr.IntervalP50) {
			stop()
		}
	}))
	res, aerr := load.NewAttacker(opts...).Attack(ctx, p.sc, p.model)
	mu.Lock()
	defer mu.Unlock()
	if res != nil {
		watch.Finish(res.Summary.Total.Samples, res.Summary.DurationSeconds)
	}
	if aerr != nil && st.ctx.Err() == nil && ctx.Err() != nil {
		aerr = nil // stopped by the rule
	}
	if err := results.WriteWarmup(*out, watch.Record); err != nil {
		return err
	}
	verdict := "ok\n"
	if aerr != nil {
		verdict = aerr.Error() + "\n"
	}
	if err := atomicfile.WriteFile(filepath.Join(*out, k8s.DoneFile), []byte(verdict), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(st.stderr, "warm-up: %.1f s, %d requests, steady %v; holding %s for collection\n", watch.Record.Seconds, watch.Record.Requests, watch.Record.Steady, *out)
	if *hold > 0 && !k8s.Hold(st.ctx, *out, *hold) {
		fmt.Fprintf(st.stderr, "warm-up: not collected within %s\n", *hold)
	}
	return aerr
}

func runK8sSampler(st *state, args []string) error {
	fs := newFlagSet(st, "k8s sampler", "[flags]\n\nSamples the service's process tree (found in the pod's shared process namespace) to CSV.")
	out := fs.String("out", k8s.SamplesDir+"/samples.csv", "CSV `file` to write")
	interval := fs.Duration("interval", monitor.DefaultInterval, "time between samples")
	procDir := fs.String("proc", "/proc", "the proc file system's `dir`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	defer f.Close()
	cw, err := monitor.NewCSVWriter(f)
	if err != nil {
		return err
	}
	self := os.Getpid()
	// The service may start after the sampler or restart (a crash): find
	// it again each time, bounded by the pod's life (the context).
	for st.ctx.Err() == nil {
		pid, err := k8s.ServicePID(*procDir, self)
		if err != nil {
			select {
			case <-time.After(time.Second):
			case <-st.ctx.Done():
			}
			continue
		}
		fmt.Fprintf(st.stderr, "sampler: sampling pid %d\n", pid)
		var werr error
		err = monitor.Run(st.ctx, pid, *interval, func(s monitor.Sample) {
			if werr == nil {
				werr = cw.Write(s)
			}
		})
		if werr != nil {
			return werr
		}
		if err != nil && !errors.Is(err, monitor.ErrGone) && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return nil
}

func runK8sInitDB(st *state, args []string) error {
	fs := newFlagSet(st, "k8s initdb", "--engine postgres|mysql --workloads W,... --out DIR")
	engine := fs.String("engine", "", "postgres or mysql")
	ws := fs.String("workloads", "", "comma-separated workloads")
	out := fs.String("out", "/initdb", "write the files to `dir`")
	seed := fs.Int64("seed", 1, "seed of the generated sku rows")
	skuRows := fs.Int("sku-rows", db.DefaultSKURows, "rows of the sku table")
	skuIndex := fs.Bool("sku-index", true, "create the index on sku_id")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *engine != "postgres" && *engine != "mysql" {
		return usageError{err: fmt.Errorf("--engine %q: want postgres or mysql", *engine)}
	}
	var list []string
	if *ws != "" {
		list = strings.Split(*ws, ",")
	}
	if err := k8s.WriteInitDB(*out, *engine, list, *seed, *skuRows, *skuIndex); err != nil {
		return err
	}
	fmt.Fprintf(st.stderr, "initdb: wrote %s's files for %s to %s\n", *engine, *ws, *out)
	return nil
}

func runK8sPack(st *state, args []string) error {
	fs := newFlagSet(st, "k8s pack", "DIR [--done] [--release]")
	done := fs.Bool("done", false, "fail unless the shard in DIR has finished")
	release := fs.Bool("release", false, "mark DIR collected afterwards, which lets its shard exit")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{err: errors.New("one folder expected")}
	}
	if *done {
		if _, err := os.Stat(filepath.Join(pos[0], k8s.DoneFile)); err != nil {
			return exitError{code: exitNotFinished, err: fmt.Errorf("%s: not finished yet", pos[0])}
		}
	}
	if err := k8s.Pack(st.stdout, pos[0]); err != nil {
		return err
	}
	if *release {
		return atomicfile.WriteFile(filepath.Join(pos[0], k8s.CollectedFile), nil, 0o644)
	}
	return nil
}

func runK8sRun(st *state, args []string) error {
	var f renderFlags
	fs := f.define(st, "run", "PLAN [flags]\n\nApplies the manifests of PLAN to a cluster with client-go, waits for readiness, runs every\nlevel, copies every shard's and sampler's files, merges them and writes the results folder\nand report.html. Ctrl-C (and the end, unless --keep) deletes the run's namespace.")
	kubeContext := fs.String("context", "", "kubeconfig `context` (default: the current one)")
	keep := fs.Bool("keep", false, "leave the namespace and its objects in place")
	results := fs.String("results", "results", "parent `dir` of the results folder")
	imagesFile := fs.String("images", filepath.Join("bin", "images.json"), "the images' sizes as 'showdown images build' recorded them (`file`; skipped if missing)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{err: errors.New("one plan expected"), hint: "showdown k8s run plans/api-showdown.yaml --context kind-showdown"}
	}
	p, err := loadPlanFile(st, pos[0])
	if err != nil {
		return err
	}
	m, err := k8s.Render(p, k8s.Options{Namespace: f.namespace, Registry: f.registry, Tag: f.tag})
	if err != nil {
		return err
	}
	cs, ex, ctxName, err := k8s.Connect(*kubeContext)
	if err != nil {
		return err
	}
	dir := filepath.Join(*results, time.Now().UTC().Format("20060102T150405Z")+"-k8s-"+p.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	imgs, err := readImages(*imagesFile)
	if err != nil {
		return err
	}
	c := &k8s.Controller{Client: cs, Exec: ex, Progress: st.stderr, Keep: *keep, Images: imgs,
		Command: "showdown k8s run " + strings.Join(args, " "), Context: ctxName}
	_, _, err = c.Run(st.ctx, p, m, dir)
	if paths, rerr := report.WriteFiles(dir, dir); rerr != nil {
		fmt.Fprintf(st.stderr, "showdown: report: %v\n", rerr)
	} else {
		for _, p := range paths {
			fmt.Fprintf(st.stdout, "report:  %s\n", p)
		}
	}
	fmt.Fprintf(st.stdout, "results: %s\n", dir)
	if st.ctx.Err() != nil {
		return exitError{code: exitInterrupted, err: errors.New("interrupted; the namespace was deleted unless --keep")}
	}
	return err
}

// readImages reads the sizes 'showdown images build' recorded, by image
// name; a missing file means no sizes (the images were built elsewhere).
func readImages(path string) (map[string]k8s.Image, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list []images.Image
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, usageError{err: fmt.Errorf("%s: %w", path, err), hint: "showdown images build writes it; --images '' skips it"}
	}
	out := map[string]k8s.Image{}
	for _, img := range list {
		out[img.Name] = k8s.Image{Ref: img.Ref, Bytes: img.Bytes, ArtifactBytes: img.ArtifactBytes}
	}
	return out, nil
}

func runK8sAudit(st *state, args []string) error {
	fs := newFlagSet(st, "k8s audit", "--workload W [--url URL]\n\nChecks the workload's invariants (workloads/W/audit.sql) in the database at URL\n(default: $DATABASE_URL for PostgreSQL workloads, $MYSQL_URL for MariaDB ones).")
	workload := fs.String("workload", "", "the `workload` whose invariants to check")
	dbURL := fs.String("url", "", "the database's `URL` (default from the environment)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !slices.Contains(workloads.Names, *workload) {
		return usageError{err: fmt.Errorf("--workload %q: want one of %s", *workload, strings.Join(workloads.Names, ", "))}
	}
	if *dbURL == "" {
		switch workloads.Database(*workload) {
		case workloads.Postgres:
			*dbURL = st.getenv("DATABASE_URL")
		case workloads.MySQL:
			*dbURL = st.getenv("MYSQL_URL")
		default:
			fmt.Fprintf(st.stdout, "audit: %s has no database\n", *workload)
			return nil
		}
	}
	if *dbURL == "" {
		return usageError{err: errors.New("no database URL: pass --url or set DATABASE_URL / MYSQL_URL")}
	}
	vs, err := db.AuditURL(st.ctx, *workload, *dbURL, -1, -1)
	if err != nil {
		return err
	}
	for _, v := range vs {
		fmt.Fprintf(st.stdout, "FAIL %s/%s: %s\n", *workload, v.Check, v.Detail)
	}
	if len(vs) > 0 {
		return exitError{code: exitCheckFailed, err: fmt.Errorf("audit of %s: %d invariant(s) broken", *workload, len(vs))}
	}
	fmt.Fprintf(st.stdout, "audit: %s's invariants hold\n", *workload)
	return nil
}
