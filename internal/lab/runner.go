package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/showdownlab/showdown/internal/cgroup"
	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/workloads"
)

// Timeouts of the runner's own steps.
const (
	// StartTimeout bounds a service's start, to its first healthy answer.
	StartTimeout = 120 * time.Second
	// StopTimeout is how long a service may take to exit after SIGTERM.
	StopTimeout = 15 * time.Second
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
}

// run is the state of one plan run.
type run struct {
	rn        *Runner
	plan      *Plan
	dir       string
	rec       *Run
	manifests map[string]*service.Manifest
	servers   db.Servers
	known     []int64
	progress  *progress
}

// Run executes p and returns the results folder and its record. A failure
// of one implementation is recorded and the plan goes on; Run returns an
// error only when nothing useful can be measured (no results folder, no
// database). When ctx is cancelled it stops everything it started, writes
// what was measured and returns ctx's error.
func (rn *Runner) Run(ctx context.Context, p *Plan) (string, *Run, error) {
	resultsDir := rn.ResultsDir
	if resultsDir == "" {
		resultsDir = filepath.Join(rn.Root, "results")
	}
	dir, err := newResultsDir(resultsDir, p.Name, time.Now())
	if err != nil {
		return "", nil, err
	}
	r := &run{rn: rn, plan: p, dir: dir, manifests: map[string]*service.Manifest{}}
	r.rec = &Run{Version: 1, Command: rn.Command, Plan: p, Start: time.Now().UTC(),
		Placement: p.Placement, Builds: map[string]*Build{}}
	r.say("results: %s", dir)
	r.rec.Machine = DescribeMachine(rn.Root)
	defer func() {
		r.rec.End = time.Now().UTC()
		if ctx.Err() != nil {
			r.rec.Interrupted = true
		}
		_ = WriteRun(dir, r.rec)
	}()
	ms, err := service.Discover(rn.Root)
	if err != nil {
		return dir, r.rec, err
	}
	for _, m := range ms {
		r.manifests[m.Name] = m
	}
	r.build(ctx)
	if err := r.startDatabases(ctx); err != nil {
		return dir, r.rec, err
	}
	defer r.stopDatabases()
	// The generator is this process: pin it now, after the builds, which
	// should have every CPU.
	if cpus := p.Placement.GeneratorCPUs; cpus != "" {
		if err := pinTree(os.Getpid(), cpus); err != nil {
			r.warn("generator not pinned to CPUs %s: %v", cpus, err)
		}
	}
	r.progress = newProgress(rn.Progress, rn.TTY, p)
	defer r.progress.close()
	for trial := 1; trial <= p.Trials && ctx.Err() == nil; trial++ {
		for _, w := range p.Workloads {
			// Interleave implementations and rotate their order every
			// trial, so a drift of the machine favours none of them.
			order := rotate(p.Implementations, trial-1)
			for _, im := range order {
				if ctx.Err() != nil {
					break
				}
				sr := r.serviceRun(ctx, im, w, trial)
				r.rec.Services = append(r.rec.Services, sr)
				_ = WriteRun(dir, r.rec)
			}
		}
	}
	return dir, r.rec, ctx.Err()
}

func rotate(ims []Implementation, k int) []Implementation {
	if len(ims) == 0 {
		return nil
	}
	k %= len(ims)
	return append(append([]Implementation(nil), ims[k:]...), ims[:k]...)
}

// newResultsDir creates results/<UTC time>-<plan>/, never reusing one.
func newResultsDir(parent, plan string, now time.Time) (string, error) {
	base := filepath.Join(parent, now.UTC().Format("20060102T150405Z")+"-"+sanitizeName(plan))
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
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == '+' {
			return r
		}
		return '_'
	}, s)
}

func (r *run) say(format string, args ...any) {
	if r.progress != nil {
		r.progress.line(fmt.Sprintf(format, args...))
		return
	}
	if r.rn.Progress != nil {
		fmt.Fprintf(r.rn.Progress, format+"\n", args...)
	}
}

