package stats

import (
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
	for _, tc := range []struct {
		name     string
		cv       float64
		curve    func(int) float64
		warming  float64
		min, max int // when the rule may first hold; -1: never in 240 s
	}{
		// A quiet flat series: the shortest window is precise enough.
		{"quiet flat", 0.005, flat, 1, DefaultTrendMinWindow, DefaultTrendMinWindow},
		// 5% per-second noise: the interval needs about 50 s to be
		// narrower than 1% per 10 s; it holds 0 from the first window.
		{"noisy flat", 0.05, flat, 1, 35, 90},
		// Still rising 3% per 10 s: never, however long.
		{"rising", 0.05, func(i int) float64 { return 10000 * (1 + 0.003*float64(i)) }, 1, -1, -1},
		// Latency falling 3% per 10 s is warming too: never.
		{"latency falling", 0.05, func(i int) float64 { return 10 * (1 - 0.002*float64(i)) }, -1, -1, -1},
		// ... while falling throughput is no warming: steady once precise.
		{"throughput falling slowly", 0.01, func(i int) float64 { return 10000 * (1 - 0.001*float64(i)) }, 1, DefaultTrendMinWindow, 40},
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

// TestTrendAutocorrelation: a series that wanders in slow waves (the
// machine's speed drifting over seconds: AR(1) with coefficient 0.8 and
// a 5% standard deviation) has fewer independent values than seconds;
// the interval widens accordingly, so the rule waits for more than the
// minute white noise of that size needs. Without the correction 10 of
// these 12 series pass within 60 s.
func TestTrendAutocorrelation(t *testing.T) {
	early := 0
	for seed := uint64(1); seed <= 12; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		waves := make([]float64, 240)
		e := 0.0
		for i := range waves {
			e = 0.8*e + 0.03*r.NormFloat64()
			waves[i] = 10000 * (1 + e)
		}
		if got := firstHold(DefaultTrend, waves, 1); got >= 0 && got < 60 {
			early++
		}
	}
	if early > 2 {
		t.Errorf("slow waves of 5%%: the rule held within 60 s in %d of 12 series, want at most 2", early)
	}
}
