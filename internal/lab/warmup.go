package lab

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/load"
)

// LaterWarmupShare caps the automatic warm-up of a start's second and
// later workloads at this share of warmup_max: the runtime's shared paths
// (HTTP, JSON, the pool) were compiled during the first one.
const LaterWarmupShare = 1.0 / 3

// warmUp drives the level's load before it is measured, as wp (the
// implementation's warm-up, or the plan's) says: for a fixed time, or
// (auto) until the steady-state rule holds on the live per-second series,
// at most its cap (for a start's first workload; later ones
// LaterWarmupShare of it). It records the curve either way; nil when wp
// is no warm-up. With a request count it sends about that many requests
// (whole iterations per user), at most the cap long.
func (x *execution) warmUp(ctx context.Context, sc load.Scenario, level int, first bool, wp plan.Warmup) (*results.Warmup, error) {
	l := x.plan.Load
	d := time.Duration(wp.Time)
	if wp.Auto {
		d = time.Duration(wp.Max)
		if !first {
			d = max(time.Duration(float64(d)*LaterWarmupShare), time.Duration(stats.DefaultSteadyWindow+2)*time.Second)
		}
	}
	model := x.model(level, d)
	if wp.Requests > 0 {
		d = time.Duration(wp.Max)
		model = x.warmupModel(level, wp.Requests, max(len(sc.Steps()), 1), d)
	}
	if d <= 0 || ctx.Err() != nil {
		return nil, nil
	}
	open := l.Model == "open"
	wu := &results.Warmup{Auto: wp.Auto, Steady: !wp.Auto, Metric: "throughput"}
	if open {
		// The open model's throughput is the send rate: watch the latency.
		wu.Metric = "p50_ms"
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	rule := stats.DefaultSteady
	var mu sync.Mutex
	steady := false
	on := func(p load.Progress) {
		x.progress.onProgress(p)
		if p.Warmup || p.Elapsed == 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		wu.Throughput = append(wu.Throughput, p.Rate)
		series := wu.Throughput
		if open {
			wu.Series = append(wu.Series, float64(p.IntervalP50)/1e6)
			series = wu.Series
		}
		if !wp.Auto || steady {
			return
		}
		ok, cv, drift := rule.Holds(series)
		wu.CV, wu.Drift = finite(cv), finite(drift)
		if ok {
			steady = true
			stop()
		}
	}
	x.progress.phase("warm-up", d)
	res, err := x.attacker(on).Attack(wctx, load.StatusChecked(sc), model)
	if err != nil {
		return wu, err
	}
	mu.Lock()
	defer mu.Unlock()
	wu.Requests = res.Summary.Total.Samples
	wu.Seconds = math.Round(res.Summary.DurationSeconds*10) / 10
	if wp.Auto {
		wu.Steady = steady
	}
	return wu, nil
}

// finite turns NaN and infinities into 0, which JSON can hold.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
