package lab

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/internal/wording"
	"github.com/showdownlab/showdown/load"
)

// RunStart starts one implementation once and measures it on each
// workload of s in turn: contract check, warm-up, every level. It returns
// one record per workload; a failure before the service is up fails them
// all, a failure on one workload fails that one and the next is tried.
func (x *execution) RunStart(ctx context.Context, s plan.Start) []*results.ServiceRun {
	l := x.bringUp(ctx, s, true)
	if l.svc == nil {
		return l.srs
	}
	defer l.Down()
	idle := rssOf(l.svc.PID())
	for i, m := range l.ms {
		w, sr := m.Workload, l.srs[i]
		sr.StartupSeconds, sr.RSSIdleBytes = l.svc.Startup.Seconds(), idle
		if ctx.Err() != nil {
			break
		}
		if !l.Alive(ctx, sr) {
			continue
		}
		if i > 0 || sr.Database != "" {
			x.progress.Service(sr.Name(), w.Name, s.Trial)
		}
		if m.Setting.Label != "" && m.Setting.SKUIndex != x.skuIndex {
			if err := x.dbs.SetSKUIndex(ctx, m.Setting.SKUIndex); err != nil {
				l.Fail(ctx, sr, "database setting %s: %v", m.Setting.Label, err)
				continue
			}
			x.skuIndex = m.Setting.SKUIndex
		}
		if reason := x.measureWorkload(ctx, l.svc, l.im, w, sr, i == 0); reason != "" {
			l.Fail(ctx, sr, "%s", reason)
		}
		l.after(ctx, sr)
	}
	l.interrupted(ctx)
	l.Down()
	return l.srs
}

// bringUp starts s's implementation with its limits and log and returns
// it live, after the plan's database restart when restart is set; when it
// could not start, every record is failed and svc is nil.
func (x *execution) bringUp(ctx context.Context, s plan.Start, restart bool) *live {
	p, im := x.plan, s.Implementation
	x.starts++
	l := &live{x: x, s: s, im: im, ms: p.Measurements(s.Workloads, x.skuIndex), settled: map[string]*scenario.Scenario{}}
	for _, m := range l.ms {
		w := m.Workload
		dir := filepath.Join("runs", w.Name, results.FileName(im.ID()), fmt.Sprintf("trial-%d", s.Trial))
		if m.Setting.Label != "" {
			dir = filepath.Join("runs", w.Name, results.FileName(im.ID()), results.FileName(m.Setting.Label), fmt.Sprintf("trial-%d", s.Trial))
		}
		sr := &results.ServiceRun{Start: x.starts, Implementation: im.ID(), Service: im.Service, Variant: im.Variant, Cores: im.Cores, Workload: w.Name,
			Database: m.Setting.Label, Trial: s.Trial, Status: results.OK, Dir: dir}
		for _, lv := range p.Load.Levels {
			if p.SLO != nil {
				break // a capacity plan's levels are only its warm-up's load
			}
			sr.Levels = append(sr.Levels, &results.LevelRun{Level: lv, Status: results.Skipped,
				Dir: filepath.Join(sr.Dir, fmt.Sprintf("level-%d", lv))})
		}
		l.srs = append(l.srs, sr)
	}
	startDir := filepath.Join(x.dir, "starts", results.FileName(im.ID()), fmt.Sprintf("trial-%d", s.Trial))
	for _, sr := range l.srs {
		if err := os.MkdirAll(filepath.Join(x.dir, sr.Dir), 0o755); err != nil {
			return l.failAll(ctx, "", "%v", err)
		}
	}
	if err := os.MkdirAll(startDir, 0o755); err != nil {
		return l.failAll(ctx, "", "%v", err)
	}
	m := x.manifests[im.Service]
	b := x.rec.Builds[im.Service]
	if m == nil || b == nil || b.Error != "" {
		if b != nil {
			return l.failAll(ctx, b.LogTail, "build failed: %s", b.Error)
		}
		return l.failAll(ctx, "", "no such service")
	}
	for _, sr := range l.srs {
		sr.ArtifactBytes = b.ArtifactBytes
	}
	if restart {
		if what, err := x.BeforeStart(ctx, s.Workloads); err != nil {
			return l.failAll(ctx, "", "%s: %v", what, err)
		}
	}
	// Placement and limits: the service's own CPUs, quota and memory cap;
	// an arm of a plan's cores is pinned to CPUs 0..n-1, with no quota.
	cpus, quota := p.Placement.ServiceCPUs, p.Limits.CPU
	if im.Cores > 0 {
		cpus, quota = p.CoreCPUs(im.Cores), 0
	}
	l.cpus = cpuSet(cpus)
	env := ArmEnv(p, im, m)
	l.nmt = p.NativeMemory && m.Language == "java"
	if l.nmt {
		withNMT(env)
	}
	x.progress.Service(im.ID(), s.Workloads[0].Name, s.Trial)
	// The log is written under a temporary name and appears whole when the
	// service has stopped (its tail is read from the temporary file).
	logPath := filepath.Join(startDir, "service.log")
	svc, err := stack.StartService(ctx, m, x.dbs, stack.ServiceOptions{Env: env, LogPath: logPath,
		Confine: &stack.Confinement{Name: im.ID(), CPUs: cpus, CPUQuota: quota, MemoryBytes: int64(p.Limits.Memory)}})
	if err != nil {
		return l.failAll(ctx, tailFile(logPath, 40), "start: %v", err)
	}
	x.rec.Limits = results.AppliedLimits(svc.Applied())
	l.svc = svc
	return l
}