func (r *run) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.rec.Warnings = append(r.rec.Warnings, msg)
	r.say("warning: %s", msg)
}

// build builds every service the plan uses, once; cached builds are free.
func (r *run) build(ctx context.Context) {
	if err := os.MkdirAll(filepath.Join(r.dir, "builds"), 0o755); err != nil {
		return
	}
	for _, im := range r.plan.Implementations {
		name := im.Service
		if _, done := r.rec.Builds[name]; done {
			continue
		}
		b := &Build{}
		r.rec.Builds[name] = b
		m := r.manifests[name]
		if m == nil {
			b.Error = "no manifest services/" + name + "/showdown.yaml"
			continue
		}
		logPath := filepath.Join(r.dir, "builds", name+".log")
		f, err := os.Create(logPath)
		if err != nil {
			b.Error = err.Error()
			continue
		}
		r.say("building %s", name)
		res, err := m.Build(ctx, f)
		f.Close()
		b.Cached, b.Seconds, b.ArtifactBytes = res.Cached, res.Duration.Seconds(), res.ArtifactBytes
		if err != nil {
			b.Error = err.Error()
			b.LogTail = tailFile(logPath, 30)
			r.warn("%s failed to build: %v", name, err)
			continue
		}
		if res.Cached {
			r.say("built %s (cached)", name)
		} else {
			r.say("built %s in %.1fs", name, res.Duration.Seconds())
		}
	}
}

func (r *run) startDatabases(ctx context.Context) error {
	p := r.plan
	info := &r.rec.Databases
	info.MaxConnections, info.Seed, info.SKUIndex = p.Database.MaxConnections, p.Database.Seed, *p.Database.SKUIndex
	for _, w := range p.Workloads {
		switch workloads.Database(w.Name) {
		case "postgres":
			info.Postgres = true
		case "mysql":
			info.MariaDB = true
			info.SKURows = p.Database.SKURows
		}
	}
	logDir := filepath.Join(r.dir, "databases")
	if info.Postgres || info.MariaDB {
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return err
		}
	}
	if info.Postgres {
		r.say("starting PostgreSQL (max_connections %d)", p.Database.MaxConnections)
		f, err := os.Create(filepath.Join(logDir, "postgres.log"))
		if err != nil {
			return err
		}
		pg, err := db.StartPostgres(ctx, db.WithMaxConnections(p.Database.MaxConnections), db.WithLog(f))
		if err != nil {
			return fmt.Errorf("start PostgreSQL: %w", err)
		}
		r.servers.Postgres = pg
		r.pinDatabase(pg.PID())
	}
	if info.MariaDB {
		r.say("starting MariaDB")
		f, err := os.Create(filepath.Join(logDir, "mariadb.log"))
		if err != nil {
			return err
		}
		my, err := db.StartMariaDB(ctx, db.WithMaxConnections(p.Database.MaxConnections), db.WithLog(f))
		if err != nil {
			return fmt.Errorf("start MariaDB: %w", err)
		}
		r.servers.MariaDB = my
		r.pinDatabase(my.PID())
	}
	start := time.Now()
	for _, w := range p.Workloads {
		if workloads.Database(w.Name) == "" {
			continue
		}
		if w.Name == "sku" {
			r.say("loading %d sku rows (seed %d)", p.Database.SKURows, p.Database.Seed)
		}
		prep, err := db.Prepare(ctx, w.Name, r.servers, db.PrepareOptions{
			SKURows: p.Database.SKURows, Seed: p.Database.Seed, NoSKUIndex: !*p.Database.SKUIndex,
		})
		if err != nil {
			return fmt.Errorf("prepare %s: %w", w.Name, err)
		}
		if w.Name == "sku" {
			r.known = prep.KnownSKUs
			info.KnownSKUs = prep.KnownSKUs
		}
	}
	info.PrepareSeconds = time.Since(start).Seconds()
	return nil
}

