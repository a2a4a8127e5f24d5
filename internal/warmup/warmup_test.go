package warmup

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
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
		{"auto later", plan.Warmup{Auto: true, Max: plan.Duration(3 * time.Minute)}, false, time.Minute},
		// ... but never less than the trend rule's shortest window and two seconds.
		{"auto later, short max", plan.Warmup{Auto: true, Max: minute}, false, time.Duration(stats.DefaultTrendMinWindow+2) * time.Second},
	} {
		if got := Budget(tc.wp, tc.first); got != tc.want {
			t.Errorf("%s: Budget = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// compiler is a runtime as WatchRuntime reads it: the compiler threads'
// CPU time so far and the runtime's name; busy gives each second's share
// of a CPU (percent).
type compiler struct {
	runtime string
	busy    func(second int) float64
	second  int
	cpu     time.Duration
}

func (c *compiler) read() (time.Duration, string) {
	if c.second > 0 && c.busy != nil {
		c.cpu += time.Duration(c.busy(c.second-1) * float64(time.Second) / 100)
	}
	c.second++
	return c.cpu, c.runtime
}

// run feeds series to a fresh automatic closed-model watch on runtime rt
// (nil: threads unseen) and returns the second (1-based) it stopped at,
// or -1.
func run(series []float64, rt *compiler) (int, *Watch) {
	w := NewWatch(plan.Warmup{Auto: true}, false)
	if rt != nil {
		w.WatchRuntime(rt.read)
	}
	for i, v := range series {
		if w.Observe(v, time.Millisecond) {
			return i + 1, w
		}
	}
	return -1, w
}

// noisy is n seconds of curve(i) with Gaussian noise of cv per second.
func noisy(seed uint64, n int, cv float64, curve func(i int) float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 2))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = curve(i) * (1 + cv*r.NormFloat64())
	}
	return xs
}

func TestWatch(t *testing.T) {
	// Open model: the rule watches the median latency, which falls and
	// then holds; the threads are not seen, so the trend alone decides.
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
	r := w.Record
	if stopped < 10 || stopped > 10+stats.DefaultTrendMinWindow || !r.Steady || r.Metric != "p50_ms" || len(r.Series) != stopped+1 || r.Rule != RuleTrend {
		t.Errorf("stopped at second %d, record %+v", stopped, r)
	}
	// A fixed warm-up records the curve and never stops early.
	f := NewWatch(plan.Warmup{Time: plan.Duration(time.Minute)}, false)
	for i := 0; i < 30; i++ {
		if f.Observe(100, time.Millisecond) {
			t.Fatal("a fixed warm-up stopped early")
		}
	}
	f.Finish(3000, 30.04)
	if !f.Record.Steady || f.Record.Auto || f.Record.Rule != "" || len(f.Record.Throughput) != 30 || f.Record.Requests != 3000 || f.Record.Seconds != 30 {
		t.Errorf("fixed warm-up record %+v", f.Record)
	}
}

// TestWatchWaitsForCompiler: a throughput plateau on which the JIT
// compiler still works is not steady; once the compiler is quiet the rule
// may hold.
func TestWatchWaitsForCompiler(t *testing.T) {
	flat := make([]float64, 120) // 4,000 req/s all along
	for i := range flat {
		flat[i] = 4000
	}
	// The compiler uses 60% of a CPU for the first 40 s, then 1%.
	jvm := &compiler{runtime: "hotspot", busy: func(s int) float64 {
		if s < 40 {
			return 60
		}
		return 1
	}}
	stopped, w := run(flat, jvm)
	// Not before the compiler is quiet, and within its window after:
	// one second at 60% holds the window's mean above the threshold.
	if stopped <= 40 || stopped > 40+CompilerWindow || !w.Record.Steady || w.Record.Rule != RuleCompilerTrend || w.Record.Runtime != "hotspot" {
		t.Errorf("stopped at second %d, record %+v; want between 41 and %d", stopped, w.Record, 40+CompilerWindow)
	}
	cpu := w.Record.CompilerCPU
	if len(cpu) != stopped || cpu[0] != 60 || cpu[stopped-1] != 1 {
		t.Errorf("compiler series %v", cpu)
	}
	// WatchCompiler is the same rule.
	w = NewWatch(plan.Warmup{Auto: true}, false)
	var compiled time.Duration
	w.WatchCompiler(func() time.Duration { compiled += 600 * time.Millisecond; return compiled })
	for i := range 60 {
		if w.Observe(4000, time.Millisecond) {
			t.Fatalf("stopped at second %d while the compiler used 60%% of a CPU", i+1)
		}
	}
	// With the threads unseen, the same plateau is steady after the
	// trend's first window.
	if stopped, w := run(flat, nil); stopped != stats.DefaultTrendMinWindow || w.Record.Rule != RuleTrend {
		t.Errorf("unwatched compiler: stopped at second %d (rule %q), want %d", stopped, w.Record.Rule, stats.DefaultTrendMinWindow)
	}
}

