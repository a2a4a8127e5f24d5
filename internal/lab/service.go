package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/showdownlab/showdown/internal/cgroup"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/workloads"
)

// serviceRun starts one implementation for one workload and runs every
// level against it.
func (x *execution) serviceRun(ctx context.Context, s start) *results.ServiceRun {
	p, im, w, trial := x.plan, s.Implementation, s.Workload, s.Trial
	sr := &results.ServiceRun{Implementation: im.ID(), Service: im.Service, Variant: im.Variant, Workload: w.Name,
		Trial: trial, Status: results.OK, Dir: filepath.Join("runs", w.Name, sanitizeName(im.ID()), fmt.Sprintf("trial-%d", trial))}
	for _, l := range p.Load.Levels {
		sr.Levels = append(sr.Levels, &results.LevelRun{Level: l, Status: results.Skipped,
			Dir: filepath.Join(sr.Dir, fmt.Sprintf("level-%d", l))})
	}
	fail := func(format string, args ...any) *results.ServiceRun {
		sr.Status = results.Failed
		sr.Reason = fmt.Sprintf(format, args...)
		x.say("%s on %s, trial %d: FAILED: %s", im.ID(), w.Name, trial, sr.Reason)
		x.progress.skip(len(sr.Levels))
		return sr
	}
	abs := filepath.Join(x.dir, sr.Dir)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fail("%v", err)
	}
	m := x.manifests[im.Service]
	b := x.rec.Builds[im.Service]
	if m == nil || b == nil || b.Error != "" {
		if b != nil {
			sr.LogTail = b.LogTail
			return fail("build failed: %s", b.Error)
		}
		return fail("no such service")
	}
	sr.ArtifactBytes = b.ArtifactBytes

	if what, err := x.beforeStart(ctx, w.Name); err != nil {
		return fail("%s: %v", what, err)
	}
	// Placement and limits: the service's own CPUs, quota and memory cap.
	grp, err := cgroup.New(im.ID(), cgroup.Limits{CPUs: p.Placement.ServiceCPUs, CPUQuota: p.Limits.CPU, MemoryBytes: int64(p.Limits.Memory)})
	if err != nil {
		return fail("limits: %v", err)
	}
	defer grp.Remove()
	x.rec.Limits = grp.Applied()

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
	x.progress.service(im.ID(), w.Name, trial)
	svc, err := stack.StartService(ctx, m, x.dbs, stack.ServiceOptions{Env: env, Log: logf, Wrap: grp.Wrap})
	if err != nil {
		sr.LogTail = tailFile(logPath, 40)
		return fail("start: %v", err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		if code, _ := svc.Stop(); code >= 0 {
			sr.ExitCode = code
		}
	}
	defer func() {
		stop()
		if sr.Status != results.OK && sr.LogTail == "" {
			sr.LogTail = tailFile(logPath, 40)
		}
	}()
	sr.StartupSeconds = svc.Startup.Seconds()
	sr.RSSIdleBytes = rssOf(svc.PID())

	sc, err := x.scenario(ctx, w, svc.URL())
	if err != nil {
		return fail("scenario: %v", err)
	}
	// A quick contract check: one iteration of the scenario, which asserts
	// every response. The full suite is `showdown verify`.
	res, err := x.attacker(nil).Attack(ctx, load.StatusChecked(sc), load.ClosedModel{Users: 1, Iterations: 1})
	if err != nil {
		return fail("contract check: %v", err)
	}
	if row, _ := res.Row(""); row.Errors > 0 || row.Samples == 0 {
		return fail("contract check: %s", reasons(row))
	}
	if wu := time.Duration(p.Load.Warmup); wu > 0 && ctx.Err() == nil {
		x.progress.phase("warm-up", wu)
		if _, err := x.attacker(x.progress.onProgress).Attack(ctx, load.StatusChecked(sc), x.model(p.Load.Levels[0], wu)); err != nil {
			return fail("warm-up: %v", err)
		}
	}
	sr.RSSWarmBytes = rssOf(svc.PID())

	for _, lr := range sr.Levels {
		if ctx.Err() != nil {
			break
		}
		if p.Database.Reset == "level" && workloads.Database(w.Name) != workloads.NoDatabase {
			if err := x.dbs.Reset(ctx, w.Name); err != nil {
				lr.Status, lr.Reason = results.Failed, "reset database: "+err.Error()
				break
			}
			if err := setup(ctx, sc); err != nil {
				lr.Status, lr.Reason = results.Failed, "scenario setup: "+err.Error()
				break
			}
		}
		x.level(ctx, svc, sc, w, lr)
		if lr.Status != results.OK {
			sr.Status, sr.Reason = results.Failed, fmt.Sprintf("level %d: %s", lr.Level, lr.Reason)
			break
		}
	}
	x.progress.skip(countStatus(sr.Levels, results.Skipped))
	sr.RSSAfterBytes = rssOf(svc.PID())
	stop()
	return sr
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