func (r *run) pinDatabase(pid int) {
	if cpus := r.plan.Placement.DatabaseCPUs; cpus != "" {
		if err := pinTree(pid, cpus); err != nil {
			r.warn("database not pinned to CPUs %s: %v", cpus, err)
		}
	}
}

func (r *run) stopDatabases() {
	if r.servers.Postgres != nil {
		_ = r.servers.Postgres.Stop()
	}
	if r.servers.MariaDB != nil {
		_ = r.servers.MariaDB.Stop()
	}
}

// dbPID is the pid of the database server a workload uses, or 0.
func (r *run) dbPID(workload string) int {
	switch workloads.Database(workload) {
	case "postgres":
		if r.servers.Postgres != nil {
			return r.servers.Postgres.PID()
		}
	case "mysql":
		if r.servers.MariaDB != nil {
			return r.servers.MariaDB.PID()
		}
	}
	return 0
}

// serviceRun starts one implementation for one workload and runs every
// level against it.
func (r *run) serviceRun(ctx context.Context, im Implementation, w Workload, trial int) *ServiceRun {
	p := r.plan
	sr := &ServiceRun{Implementation: im.ID(), Service: im.Service, Variant: im.Variant, Workload: w.Name,
		Trial: trial, Status: "ok", Dir: filepath.Join("runs", w.Name, sanitizeName(im.ID()), fmt.Sprintf("trial-%d", trial))}
	for _, l := range p.Load.Levels {
		sr.Levels = append(sr.Levels, &LevelRun{Level: l, Status: "skipped",
			Dir: filepath.Join(sr.Dir, fmt.Sprintf("level-%d", l))})
	}
	fail := func(format string, args ...any) *ServiceRun {
		sr.Status = "failed"
		sr.Reason = fmt.Sprintf(format, args...)
		r.say("%s on %s, trial %d: FAILED: %s", im.ID(), w.Name, trial, sr.Reason)
		r.progress.skip(len(sr.Levels))
		return sr
	}
	abs := filepath.Join(r.dir, sr.Dir)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fail("%v", err)
	}
	m := r.manifests[im.Service]
	if b := r.rec.Builds[im.Service]; m == nil || b == nil || b.Error != "" {
		if b != nil {
			sr.LogTail = b.LogTail
			return fail("build failed: %s", b.Error)
		}
		return fail("no such service")
	}
	sr.ArtifactBytes = r.rec.Builds[im.Service].ArtifactBytes

	// Database policy before the service starts.
	if workloads.Database(w.Name) != "" {
		if p.Database.Restart == "trial" {
			if err := r.restartDatabase(ctx, w.Name); err != nil {
				return fail("restart database: %v", err)
			}
		}
		if p.Database.Reset != "never" {
			if err := db.Reset(ctx, w.Name, r.servers); err != nil {
				return fail("reset database: %v", err)
			}
		}
	}

	grp, err := cgroup.New(im.ID(), cgroup.Limits{CPUs: p.Placement.ServiceCPUs, CPUQuota: p.Limits.CPU, MemoryBytes: int64(p.Limits.Memory)})
	if err != nil {
		return fail("limits: %v", err)
	}
	defer grp.Remove()
	r.rec.Limits = grp.Applied()
	wrapped := *m
	wrapped.Run = grp.Wrap(m.Run)

	logPath := filepath.Join(abs, "service.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return fail("%v", err)
	}
	defer logf.Close()
	env := map[string]string{}
	for k, v := range p.Env {
		env[k] = v
	}
	for k, v := range im.Env {
		env[k] = v
	}
	if r.servers.Postgres != nil {
		env["DATABASE_URL"] = r.servers.Postgres.URL()
	}
	if r.servers.MariaDB != nil {
		env["MYSQL_URL"] = r.servers.MariaDB.URL()
	}
	r.progress.service(im.ID(), w.Name, trial)
	inst, err := service.Start(ctx, &wrapped, service.StartOptions{Env: env, Log: logf})
	if err != nil {
		return fail("start: %v", err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = inst.Stop(StopTimeout)
		wctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if code, err := inst.Wait(wctx); err == nil {
			sr.ExitCode = code
		}
	}
	defer func() {
		stop()
		if sr.Status != "ok" && sr.LogTail == "" {
			sr.LogTail = tailFile(logPath, 40)
		}
	}()
	startup, err := inst.WaitHealthy(ctx, StartTimeout)
	if err != nil {
		return fail("not healthy: %v", err)
	}
	sr.StartupSeconds = startup.Seconds()
	sr.RSSIdleBytes = rssOf(inst.PID())

	sc, err := r.scenario(ctx, w, inst.URL())
	if err != nil {
		return fail("scenario: %v", err)
	}
	// A quick contract check: one iteration of the scenario, which asserts
	// every response. The full suite is `showdown verify`.
	res, err := r.attacker(nil).Attack(ctx, load.StatusChecked(sc), load.ClosedModel{Users: 1, Iterations: 1})
	if err != nil {
		return fail("contract check: %v", err)
	}
	if row, _ := res.Row(""); row.Errors > 0 || row.Samples == 0 {
		return fail("contract check: %s", reasons(row))
	}
	if wu := time.Duration(p.Load.Warmup); wu > 0 && ctx.Err() == nil {
		r.progress.phase("warm-up", wu)
		if _, err := r.attacker(r.progress.onProgress).Attack(ctx, load.StatusChecked(sc), r.model(p.Load.Levels[0], wu)); err != nil {
			return fail("warm-up: %v", err)
		}
	}
	sr.RSSWarmBytes = rssOf(inst.PID())

	for _, lr := range sr.Levels {
		if ctx.Err() != nil {
			break
		}
		if p.Database.Reset == "level" && workloads.Database(w.Name) != "" {
			if err := db.Reset(ctx, w.Name, r.servers); err != nil {
				lr.Status, lr.Reason = "failed", "reset database: "+err.Error()
				break
			}
			if err := r.setup(ctx, sc); err != nil {
				lr.Status, lr.Reason = "failed", "scenario setup: "+err.Error()
				break
			}
		}
		r.level(ctx, inst, sc, w, lr)
		if lr.Status != "ok" {
			sr.Status, sr.Reason = "failed", fmt.Sprintf("level %d: %s", lr.Level, lr.Reason)
			break
		}
	}
	r.progress.skip(countStatus(sr.Levels, "skipped"))
	sr.RSSAfterBytes = rssOf(inst.PID())
	stop()
	return sr
}