// TestWatchRules: the rule follows the runtime the threads show.
func TestWatchRules(t *testing.T) {
	// Climbing 5% per 10 s: a series only the no-jit rule ends.
	climbing := make([]float64, 120)
	for i := range climbing {
		climbing[i] = 10000 * math.Pow(1.005, float64(i))
	}
	late := func() *compiler { // a JVM whose compiler threads show from its fourth second
		c := &compiler{}
		c.busy = func(s int) float64 {
			if s >= 3 {
				c.runtime = "hotspot"
			}
			return 0
		}
		return c
	}
	for _, tc := range []struct {
		name     string
		rt       *compiler
		wantRule string
		wantStop int
	}{
		// Go, Rust, CPython: NoJITWarmup, whatever the series does.
		{"no JIT", &compiler{}, RuleNoJIT, int(NoJITWarmup / time.Second)},
		// Node: the trend alone, which a climb never satisfies.
		{"v8", &compiler{runtime: "v8"}, RuleTrend, -1},
		// A JVM: compiler and trend.
		{"hotspot", &compiler{runtime: "hotspot"}, RuleCompilerTrend, -1},
		// Compiler threads that show late change the rule from then on.
		{"hotspot seen late", late(), RuleCompilerTrend, -1},
		// Threads not seen (Kubernetes): the trend alone.
		{"unseen", nil, RuleTrend, -1},
	} {
		stopped, w := run(climbing, tc.rt)
		if stopped != tc.wantStop || w.Record.Rule != tc.wantRule || w.Record.Steady != (tc.wantStop > 0) {
			t.Errorf("%s: stopped at %d, rule %q, steady %v; want %d, %q", tc.name, stopped, w.Record.Rule, w.Record.Steady, tc.wantStop, tc.wantRule)
		}
	}
}

// TestWatchNoise: the machine's noise is recorded beside the rule and
// changes nothing in it.
func TestWatchNoise(t *testing.T) {
	series := noisy(5, 240, 0.10, func(int) float64 { return 20000 })
	plain, _ := run(series, &compiler{runtime: "v8"})
	w := NewWatch(plan.Warmup{Auto: true}, false)
	w.WatchRuntime((&compiler{runtime: "v8"}).read)
	w.Floor(0.20)
	stopped := -1
	for i, v := range series {
		if w.Observe(v, time.Millisecond) {
			stopped = i + 1
			break
		}
	}
	if stopped != plain || plain < 0 || w.Record.Noise != 0.20 {
		t.Errorf("with the machine's noise: stopped at %d (noise %v), without: %d", stopped, w.Record.Noise, plain)
	}
}

