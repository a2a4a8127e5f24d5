package warmup

import (
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/stats"
)

func TestBudget(t *testing.T) {
	minute := plan.Duration(time.Minute)
	for _, tc := range []struct {
		name  string
		wp    plan.Warmup
		first bool
		want  time.Duration
	}{
		// A fixed warm-up lasts its time, first workload or not.
		{"fixed", plan.Warmup{Time: plan.Duration(20 * time.Second)}, false, 20 * time.Second},
		// Auto: the first workload of a start may take warmup_max.
		{"auto first", plan.Warmup{Auto: true, Max: minute}, true, time.Minute},
		// Auto: later workloads a third of it.
		{"auto later", plan.Warmup{Auto: true, Max: minute}, false, 20 * time.Second},
		// ... but never less than the rule's window and two seconds.
		{"auto later, short max", plan.Warmup{Auto: true, Max: plan.Duration(3 * time.Second)}, false, time.Duration(stats.DefaultSteadyWindow+2) * time.Second},
	} {
		if got := Budget(tc.wp, tc.first); got != tc.want {
			t.Errorf("%s: Budget = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestWatch(t *testing.T) {
	// Open model: the rule watches the median latency, which falls and
	// then holds.
	w := NewWatch(plan.Warmup{Auto: true}, true)
	stopped := -1
	for i := 0; i < 60 && stopped < 0; i++ {
		p50 := 2 * time.Millisecond // steady after ten slow seconds
		if i < 10 {
			p50 = time.Duration(50-4*i) * time.Millisecond
		}
		if w.Observe(100, p50) {
			stopped = i
		}
	}
	if stopped < 10 || stopped > 10+2*stats.DefaultSteadyWindow || !w.Record.Steady || w.Record.Metric != "p50_ms" || len(w.Record.Series) != stopped+1 {
		t.Errorf("stopped at second %d, record %+v", stopped, w.Record)
	}
	// A fixed warm-up records the curve and never stops early.
	f := NewWatch(plan.Warmup{Time: plan.Duration(time.Minute)}, false)
	for i := 0; i < 30; i++ {
		if f.Observe(100, time.Millisecond) {
			t.Fatal("a fixed warm-up stopped early")
		}
	}
	f.Finish(3000, 30.04)
	if !f.Record.Steady || f.Record.Auto || len(f.Record.Throughput) != 30 || f.Record.Requests != 3000 || f.Record.Seconds != 30 {
		t.Errorf("fixed warm-up record %+v", f.Record)
	}
}

// TestWatchWaitsForCompiler: a throughput plateau on which the JIT
// compiler still works is not steady; once the compiler is quiet the rule
// may hold.
func TestWatchWaitsForCompiler(t *testing.T) {
	w := NewWatch(plan.Warmup{Auto: true}, false)
	var compiled time.Duration
	w.WatchCompiler(func() time.Duration { return compiled })
	stopped := -1
	for i := 0; i < 120 && stopped < 0; i++ {
		// A flat 4,000 req/s all along; the compiler uses 60% of a CPU
		// for the first 40 s, then 1%.
		if i < 40 {
			compiled += 600 * time.Millisecond
		} else {
			compiled += 10 * time.Millisecond
		}
		if w.Observe(4000, time.Millisecond) {
			stopped = i
		}
	}
	// Not before the compiler is quiet, and within a window after: one
	// second at 60% holds the window's mean above the threshold.
	if stopped < 40 || stopped > 40+stats.DefaultSteadyWindow || !w.Record.Steady {
		t.Errorf("stopped at second %d (steady %v), want between 40 and %d", stopped, w.Record.Steady, 40+stats.DefaultSteadyWindow)
	}
	if len(w.Record.CompilerCPU) != stopped+1 || w.Record.CompilerCPU[0] != 60 || w.Record.CompilerCPU[stopped] != 1 {
		t.Errorf("compiler series %v", w.Record.CompilerCPU)
	}
	// Without the compiler watched, the same plateau is steady after the
	// first window.
	u := NewWatch(plan.Warmup{Auto: true}, false)
	for i := 0; i < stats.DefaultSteadyWindow; i++ {
		if u.Observe(4000, time.Millisecond) != (i == stats.DefaultSteadyWindow-1) {
			t.Fatalf("unwatched compiler: second %d", i)
		}
	}
}

// TestWatchFloor holds the rule to the machine's noise where that is the
// larger: a flat series that swings between two levels (the way this
// machine's own speed does) is steady against a 20% floor, not against
// the rule's 5%, and a floor below 5% changes nothing.
func TestWatchFloor(t *testing.T) {
	swing := func(i int) float64 { // CV about 15%, no trend
		if i%4 < 2 {
			return 20000
		}
		return 27000
	}
	for _, tc := range []struct {
		name       string
		floor      float64
		wantSteady bool
		wantCV     float64
		wantDrift  float64
	}{
		// No floor measured: the rule's own 5%.
		{"no floor", 0, false, stats.DefaultSteadyMaxCV, stats.DefaultSteadyMaxDrift},
		// A quiet machine: still 5%.
		{"quiet machine", 0.03, false, stats.DefaultSteadyMaxCV, stats.DefaultSteadyMaxDrift},
		// A machine that swings 20% on its own: CV 20%, trend 10%.
		{"noisy machine", 0.20, true, 0.20, 0.10},
	} {
		w := NewWatch(plan.Warmup{Auto: true}, false)
		w.Floor(tc.floor)
		steady := false
		for i := 0; i < 30 && !steady; i++ {
			steady = w.Observe(swing(i), time.Millisecond)
		}
		if steady != tc.wantSteady || w.Record.MaxCV != tc.wantCV || w.Record.MaxDrift != tc.wantDrift {
			t.Errorf("%s: steady %v (CV %.3f, drift %.3f), thresholds %v/%v; want steady %v, thresholds %v/%v",
				tc.name, steady, w.Record.CV, w.Record.Drift, w.Record.MaxCV, w.Record.MaxDrift, tc.wantSteady, tc.wantCV, tc.wantDrift)
		}
	}
	// A trend the floor cannot hide: throughput climbing 3% a second is
	// not steady even on a noisy machine.
	w := NewWatch(plan.Warmup{Auto: true}, false)
	w.Floor(0.20)
	for i := 0; i < 30; i++ {
		if w.Observe(10000*(1+0.03*float64(i)), time.Millisecond) {
			t.Fatalf("a series climbing 3%% a second was called steady at second %d (drift %.3f)", i, w.Record.Drift)
		}
	}
}
