package stats

import (
	"math"
	"testing"
)

func TestRatioCI95(t *testing.T) {
	tests := []struct {
		name      string
		a, b      []float64
		low, high float64
		unbounded bool
	}{
		// Worked by hand: means 11 and 5.5, squared standard errors 1/3 and
		// 1/12, Welch df 4 (t 2.776), g 0.0212: [1.6246, 2.4622].
		{"two spreads", []float64{10, 11, 12}, []float64{5, 5.5, 6}, 1.6246, 2.4622, false},
		// No spread: the interval is the ratio itself.
		{"no spread", []float64{4, 4}, []float64{2, 2}, 2, 2, false},
		// One trial: no interval, the ratio alone.
		{"one trial", []float64{3}, []float64{2}, 1.5, 1.5, false},
		// The denominator's interval includes zero: Fieller gives no finite interval.
		{"denominator near zero", []float64{10, 11, 12}, []float64{-1, 0.5, 2}, 0, 0, true},
		// A zero denominator (e.g. 0% errors on every trial): no ratio.
		{"zero denominator", []float64{1, 2}, []float64{0, 0}, 0, 0, true},
	}
	for _, tc := range tests {
		got := RatioCI95(tc.a, tc.b)
		if got.Unbounded != tc.unbounded {
			t.Errorf("%s: unbounded = %v, want %v (%+v)", tc.name, got.Unbounded, tc.unbounded, got)
			continue
		}
		if tc.unbounded {
			if !got.Contains(123) {
				t.Errorf("%s: an unbounded interval must contain everything", tc.name)
			}
			continue
		}
		if math.Abs(got.Low-tc.low) > 5e-4 || math.Abs(got.High-tc.high) > 5e-4 {
			t.Errorf("%s: got [%.4f, %.4f], want [%.4f, %.4f]", tc.name, got.Low, got.High, tc.low, tc.high)
		}
		if !got.Contains(got.Ratio) || got.Contains(got.High+1) {
			t.Errorf("%s: Contains is wrong around [%.4f, %.4f]", tc.name, got.Low, got.High)
		}
	}
}
