// Package warmup is the warm-up rule the local lab and the Kubernetes
// controller share: how long a warm-up may last, and when the live
// per-second series says the service has reached steady state.
package warmup

import (
	"math"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
)

// LaterShare caps the automatic warm-up of a start's second and later
// workloads at this share of warmup_max: the runtime's shared paths (HTTP,
// JSON, the pool) were compiled during the first one.
const LaterShare = 1.0 / 3

// Budget is how long the warm-up of a level may last: a fixed warm-up's
// time, or an automatic one's cap (warmup_max) for a start's first
// workload and LaterShare of it (at least the rule's window and two
// seconds) for later ones.
func Budget(w plan.Warmup, first bool) time.Duration {
	if !w.Auto {
		return time.Duration(w.Time)
	}
	d := time.Duration(w.Max)
	if !first {
		d = max(time.Duration(float64(d)*LaterShare), time.Duration(stats.DefaultSteadyWindow+2)*time.Second)
	}
	return d
}

// Watch applies the steady-state rule to a warm-up's per-second series
// as it comes, recording the curve in Record.
type Watch struct {
	// Record is the warm-up as results.Warmup records it.
	Record *results.Warmup
	rule   stats.Steady
	open   bool
	done   bool
}

// NewWatch starts watching a warm-up in the open or the closed model.
// The open model's throughput is its send rate, so there the rule watches
// the median latency; the closed model's is the throughput.
func NewWatch(wp plan.Warmup, open bool) *Watch {
	w := &Watch{Record: &results.Warmup{Auto: wp.Auto, Steady: !wp.Auto, Metric: "throughput"}, rule: stats.DefaultSteady, open: open}
	if w.open {
		w.Record.Metric = "p50_ms"
	}
	return w
}

// Observe adds one second (completed requests per second and the
// interval's median latency) and reports whether the rule holds now:
// then the warm-up may stop. A fixed warm-up never stops early.
func (w *Watch) Observe(rate float64, p50 time.Duration) bool {
	r := w.Record
	r.Throughput = append(r.Throughput, rate)
	series := r.Throughput
	if w.open {
		r.Series = append(r.Series, float64(p50)/1e6)
		series = r.Series
	}
	if !r.Auto || w.done {
		return w.done
	}
	ok, cv, drift := w.rule.Holds(series)
	r.CV, r.Drift = finite(cv), finite(drift)
	if ok {
		w.done, r.Steady = true, true
	}
	return w.done
}

// Finish records the warm-up's requests and length.
func (w *Watch) Finish(requests int64, seconds float64) {
	w.Record.Requests = requests
	w.Record.Seconds = math.Round(seconds*10) / 10
}

// finite turns NaN and infinities into 0, which JSON can hold.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
