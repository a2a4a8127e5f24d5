package lab

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/showdownlab/showdown/internal/cgroup"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/load/atomicfile"
	"github.com/showdownlab/showdown/workloads"
)

// runStart starts one implementation once and measures it on each
// workload of s in turn: contract check, warm-up, every level. It returns
// one record per workload; a failure before the service is up fails them
// all, a failure on one workload fails that one and the next is tried.
func (x *execution) runStart(ctx context.Context, s start) []*results.ServiceRun {
	p, im := x.plan, s.Implementation
	x.starts++
	var srs []*results.ServiceRun
	ms := measurements(p, s.Workloads, x.skuIndex)
	for _, m := range ms {
		w := m.Workload
		dir := filepath.Join("runs", w.Name, sanitizeName(im.ID()), fmt.Sprintf("trial-%d", s.Trial))
		if m.Setting.Label != "" {
			dir = filepath.Join("runs", w.Name, sanitizeName(im.ID()), sanitizeName(m.Setting.Label), fmt.Sprintf("trial-%d", s.Trial))
		}
		sr := &results.ServiceRun{Start: x.starts, Implementation: im.ID(), Service: im.Service, Variant: im.Variant, Workload: w.Name,
			Database: m.Setting.Label, Trial: s.Trial, Status: results.OK, Dir: dir}
		for _, l := range p.Load.Levels {
			sr.Levels = append(sr.Levels, &results.LevelRun{Level: l, Status: results.Skipped,
				Dir: filepath.Join(sr.Dir, fmt.Sprintf("level-%d", l))})
		}
		srs = append(srs, sr)
	}
	fail := func(sr *results.ServiceRun, format string, args ...any) {
		sr.Status = results.Failed
		sr.Reason = fmt.Sprintf(format, args...)
		if ctx.Err() != nil {
			// What breaks while everything is being stopped is the
			// interrupt's doing, not the implementation's.
			sr.Status = results.Interrupted
			x.say("%s on %s, trial %d: INTERRUPTED: %s", sr.Name(), sr.Workload, s.Trial, sr.Reason)
		} else {
			x.say("%s on %s, trial %d: FAILED: %s", sr.Name(), sr.Workload, s.Trial, sr.Reason)
		}
		x.progress.skip(countStatus(sr.Levels, results.Skipped))
	}
	failAll := func(tail, format string, args ...any) []*results.ServiceRun {
		for _, sr := range srs {
			if sr.Status == results.OK {
				sr.LogTail = tail
				fail(sr, format, args...)
			}
		}
		return srs
	}
	startDir := filepath.Join(x.dir, "starts", sanitizeName(im.ID()), fmt.Sprintf("trial-%d", s.Trial))
	for _, sr := range srs {
		if err := os.MkdirAll(filepath.Join(x.dir, sr.Dir), 0o755); err != nil {
			return failAll("", "%v", err)
		}
	}
	if err := os.MkdirAll(startDir, 0o755); err != nil {
		return failAll("", "%v", err)
	}
	m := x.manifests[im.Service]
	b := x.rec.Builds[im.Service]
	if m == nil || b == nil || b.Error != "" {
		if b != nil {
			return failAll(b.LogTail, "build failed: %s", b.Error)
		}
		return failAll("", "no such service")
	}
	for _, sr := range srs {
		sr.ArtifactBytes = b.ArtifactBytes
	}
	if what, err := x.beforeStart(ctx, s.Workloads); err != nil {
		return failAll("", "%s: %v", what, err)
	}
	// Placement and limits: the service's own CPUs, quota and memory cap.
	grp, err := cgroup.New(im.ID(), cgroup.Limits{CPUs: p.Placement.ServiceCPUs, CPUQuota: p.Limits.CPU, MemoryBytes: int64(p.Limits.Memory)})
	if err != nil {
		return failAll("", "limits: %v", err)
	}
	defer grp.Remove()
	x.rec.Limits = results.AppliedLimits(grp.Applied())

	// The log is written under a temporary name and appears whole when the
	// service has stopped (its tail is read from the temporary file).
	logf, err := atomicfile.Create(filepath.Join(startDir, "service.log"), 0o644)
	if err != nil {
		return failAll("", "%v", err)
	}
	defer logf.Commit()
	logPath := logf.Name()
	env := map[string]string{}
	for k, v := range p.Env {
		env[k] = v
	}
	for k, v := range im.Env {
		env[k] = v
	}
	nmt := p.NativeMemory && m.Language == "java"
	if nmt {
		withNMT(env)
	}
	x.progress.service(im.ID(), s.Workloads[0].Name, s.Trial)
	svc, err := stack.StartService(ctx, m, x.dbs, stack.ServiceOptions{Env: env, Log: logf, Wrap: grp.Wrap})
	if err != nil {
		return failAll(tailFile(logPath, 40), "start: %v", err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		code, _ := svc.Stop()
		for _, sr := range srs {
			sr.ExitCode = max(code, 0)
			if sr.Status != results.OK && sr.LogTail == "" {
				sr.LogTail = tailFile(logPath, 40)
			}
		}
	}
	defer stop()
	idle := rssOf(svc.PID())
	for i, m := range ms {
		w, sr := m.Workload, srs[i]
		sr.StartupSeconds, sr.RSSIdleBytes = svc.Startup.Seconds(), idle
		if ctx.Err() != nil {
			break
		}
		select {
		case <-svc.Exited():
			fail(sr, "the service exited before this workload")
			continue
		default:
		}
		if i > 0 || sr.Database != "" {
			x.progress.service(sr.Name(), w.Name, s.Trial)
		}
		if m.Setting.Label != "" && m.Setting.SKUIndex != x.skuIndex {
			if err := x.dbs.SetSKUIndex(ctx, m.Setting.SKUIndex); err != nil {
				fail(sr, "database setting %s: %v", m.Setting.Label, err)
				continue
			}
			x.skuIndex = m.Setting.SKUIndex
		}
		if reason := x.measureWorkload(ctx, svc, im, w, sr, i == 0); reason != "" {
			fail(sr, "%s", reason)
		}
		sr.RSSAfterBytes = rssOf(svc.PID())
		if nmt && ctx.Err() == nil {
			sr.NativeMemory = nativeMemory(ctx, svc.PID())
			if e := sr.NativeMemory.Error; e != "" {
				x.warn("%s on %s, trial %d: native memory tracking: %s", sr.Name(), w.Name, s.Trial, e)
			}
		}
	}
	if ctx.Err() != nil {
		// A record the interrupt cut short (a level, the warm-up, or the
		// whole workload) is not OK.
		for _, sr := range srs {
			if sr.Status == results.OK && countStatus(sr.Levels, results.OK) < len(sr.Levels) {
				sr.Status, sr.Reason = results.Interrupted, "interrupted before every level was measured"
			}
		}
	}
	stop()
	return srs
}

// measureWorkload runs one workload on a started service: database reset
// (unless the plan says never), scenario setup, a contract check, the
// warm-up and every level. It returns why it failed, or "".
func (x *execution) measureWorkload(ctx context.Context, svc *stack.Service, im plan.Implementation, w plan.Workload, sr *results.ServiceRun, first bool) string {
	p := x.plan
	if p.Database.Reset != "never" {
		if err := x.dbs.Reset(ctx, w.Name); err != nil {
			return "reset database: " + err.Error()
		}
	}
	began := time.Now()
	c := &results.Contract{Mode: p.VerifyOf(im)}
	sr.Contract = c
	if c.Mode == plan.VerifyFull {
		if reason := x.contract(ctx, svc, w.Name, c); reason != "" {
			return reason
		}
		// The suite wrote clients, transfers and users: empty them again
		// as the plan says, so the scenario's setup and the levels start
		// from the state they expect. With reset: never they stay, as
		// everything a run writes does; the audits hold on them all the
		// same and the rows are counted before and after each level.
		if p.Database.Reset != "never" {
			if err := x.dbs.Reset(ctx, w.Name); err != nil {
				return "reset database after the contract check: " + err.Error()
			}
		}
	}
	sc, err := x.scenario(ctx, w, svc.URL())
	if err != nil {
		return "scenario: " + err.Error()
	}
	// One iteration of the scenario, which asserts every response: the
	// whole check with verify: quick.
	res, err := x.attacker(nil).Attack(ctx, load.StatusChecked(sc), load.ClosedModel{Users: 1, Iterations: 1})
	if err != nil {
		return "contract check: " + err.Error()
	}
	if row, _ := res.Row(""); row.Errors > 0 || row.Samples == 0 {
		return "contract check: one iteration of the scenario: " + reasons(row)
	}
	c.Seconds = math.Round(time.Since(began).Seconds()*10) / 10
	x.say("%s on %s: contract %s", sr.Name(), w.Name, describeContract(c))
	wu, err := x.warmUp(ctx, sc, svc.PID(), p.Load.Levels[0], first, p.WarmupOf(im))
	sr.Warmup = wu
	if err != nil {
		return "warm-up: " + err.Error()
	}
	if wu != nil {
		x.say("%s on %s: warm-up %s", sr.Name(), w.Name, describeWarmup(wu))
	}
	sr.RSSWarmBytes = rssOf(svc.PID())
	for _, lr := range sr.Levels {
		if ctx.Err() != nil {
			break
		}
		if p.Database.Reset == "level" && workloads.Database(w.Name) != workloads.NoDatabase {
			if err := x.dbs.Reset(ctx, w.Name); err != nil {
				lr.Status, lr.Reason = results.Failed, "reset database: "+err.Error()
				return fmt.Sprintf("level %d: %s", lr.Level, lr.Reason)
			}
			if err := setup(ctx, sc); err != nil {
				lr.Status, lr.Reason = results.Failed, "scenario setup: "+err.Error()
				return fmt.Sprintf("level %d: %s", lr.Level, lr.Reason)
			}
		}
		x.level(ctx, svc, sc, w, lr)
		if lr.Status == results.Interrupted {
			return ""
		}
		if lr.Status != results.OK {
			return fmt.Sprintf("level %d: %s", lr.Level, lr.Reason)
		}
	}
	return ""
}

// describeContract says how a contract check went, for the progress lines.
func describeContract(c *results.Contract) string {
	if c.Mode == plan.VerifyQuick {
		return fmt.Sprintf("(quick: one iteration of the scenario) passed in %.1fs", c.Seconds)
	}
	if c.Attempts > 1 {
		return fmt.Sprintf("passed on the second attempt: %d checks, %d skipped, in %.1fs (the first failed %d)", c.Passed, c.Skipped, c.Seconds, len(c.FirstFailures))
	}
	return fmt.Sprintf("passed: %d checks, %d skipped, in %.1fs", c.Passed, c.Skipped, c.Seconds)
}

// describeWarmup says how a warm-up ended, for the progress lines.
func describeWarmup(wu *results.WarmupRun) string {
	switch {
	case !wu.Auto:
		return fmt.Sprintf("%.0fs (fixed), %d requests", wu.Seconds, wu.Requests)
	case wu.Steady:
		return fmt.Sprintf("steady after %.0fs, %d requests (%s)", wu.Seconds, wu.Requests, ruleFigures(wu))
	}
	return fmt.Sprintf("NOT STEADY after %.0fs (the cap), %d requests (%s)", wu.Seconds, wu.Requests, ruleFigures(wu))
}

// ruleFigures are the steady-state rule's figures over the warm-up's
// last window: CV, drift and, where watched, the compiler threads' CPU.
func ruleFigures(wu *results.WarmupRun) string {
	s := fmt.Sprintf("CV %.1f%%, drift %.1f%%", 100*wu.CV, 100*wu.Drift)
	if n := len(wu.CompilerCPU); n > 0 {
		s += fmt.Sprintf(", JIT compiler %.0f%% of a CPU", stats.Mean(wu.CompilerCPU[max(0, n-stats.DefaultSteadyWindow):]))
	}
	return s
}

func countStatus(ls []*results.LevelRun, status results.Status) int {
	n := 0
	for _, l := range ls {
		if l.Status == status {
			n++
		}
	}
	return n
}
