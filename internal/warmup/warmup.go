// Package warmup is the warm-up rule the local lab and the Kubernetes
// controller share: how long a warm-up may last, and when the live
// per-second series says the service has reached steady state.
package warmup

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
	// Record is the warm-up as results.WarmupRun records it.
	Record *results.WarmupRun
	rule   stats.Steady
	open   bool
	done   bool
	// compiler reads the service's compiler threads' CPU time so far;
	// nil when they cannot be seen (the service runs elsewhere).
	compiler func() time.Duration
	compiled time.Duration
}

// MaxCompilerCPU is the third condition of the steady-state rule where
// the service's threads can be seen: its runtime's compiler threads used
// at most this share of one CPU (percent), on average over the rule's
// window. A JVM whose throughput rests on a plateau while C2 still
// compiles its hot paths is not warm: its throughput is about to climb
// again (plans/README.md has the measurement behind the value).
const MaxCompilerCPU = 2.0

// WatchCompiler makes the rule wait, too, until the runtime has stopped
// compiling: read gives the CPU time the service's compiler threads have
// used so far (monitor.CompilerCPU), and is called once a second.
func (w *Watch) WatchCompiler(read func() time.Duration) {
	w.compiler = read
	w.compiled = read()
}

// Floor holds the rule to the machine's own noise where that is larger
// than the rule's thresholds: cv is the machine's per-second coefficient
// of variation (noise.Floor.Max). A series that varies no more than the
// machine itself cannot be told from steady on that machine, and asking
// more of it only runs every warm-up to its cap. The trend allowed grows
// by half as much: noise of CV c gives a window's trend a spread of about
// c, so half of it still passes by chance within seconds, while a real
// climb (a runtime still tiering up) of that size is still caught.
func (w *Watch) Floor(cv float64) {
	if math.IsNaN(cv) || cv <= 0 {
		return
	}
	w.rule.MaxCV = max(w.rule.MaxCV, cv)
	w.rule.MaxDrift = max(w.rule.MaxDrift, cv/2)
	w.Record.MaxCV, w.Record.MaxDrift = w.rule.MaxCV, w.rule.MaxDrift
}

// NewWatch starts watching a warm-up in the open or the closed model.
// The open model's throughput is its send rate, so there the rule watches
// the median latency; the closed model's is the throughput.
func NewWatch(wp plan.Warmup, open bool) *Watch {
	w := &Watch{Record: &results.WarmupRun{Auto: wp.Auto, Steady: !wp.Auto, Metric: "throughput"}, rule: stats.DefaultSteady, open: open}
	if w.open {
		w.Record.Metric = "p50_ms"
	}
	if wp.Auto {
		w.Record.MaxCV, w.Record.MaxDrift = w.rule.MaxCV, w.rule.MaxDrift
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
	quiet := true
	if w.compiler != nil {
		c := w.compiler()
		r.CompilerCPU = append(r.CompilerCPU, math.Round(float64(c-w.compiled)/float64(time.Second)*1000)/10)
		w.compiled = c
		quiet = compilerQuiet(r.CompilerCPU, w.rule.Window)
	}
	if !r.Auto || w.done {
		return w.done
	}
	ok, cv, drift := w.rule.Holds(series)
	r.CV, r.Drift = finite(cv), finite(drift)
	if ok && quiet {
		w.done, r.Steady = true, true
	}
	return w.done
}

// compilerQuiet reports whether the compiler threads' mean CPU over the
// last window seconds is at most MaxCompilerCPU.
func compilerQuiet(cpu []float64, window int) bool {
	if len(cpu) < window {
		return false
	}
	return stats.Mean(cpu[len(cpu)-window:]) <= MaxCompilerCPU
}

// Attack runs a warm-up's load, calling on with each progress report,
// until ctx ends or the load does: an Attacker with load.OnProgress(on).
type Attack func(ctx context.Context, on func(load.Progress)) (*load.Result, error)

// Drive is the warm-up's drive loop, the lab's and the Kubernetes warm-up
// pod's: it runs attack, feeds each measured second to Observe and stops
// the load as soon as the rule holds. progress, when not nil, sees every
// report first (the lab's progress lines). It returns Record, finished
// with the requests and length of what ran; a load the rule stopped is
// no error.
func (w *Watch) Drive(ctx context.Context, attack Attack, progress func(load.Progress)) (*results.WarmupRun, error) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var mu sync.Mutex
	res, err := attack(wctx, func(p load.Progress) {
		if progress != nil {
			progress(p)
		}
		if p.Warmup || p.Elapsed == 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if w.Observe(p.Rate, p.IntervalP50) {
			stop()
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		return w.Record, err
	}
	if res != nil {
		w.Finish(res.Summary.Total.Samples, res.Summary.DurationSeconds)
	}
	return w.Record, nil
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
