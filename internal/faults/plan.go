package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/workloads"
)

// RunPlan runs the bank under faults for every implementation of p that
// serves bank and was built (rec.Builds), one after the other, on a
// durable PostgreSQL of its own, after the plan's measurement. Each test
// is appended to rec.Faults, and rec written to the results folder dir,
// as it ends; the logs go to dir/faults. The service runs with the plan's
// environment and the database is pinned like the measured one; the
// service is not confined to a control group, since a fault restarts it.
// say and warn take progress lines and warnings.
func RunPlan(ctx context.Context, p *plan.Plan, dir string, rec *results.Run, manifests map[string]*service.Manifest, say, warn func(string)) {
	fo := Options{Workers: p.Faults.Workers, PerFault: time.Duration(p.Faults.PerFault),
		Pause: time.Duration(p.Faults.Pause), Progress: lines(say)}
	fo.Faults = p.Faults.Inject // validated with the plan
	logs := filepath.Join(dir, "faults")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		warn("faults: " + err.Error())
		return
	}
	dbs, err := stack.StartDatabases(ctx, []workloads.Engine{workloads.Postgres}, stack.DatabaseOptions{
		MaxConnections: p.Database.MaxConnections,
		LogDir:         logs,
		CPUs:           p.Placement.DatabaseCPUs,
		Progress:       lines(say),
		Warn:           warn,
		Durable:        true,
	})
	if err != nil {
		warn("faults: start a durable PostgreSQL: " + err.Error())
		return
	}
	defer dbs.Stop()
	for _, im := range Arms(p) {
		m := manifests[im.Service]
		if m == nil || !m.Supports("bank") || ctx.Err() != nil {
			continue
		}
		if b := rec.Builds[im.Service]; b == nil || b.Error != "" {
			continue
		}
		ft, err := runOne(ctx, p, m, im, dbs, logs, fo)
		if err != nil {
			warn(fmt.Sprintf("faults of %s: %v", im.ID(), err))
			continue
		}
		rec.Faults = append(rec.Faults, ft)
		say(fmt.Sprintf("faults of %s: %s", im.ID(), ft.Verdict))
		_ = results.WriteRun(dir, rec)
	}
}

// Arms are the implementations the fault test starts: each of p's once,
// at the plan's most cores where it has cores (the most concurrency its
// bank runs with).
func Arms(p *plan.Plan) []plan.Implementation {
	out := slices.Clone(p.Implementations)
	if len(p.Cores) > 0 {
		for i := range out {
			out[i].Cores = slices.Max(p.Cores)
		}
	}
	return out
}

// ArmEnv is the environment implementation im starts with in the fault
// test: plan.ArmEnv with the stack's cores knob at the arm's cores, as
// under run.
func ArmEnv(p *plan.Plan, im plan.Implementation, m *service.Manifest) map[string]string {
	return p.ArmEnv(im, m.Cores.EnvAt(im.Cores), nil)
}

// runOne runs the fault test of implementation im (RunStack) with its
// environment (ArmEnv), its output in dir.
func runOne(ctx context.Context, p *plan.Plan, m *service.Manifest, im plan.Implementation, dbs *stack.Databases, dir string, fo Options) (*results.FaultTest, error) {
	env := ArmEnv(p, im, m)
	logf, err := os.Create(filepath.Join(dir, results.FileName(im.ID())+".log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	return RunStack(ctx, m, im.ID(), dbs, stack.ServiceOptions{Env: env, Log: logf}, fo, 0)
}

// lines is an io.Writer that hands each write, its newline trimmed, to say.
type lines func(string)

func (l lines) Write(b []byte) (int, error) {
	l(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