func countStatus(ls []*LevelRun, status string) int {
	n := 0
	for _, l := range ls {
		if l.Status == status {
			n++
		}
	}
	return n
}

func (r *run) restartDatabase(ctx context.Context, workload string) error {
	switch workloads.Database(workload) {
	case "postgres":
		if err := r.servers.Postgres.Restart(ctx); err != nil {
			return err
		}
		r.pinDatabase(r.servers.Postgres.PID())
	case "mysql":
		if err := r.servers.MariaDB.Restart(ctx); err != nil {
			return err
		}
		r.pinDatabase(r.servers.MariaDB.PID())
	}
	return nil
}

// scenario loads the workload's scenario against baseURL and runs its
// setup section.
func (r *run) scenario(ctx context.Context, w Workload, baseURL string) (*scenario.Scenario, error) {
	opts := scenario.Options{BaseURL: baseURL, Seed: r.plan.Database.Seed}
	if len(r.known) > 0 {
		ids := make([]string, len(r.known))
		for i, id := range r.known {
			ids[i] = strconv.FormatInt(id, 10)
		}
		opts.Lists = map[string][]string{"sku_ids": ids}
	}
	path := w.Scenario
	if path == "" {
		path = "workloads/" + w.Name + "/scenario.yaml"
	}
	data, err := readScenario(path)
	if err != nil {
		return nil, err
	}
	sc, err := scenario.Parse(path, data, opts)
	if err != nil {
		return nil, err
	}
	return sc, r.setup(ctx, sc)
}

