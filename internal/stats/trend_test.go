package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// noisy is n seconds of curve(i) with Gaussian noise of cv per second.
func noisy(seed uint64, n int, cv float64, curve func(i int) float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = curve(i) * (1 + cv*r.NormFloat64())
	}
	return xs
}

// firstHold is the length of the shortest prefix of xs on which the rule
// holds (-1: none).
func firstHold(r Trend, xs []float64, warming float64) int {
	for n := 1; n <= len(xs); n++ {
		if r.Holds(xs[:n], warming).Holds {
			return n
		}
	}
	return -1
}

func TestTrend(t *testing.T) {
	flat := func(int) float64 { return 10000 }
	rising := func(perSecond float64) func(int) float64 {
		return func(i int) float64 { return 10000 * math.Pow(1+perSecond, float64(i)) }
	}
	for _, tc := range []struct {
		name     string
		cv       float64
		curve    func(int) float64
		warming  float64
		min, max int // when the rule may first hold; -1: never in 240 s
	}{
		// A quiet flat series: the shortest window is precise enough.
		{"quiet flat", 0.005, flat, 1, DefaultTrendMinWindow, DefaultTrendMinWindow},
		// 5% per-second noise: the interval holds 0 from the first
		// window, but its upper end is under 1% per 10 s only once the
		// window is long enough for the noise, about 25 s, and then on
		// a window whose estimate fell.
		{"noisy flat", 0.05, flat, 1, 21, 150},
		// Still rising 5% per 10 s: never, however long.
		{"rising", 0.05, rising(0.005), 1, -1, -1},
		// Latency falling 5% per 10 s is warming too: never.
		{"latency falling", 0.05, rising(-0.005), -1, -1, -1},
		// ... while falling throughput is no warming: steady at once.
		{"throughput falling", 0.01, rising(-0.002), 1, DefaultTrendMinWindow, DefaultTrendMinWindow},
	} {
		for seed := uint64(1); seed <= 20; seed++ {
			got := firstHold(DefaultTrend, noisy(seed, 240, tc.cv, tc.curve), tc.warming)
			if tc.max < 0 && got >= 0 || tc.max >= 0 && (got < tc.min || got > tc.max) {
				t.Errorf("%s, seed %d: the rule first held at %d s, want %d-%d", tc.name, seed, got, tc.min, tc.max)
			}
		}
	}
	// Too short, or nothing served: no fit at all.
	if f := DefaultTrend.Holds(make([]float64, 30), 1); f.Window != 0 || f.Holds {
		t.Errorf("zeros: %+v, want no fit", f)
	}
	if f := DefaultTrend.Holds([]float64{1, 2, 3}, 1); f.Window != 0 {
		t.Errorf("3 values: %+v, want no fit", f)
	}
}

// TestTrendWindow: the window grows with the noise, as the slope
// interval's width needs (about the power 2/3 of the noise), and a
// stalled second does not lengthen it.
func TestTrendWindow(t *testing.T) {
	flat := func(int) float64 { return 10000 }
	prev := 0
	for _, cv := range []float64{0.005, 0.05, 0.10, 0.20} {
		w := DefaultTrend.NoiseWindow(noisy(3, 120, cv, flat))
		if w < prev || w < DefaultTrendMinWindow {
			t.Errorf("noise %.3f: window %d s after %d s for less noise", cv, w, prev)
		}
		prev = w
	}
	if w := DefaultTrend.NoiseWindow(noisy(3, 120, 0.05, flat)); w < 22 || w > 30 {
		t.Errorf("5%% noise: window %d s, want about 25 s", w)
	}
	xs := noisy(3, 120, 0.05, flat)
	before := DefaultTrend.NoiseWindow(xs)
	xs[100] = 100 // a second in which the machine stalled
	if after := DefaultTrend.NoiseWindow(xs); after < before || after > before+2 {
		t.Errorf("one stalled second moved the window from %d to %d s", before, after)
	}
}

// TestTrendAutocorrelation: noise that wanders in slow waves (the
// machine's speed drifting over seconds: AR(1) with coefficient 0.6) has
// fewer independent values than seconds. Treated as independent, a 30 s
// window's slope interval covers the true slope of 0 in about two
// windows of three; widened by the residuals' autocorrelation in about
// 87% (the lag-1 estimate from 30 values is low, so the correction is
// partial).
func TestTrendAutocorrelation(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	const n = 2000
	covered := 0
	for range n {
		w := make([]float64, 30)
		e := 0.0
		for i := range 50 + len(w) { // 50 s to forget the start
			e = 0.6*e + 0.04*r.NormFloat64()
			if i >= 50 {
				w[i-50] = 10000 * (1 + e)
			}
		}
		if f := DefaultTrend.fit(w, 1); f.Low <= 0 && 0 <= f.High {
			covered++
		}
	}
	if got := float64(covered) / n; got < 0.85 {
		t.Errorf("slope interval covered 0 in %.1f%% of AR(1) windows, want at least 85%%", 100*got)
	}
}

// TestTrendWindowFor: the window a noise needs, and the series' own
// estimate of it agrees for white noise.
func TestTrendWindowFor(t *testing.T) {
	for _, tc := range []struct {
		cv   float64
		want int
	}{
		{0, DefaultTrendMinWindow},    // no noise: the shortest window
		{0.01, DefaultTrendMinWindow}, // a quiet machine
		{0.05, 24},                    // cbrt(12 (2 0.05 10 / 0.03)^2) = 23.7
		{0.15, 50},                    // cbrt(12 (2 0.15 10 / 0.03)^2) = 49.3
	} {
		if got := DefaultTrend.WindowFor(tc.cv); got != tc.want {
			t.Errorf("WindowFor(%v) = %d, want %d", tc.cv, got, tc.want)
		}
	}
	if got := DefaultTrend.NoiseWindow(noisy(4, 120, 0.15, func(int) float64 { return 1000 })); got < 45 || got > 56 {
		t.Errorf("NoiseWindow of 15%% white noise = %d, want about 50", got)
	}
}