// TestWatchSynthetic: synthetic warm-ups with 5% per-second noise.
func TestWatchSynthetic(t *testing.T) {
	// A JVM's curve: 4k climbing to 40k req/s, its remaining rise under
	// 1% from about 54 s on; its compiler busy until 50 s.
	warming := func(i int) float64 { return 40000 * (1 - 0.9*math.Exp(-float64(i)/12)) }
	compiling := func() *compiler {
		return &compiler{runtime: "hotspot", busy: func(s int) float64 {
			if s < 50 {
				return 25
			}
			return 0
		}}
	}
	for seed := uint64(1); seed <= 10; seed++ {
		series := noisy(seed, 240, 0.05, warming)
		stopped, w := run(series, compiling())
		// Near where the curve flattens (the trend needs a window of
		// about 25 s beyond it), not at the 240 s cap ...
		if stopped < 50 || stopped > 180 {
			t.Errorf("seed %d: warming curve stopped at %d s, want 50-180", seed, stopped)
			continue
		}
		// ... and the rule's window serves what the last 40 s do, within 5%.
		win := stats.Mean(series[stopped-w.Record.Window : stopped])
		if last := stats.Mean(series[200:]); win < 0.95*last {
			t.Errorf("seed %d: the steady window's mean %.0f is %.1f%% under the last 40 s (%.0f)", seed, win, 100*(1-win/last), last)
		}
		// A flat series with a quiet compiler ends early (half of them
		// within about 50 s).
		flat := noisy(seed, 240, 0.05, func(int) float64 { return 40000 })
		if stopped, _ := run(flat, &compiler{runtime: "hotspot"}); stopped < 0 || stopped > 150 {
			t.Errorf("seed %d: flat series stopped at %d s, want by 150 s", seed, stopped)
		}
		// A series still rising 5% per 10 s never ends, compiler quiet or not.
		rising := noisy(seed, 240, 0.05, func(i int) float64 { return 10000 * math.Pow(1.005, float64(i)) })
		if stopped, _ := run(rising, &compiler{runtime: "hotspot"}); stopped >= 0 {
			t.Errorf("seed %d: a series still rising 5%% per 10 s stopped at %d s", seed, stopped)
		}
	}
}

// TestWatchNoisyDay replays the warm-ups of the default plan's run on a
// noisy day (testdata: ../shared/fixtures/noisy-day-2026-11-27), each
// recorded until the rule then in force held. Runtimes without a JIT end
// after NoJITWarmup; a JVM not before its compiler has been quiet for a
// window; node-http's 228 s are cut short.
func TestWatchNoisyDay(t *testing.T) {
	b, err := os.ReadFile("testdata/noisy-day-2026-11-27.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Warmups []struct {
			Implementation string
			Start          int
			Seconds        float64
			Throughput     []float64
			CompilerCPU    []float64 `json:"compiler_cpu_percent"`
		}
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Warmups) != 12 {
		t.Fatalf("%d warm-ups in the fixture, want 12", len(fx.Warmups))
	}
	for _, wu := range fx.Warmups {
		name := wu.Implementation + " start " + string(rune('0'+wu.Start))
		rt := &compiler{busy: func(s int) float64 { return wu.CompilerCPU[min(s, len(wu.CompilerCPU)-1)] }}
		switch {
		case strings.HasPrefix(wu.Implementation, "java-"):
			rt.runtime = "hotspot"
		case strings.HasPrefix(wu.Implementation, "node-"):
			rt.runtime = "v8"
		}
		stopped, w := run(wu.Throughput, rt)
		// The last second the compiler used more than MaxCompilerCPU.
		busy := 0
		for i, c := range wu.CompilerCPU {
			if c > MaxCompilerCPU {
				busy = i + 1
			}
		}
		switch {
		case rt.runtime == "":
			if want := int(NoJITWarmup / time.Second); stopped != want {
				t.Errorf("%s: stopped at %d s (then %.0f s), want %d", name, stopped, wu.Seconds, want)
			}
		case rt.runtime == "hotspot" && stopped >= 0 && stopped < busy+CompilerWindow:
			t.Errorf("%s: stopped at %d s, its compiler busy until %d s", name, stopped, busy)
		case name == "node-http start 1" && (stopped < 0 || stopped > 120):
			t.Errorf("%s: stopped at %d s (then %.0f s), want within 120 s", name, stopped, wu.Seconds)
		case name == "java-spring start 2" && stopped < 0:
			t.Errorf("%s: not steady within the %.0f s recorded (compiler quiet from %d s); record %+v", name, wu.Seconds, busy, w.Record)
		}
	}
}