func (r *run) setup(ctx context.Context, sc *scenario.Scenario) error {
	if !sc.HasSetup() {
		return nil
	}
	return sc.RunSetup(ctx, nil)
}

func (r *run) attacker(progress func(load.Progress)) *load.Attacker {
	opts := []load.Option{load.Timeout(time.Duration(r.plan.Load.Timeout))}
	if r.plan.Load.MaxInflight > 0 {
		opts = append(opts, load.MaxInflight(r.plan.Load.MaxInflight))
	}
	if progress != nil {
		opts = append(opts, load.OnProgress(progress))
	}
	return load.NewAttacker(opts...)
}

// model is the load of one level lasting d.
func (r *run) model(level int, d time.Duration) load.Model {
	l := r.plan.Load
	if l.Model == "open" {
		return load.OpenModel{Rate: float64(level), Duration: d}
	}
	ramp := time.Duration(l.RampUp)
	if ramp >= d {
		ramp = d / 2
	}
	return load.ClosedModel{Users: level, RampUp: ramp, Duration: d, ThinkTime: time.Duration(l.ThinkTime)}
}

// level runs one load level, sampling the service, its database and the
// generator every second, then checks the workload's invariants.
func (r *run) level(ctx context.Context, inst *service.Instance, sc *scenario.Scenario, w Workload, lr *LevelRun) {
	abs := filepath.Join(r.dir, lr.Dir)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		lr.Status, lr.Reason = "failed", err.Error()
		return
	}
	mctx, stopSampling := context.WithCancel(ctx)
	svc := sampleInBackground(mctx, inst.PID())
	var dbs *samples
	if pid := r.dbPID(w.Name); pid > 0 {
		dbs = sampleInBackground(mctx, pid)
	}
	gen := sampleInBackground(mctx, os.Getpid(), monitor.RootOnly())

	d := time.Duration(r.plan.Load.Duration)
	r.progress.level(lr.Level, d)
	res, err := r.attacker(r.progress.onProgress).Attack(ctx, load.StatusChecked(sc), r.model(lr.Level, d))
	stopSampling()
	svcS, dbS, genS := svc.wait(), dbs.wait(), gen.wait()
	defer r.progress.result(lr)
	if err != nil {
		lr.Status, lr.Reason = "failed", err.Error()
		return
	}
	if err := res.WriteDir(abs); err != nil {
		lr.Status, lr.Reason = "failed", "write results: "+err.Error()
		return
	}
	if err := writeResources(abs, res.Summary.Start, svcS, dbS, genS); err != nil {
		lr.Warnings = append(lr.Warnings, "resources.csv: "+err.Error())
	}
	lr.Status = "ok"
	lr.Total, _ = res.Row("")
	s := res.Summary
	lr.TargetRate, lr.AchievedRate, lr.Late, lr.Dropped = s.TargetRate, s.AchievedRate, s.Late, s.Dropped
	lr.Warnings = append(lr.Warnings, s.Warnings...)
	lr.Service, lr.Database, lr.Generator = summarize(svcS), summarize(dbS), summarize(genS)
	lr.GeneratorCPUs = s.CPUs
	if lr.GeneratorCPUs == 0 {
		lr.GeneratorCPUs = runtime.NumCPU()
	}
	if lr.Generator.CPUMean > 90*float64(lr.GeneratorCPUs) {
		lr.Warnings = append(lr.Warnings, fmt.Sprintf("generator near saturation: %.0f%% CPU of %d CPU(s); the figures may show the generator's limit, not the service's", lr.Generator.CPUMean, lr.GeneratorCPUs))
	}
	if lr.Total.Errors > 0 {
		lr.Warnings = append(lr.Warnings, fmt.Sprintf("%d errors (%.2f%%): %s", lr.Total.Errors, lr.Total.ErrorPercent, reasons(lr.Total)))
	}
	select {
	case <-inst.Exited():
		lr.Status, lr.Reason = "failed", "the service exited during the level"
		return
	default:
	}
	lr.Violations = r.audit(ctx, w, res)
	for _, v := range lr.Violations {
		r.say("INVARIANT FAILED: %s %s level %d: %s: %s", inst.Manifest().Name, w.Name, lr.Level, v.Check, v.Detail)
	}
}

