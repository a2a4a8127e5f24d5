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
// workload and LaterShare of it (at least the trend rule's shortest
// window and two seconds) for later ones.
func Budget(w plan.Warmup, first bool) time.Duration {
	if !w.Auto {
		return time.Duration(w.Time)
	}
	d := time.Duration(w.Max)
	if !first {
		d = max(time.Duration(float64(d)*LaterShare), time.Duration(stats.DefaultTrendMinWindow+2)*time.Second)
	}
	return d
}

// The rules that end an automatic warm-up, one per kind of runtime; the
// record names the one applied (results.WarmupRun.Rule). The machine's
// noise decides none of them: a runtime is warm when it has stopped
// changing, not when the machine is quiet. plans/README.md ("Warm-up
// until steady state") has the measurements behind each.
const (
	// RuleCompilerTrend is the rule of a runtime whose JIT compiler
	// threads can be watched (HotSpot: C1, C2, a JVMCI compiler): they
	// used at most MaxCompilerCPU over the last CompilerWindow seconds,
	// and the series has no rise left (stats.DefaultTrend).
	RuleCompilerTrend = "compiler+trend"
	// RuleTrend is the trend alone: for a runtime with a JIT whose
	// compiler cannot be told apart (V8, which compiles on the worker
	// threads of its garbage collector), and for a service whose threads
	// cannot be seen at all (the Kubernetes warm-up pod).
	RuleTrend = "trend"
	// RuleNoJIT is a fixed NoJITWarmup for a runtime that compiles
	// nothing while it serves (Go, Rust, CPython 3.11): it fills the
	// connection pools and caches, then measures.
	RuleNoJIT = "no-jit"
)

// NoJITWarmup is how long a runtime without a JIT is warmed: its pools
// fill with the first requests of 50 users, Go's heap and GC pacer settle
// within a few of the dozens of collections a second such a load makes,
// and CPython's specializing interpreter rewrites a function after a few
// calls. Such stacks reach their level within seconds (measured:
// bench/README.md, "Where the constants come from"); ten seconds leave a margin over that, and equal the window the
// compiler condition averages over.
const NoJITWarmup = 10 * time.Second

// SteadyMaxCV is the per-second coefficient of variation the steady-state
// rule allows a warmed service's throughput: a machine whose own noise
// is above it leaves a remaining rise harder to rule out.
const SteadyMaxCV = stats.DefaultSteadyMaxCV

// CompilerWindow is the span (seconds) over which the compiler threads'
// CPU is averaged against MaxCompilerCPU.
const CompilerWindow = stats.DefaultSteadyWindow

// Watch applies the steady-state rule to a warm-up's per-second series
// as it comes, recording the curve in Record.
type Watch struct {
	// Record is the warm-up as results.WarmupRun records it.
	Record *results.WarmupRun
	trend  stats.Trend
	open   bool
	done   bool
	// compiler reads the service's compiler threads' CPU time so far and
	// the runtime its threads show; nil when they cannot be seen (the
	// service runs elsewhere).
	compiler func() (time.Duration, string)
	compiled time.Duration
}

// MaxCompilerCPU is the compiler condition of RuleCompilerTrend: the
// runtime's compiler threads used at most this share of one CPU
// (percent), on average over CompilerWindow. A JVM whose throughput rests
// on a plateau while C2 still compiles its hot paths is not warm: its
// throughput is about to climb again (plans/README.md has the
// measurement behind the value).
const MaxCompilerCPU = 2.0

// WatchRuntime chooses the rule by the runtime the service's threads show
// and watches its compiler: read gives what monitor.Compiler does (the
// compiler threads' CPU time so far, and "hotspot", "v8" or "" for a
// runtime without a JIT), and is called now and once a second. A runtime
// recognised later (its compiler threads started late) changes the rule
// from then on.
func (w *Watch) WatchRuntime(read func() (time.Duration, string)) {
	w.compiler = read
	var rt string
	w.compiled, rt = read()
	w.runtime(rt)
}

// runtime sets the rule for the runtime rt shows ("hotspot", "v8" as
// monitor names them, "" for none); a runtime once recognised stays.
func (w *Watch) runtime(rt string) {
	r := w.Record
	switch {
	case rt == "hotspot":
		r.Runtime, r.Rule = rt, RuleCompilerTrend
	case rt != "" && r.Rule != RuleCompilerTrend:
		r.Runtime, r.Rule = rt, RuleTrend
	case rt == "" && r.Runtime == "":
		r.Rule = RuleNoJIT
	}
	if r.Rule == RuleNoJIT {
		r.MaxRise = 0 // no trend judged
	} else if r.Auto {
		r.MaxRise = w.trend.MaxRise
	}
}

// Floor records the machine's per-second noise (cv, noise.Floor.Max)
// beside the rule's figures. No threshold rises with it: the trend rule's
// interval widens by itself with the noise the series shows.
func (w *Watch) Floor(cv float64) {
	if math.IsNaN(cv) || cv <= 0 {
		return
	}
	w.Record.Noise = cv
}

// NewWatch starts watching a warm-up in the open or the closed model.
// The open model's throughput is its send rate, so there the rule watches
// the median latency; the closed model's is the throughput. Until
// WatchRuntime says otherwise the rule is RuleTrend.
func NewWatch(wp plan.Warmup, open bool) *Watch {
	w := &Watch{Record: &results.WarmupRun{Auto: wp.Auto, Steady: !wp.Auto, Metric: "throughput"}, trend: stats.DefaultTrend, open: open}
	if w.open {
		w.Record.Metric = "p50_ms"
	}
	if wp.Auto {
		w.Record.Rule = RuleTrend
		w.Record.MaxRise = w.trend.MaxRise
	}
	return w
}

// Observe adds one second (completed requests per second and the
// interval's median latency) and reports whether the rule holds now:
// then the warm-up may stop. A fixed warm-up never stops early.
func (w *Watch) Observe(rate float64, p50 time.Duration) bool {
	r := w.Record
	r.Throughput = append(r.Throughput, rate)
	series, warming := r.Throughput, 1.0
	if w.open {
		r.Series = append(r.Series, float64(p50)/1e6)
		series, warming = r.Series, -1
	}
	if w.compiler != nil {
		c, rt := w.compiler()
		r.CompilerCPU = append(r.CompilerCPU, math.Round(float64(c-w.compiled)/float64(time.Second)*1000)/10)
		w.compiled = c
		if r.Auto && !w.done {
			w.runtime(rt)
		}
	}
	if !r.Auto || w.done {
		return w.done
	}
	if r.Rule == RuleNoJIT {
		r.Window = len(series)
		w.done = time.Duration(len(series))*time.Second >= NoJITWarmup
		r.Steady = w.done
		return w.done
	}
	f := w.trend.Holds(series, warming)
	r.Window, r.Rise, r.RiseHigh = f.Window, finite(f.Rise), finite(f.High)
	if f.Window > 0 {
		r.CV = finite(stats.CV(series[len(series)-f.Window:]))
	}
	quiet := r.Rule != RuleCompilerTrend || compilerQuiet(r.CompilerCPU, CompilerWindow)
	if f.Holds && quiet {
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