// measureWorkload runs one workload on a started service: database reset
// (unless the plan says never), scenario setup, a contract check, the
// warm-up and every level. It returns why it failed, or "".
func (x *execution) measureWorkload(ctx context.Context, svc *stack.Service, im plan.Implementation, w plan.Workload, sr *results.ServiceRun, first bool) string {
	sc, reason := x.prepareWorkload(ctx, svc, im, w, sr, first)
	if reason != "" {
		return reason
	}
	for _, lr := range sr.Levels {
		if ctx.Err() != nil {
			break
		}
		if reason := x.levelOf(ctx, svc, sc, w, lr); reason != "" {
			return reason
		}
		if lr.Status == results.Interrupted {
			return ""
		}
	}
	return ""
}

// prepareWorkload readies a started service for a workload's levels:
// database reset (unless the plan says never), the contract check, the
// scenario and its setup, and the warm-up. It returns the scenario, or
// why it failed.
func (x *execution) prepareWorkload(ctx context.Context, svc *stack.Service, im plan.Implementation, w plan.Workload, sr *results.ServiceRun, first bool) (*scenario.Scenario, string) {
	p := x.plan
	if p.Database.Reset != "never" {
		if err := x.dbs.Reset(ctx, w.Name); err != nil {
			return nil, "reset database: " + err.Error()
		}
	}
	began := time.Now()
	c := &results.Contract{Mode: p.VerifyOf(im)}
	sr.Contract = c
	if c.Mode == plan.VerifyFull {
		if reason := x.contract(ctx, svc, w.Name, c); reason != "" {
			return nil, reason
		}
		// The suite wrote clients, transfers and users: empty them again
		// as the plan says, so the scenario's setup and the levels start
		// from the state they expect. With reset: never they stay, as
		// everything a run writes does; the audits hold on them all the
		// same and the rows are counted before and after each level.
		if p.Database.Reset != "never" {
			if err := x.dbs.Reset(ctx, w.Name); err != nil {
				return nil, "reset database after the contract check: " + err.Error()
			}
		}
	}
	sc, err := x.scenario(ctx, w, svc.URL())
	if err != nil {
		return nil, "scenario: " + err.Error()
	}
	// One iteration of the scenario, which asserts every response: the
	// whole check with verify: quick.
	res, err := x.Attacker(nil).Attack(ctx, load.StatusChecked(sc), load.ClosedModel{Users: 1, Iterations: 1})
	if err != nil {
		return nil, "contract check: " + err.Error()
	}
	if row, _ := res.Row(""); row.Errors > 0 || row.Samples == 0 {
		return nil, "contract check: one iteration of the scenario: " + row.ErrorReasons()
	}
	c.Seconds = math.Round(time.Since(began).Seconds()*10) / 10
	x.Say("%s on %s: contract %s", sr.Name(), w.Name, wording.Contract(c))
	wu, err := x.warmUp(ctx, sc, svc.PID(), p.Load.Levels[0], first, p.WarmupOf(im))
	sr.Warmup = wu
	if err != nil {
		return nil, "warm-up: " + err.Error()
	}
	if wu != nil {
		x.Say("%s on %s: warm-up %s", sr.Name(), w.Name, wording.Warmup(wu))
	}
	sr.RSSWarmBytes = rssOf(svc.PID())
	return sc, ""
}

// levelOf measures one level of a prepared workload, resetting the
// database first when the plan says so. It returns why the level failed,
// or "".
func (x *execution) levelOf(ctx context.Context, svc *stack.Service, sc *scenario.Scenario, w plan.Workload, lr *results.LevelRun) string {
	if x.plan.Database.Reset == "level" && w.HasDatabase() {
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
	if lr.Status != results.OK && lr.Status != results.Interrupted {
		return fmt.Sprintf("level %d: %s", lr.Level, lr.Reason)
	}
	return ""
}