// audit checks the workload's invariants in the database. For users, the
// rows must cover every 201 counted (nothing lost) and exceed them by no
// more than the requests that could still have been in flight when the
// level ended (nothing duplicated); the scenario's first step is the one
// that creates a user.
func (r *run) audit(ctx context.Context, w Workload, res *load.Result) []db.Violation {
	if workloads.Database(w.Name) == "" {
		return nil
	}
	vs, err := db.Audit(ctx, w.Name, r.servers, -1)
	if err != nil {
		return []db.Violation{{Check: "audit", Detail: err.Error()}}
	}
	if w.Name == "users" && r.plan.Database.Reset == "level" && len(res.Summary.Labels) > 0 {
		first := res.Summary.Labels[0]
		created := first.Samples - first.Errors
		slack := first.Errors + int64(r.plan.Load.MaxInflight)
		if r.plan.Load.Model == "closed" {
			slack += int64(res.Summary.Users)
		} else if r.plan.Load.MaxInflight == 0 {
			slack += load.DefaultMaxInflight
		}
		rows, err := countRows(ctx, r.servers.Postgres.URL(), "users")
		switch {
		case err != nil:
			vs = append(vs, db.Violation{Check: "rows", Detail: err.Error()})
		case rows < created:
			vs = append(vs, db.Violation{Check: "rows", Detail: fmt.Sprintf("%d users rows but %d sign-ups answered 201: writes were lost", rows, created)})
		case rows > created+slack:
			vs = append(vs, db.Violation{Check: "rows", Detail: fmt.Sprintf("%d users rows for %d answered 201 (at most %d more could have been in flight)", rows, created, slack)})
		}
	}
	return vs
}

func countRows(ctx context.Context, url, table string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int64
	err = conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n)
	return n, err
}

func reasons(row load.LabelStats) string {
	if len(row.Reasons) == 0 {
		if row.Samples == 0 {
			return "no request completed"
		}
		return "no reason recorded"
	}
	var parts []string
	for i, rc := range row.Reasons {
		if i == 3 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", rc.Reason, rc.Count))
	}
	return strings.Join(parts, ", ")
}

func rssOf(pid int) uint64 {
	s, err := monitor.NewSampler(pid).Sample(context.Background())
	if err != nil {
		return 0
	}
	return s.RSSBytes
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

// samples collects a sampler's readings in the background.
type samples struct {
	done chan struct{}
	list []monitor.Sample
}

func sampleInBackground(ctx context.Context, pid int, opts ...monitor.Option) *samples {
	s := &samples{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = monitor.Run(ctx, pid, time.Second, func(m monitor.Sample) { s.list = append(s.list, m) }, opts...)
	}()
	return s
}

// wait returns the samples once the sampler has stopped; nil-safe.
func (s *samples) wait() []monitor.Sample {
	if s == nil {
		return nil
	}
	<-s.done
	return s.list
}

func summarize(ss []monitor.Sample) Resources {
	var out Resources
	var cpuSum, secs float64
	var sw uint64
	n := 0
	for _, s := range ss {
		if s.RSSBytes > out.RSSPeakBytes {
			out.RSSPeakBytes = s.RSSBytes
		}
		if s.Threads > out.ThreadsMax {
			out.ThreadsMax = s.Threads
		}
		if s.FDs > out.FDsMax {
			out.FDsMax = s.FDs
		}
		if s.Interval > 0 {
			cpuSum += s.CPUPercent * s.Interval.Seconds()
			secs += s.Interval.Seconds()
			sw += s.CtxSwitches
			if s.CPUPercent > out.CPUMax {
				out.CPUMax = s.CPUPercent
			}
			n++
		}
	}
	if secs > 0 {
		out.CPUMean = cpuSum / secs
		out.CtxSwitchesPS = float64(sw) / secs
	}
	return out
}
