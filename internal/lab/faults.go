package lab

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/showdownlab/showdown/internal/faults"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/workloads"
)

// runFaults runs the bank under faults (package faults) for every
// implementation that serves bank, one after the other, on a durable
// PostgreSQL of its own, and records each in run.json. The service runs
// with the plan's environment and the database is pinned like the
// measured one; the service is not confined to its control group, since
// a fault restarts it.
func (x *execution) runFaults(ctx context.Context) {
	p := x.plan
	fo := faults.Options{Workers: p.Faults.Workers, PerFault: time.Duration(p.Faults.PerFault),
		Pause: time.Duration(p.Faults.Pause), Progress: sayWriter{x}}
	fo.Faults = p.Faults.Inject // validated with the plan
	dir := filepath.Join(x.dir, "faults")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		x.Warn("faults: %v", err)
		return
	}
	dbs, err := stack.StartDatabases(ctx, []workloads.Engine{workloads.Postgres}, stack.DatabaseOptions{
		MaxConnections: p.Database.MaxConnections,
		LogDir:         dir,
		CPUs:           p.Placement.DatabaseCPUs,
		Progress:       sayWriter{x},
		Warn:           func(msg string) { x.Warn("%s", msg) },
		Durable:        true,
	})
	if err != nil {
		x.Warn("faults: start a durable PostgreSQL: %v", err)
		return
	}
	defer dbs.Stop()
	for _, im := range p.Implementations {
		m := x.manifests[im.Service]
		if m == nil || !m.Supports("bank") || ctx.Err() != nil {
			continue
		}
		if b := x.rec.Builds[im.Service]; b == nil || b.Error != "" {
			continue
		}
		ft, err := x.faultOne(ctx, im, dbs, dir, fo)
		if err != nil {
			x.Warn("faults of %s: %v", im.ID(), err)
			continue
		}
		x.rec.Faults = append(x.rec.Faults, ft)
		x.Say("faults of %s: %s", im.ID(), ft.Verdict)
		_ = results.WriteRun(x.dir, x.rec)
	}
}

// faultOne runs the fault test of implementation im (faults.RunStack)
// with the plan's environment, its output in dir.
func (x *execution) faultOne(ctx context.Context, im plan.Implementation, dbs *stack.Databases, dir string, fo faults.Options) (*results.FaultTest, error) {
	env := map[string]string{}
	for k, v := range x.plan.Env {
		env[k] = v
	}
	for k, v := range im.Env {
		env[k] = v
	}
	logf, err := os.Create(filepath.Join(dir, sanitizeName(im.ID())+".log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	return faults.RunStack(ctx, x.manifests[im.Service], im.ID(), dbs, stack.ServiceOptions{Env: env, Log: logf}, fo, 0)
}
