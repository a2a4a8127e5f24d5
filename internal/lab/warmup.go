package lab

import (
	"context"
	"time"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/warmup"
	"github.com/showdownlab/showdown/load"
)

// LaterWarmupShare caps the automatic warm-up of a start's second and
// later workloads at this share of warmup_max (the rule lives in package
// warmup, which the Kubernetes controller shares).
const LaterWarmupShare = warmup.LaterShare

// warmUp drives the level's load before it is measured, as wp (the
// implementation's warm-up, or the plan's) says: for a fixed time, or
// (auto) until the steady-state rule holds on the live per-second series,
// at most its cap (for a start's first workload; later ones
// LaterWarmupShare of it). It records the curve either way; nil when wp
// is no warm-up. The rule is chosen by the runtime pid's threads show
// (warmup.WatchRuntime): a JVM's waits for its compiler threads to be
// quiet and for the trend, Node's for the trend, a runtime without a JIT
// is warmed for warmup.NoJITWarmup. With a request count it sends about
// that many requests (whole iterations per user), at most the cap long.
func (x *execution) warmUp(ctx context.Context, sc load.Scenario, pid int, level int, first bool, wp plan.Warmup) (*results.WarmupRun, error) {
	l := x.plan.Load
	d := warmup.Budget(wp, first)
	model := x.model(level, d)
	if wp.Requests > 0 {
		d = time.Duration(wp.Max)
		model = x.warmupModel(level, wp.Requests, max(len(sc.Steps()), 1), d)
	}
	if d <= 0 || ctx.Err() != nil {
		return nil, nil
	}
	watch := warmup.NewWatch(wp, l.Model == "open")
	if f := x.rec.Machine.Noise; f != nil {
		watch.Floor(f.Max)
	}
	if pid > 0 {
		watch.WatchRuntime(func() (time.Duration, string) { return monitor.Compiler(int32(pid)) })
	}
	x.progress.Phase("warm-up", d)
	return watch.Drive(ctx, func(ctx context.Context, on func(load.Progress)) (*load.Result, error) {
		return x.Attacker(on).Attack(ctx, load.StatusChecked(sc), model)
	}, x.progress.OnProgress)
}
