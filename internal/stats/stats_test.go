package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-3 }

func TestCI95(t *testing.T) {
	tests := []struct {
		name      string
		xs        []float64
		mean, low float64
	}{
		{"one value: no spread", []float64{10}, 10, 10},                       // an interval of one point
		{"three values", []float64{9, 10, 11}, 10, 10 - 4.303*1/math.Sqrt(3)}, // t(2) = 4.303, sd 1
		{"equal values", []float64{5, 5, 5, 5}, 5, 5},                         // zero width
	}
	for _, tt := range tests {
		iv := CI95(tt.xs)
		if !near(iv.Mean, tt.mean) || !near(iv.Low, tt.low) || !near(iv.Mean-iv.Low, iv.High-iv.Mean) {
			t.Errorf("%s: CI95(%v) = %+v, want mean %v low %v", tt.name, tt.xs, iv, tt.mean, tt.low)
		}
	}
	a, b, c := CI95([]float64{100, 101, 99}), CI95([]float64{110, 111, 109}), CI95([]float64{100, 108, 92})
	if a.Overlaps(b) {
		t.Errorf("%+v and %+v overlap", a, b)
	}
	if !a.Overlaps(c) || !c.Overlaps(b) {
		t.Errorf("a wide interval %+v should overlap both", c)
	}
	if !CI95([]float64{1}).Overlaps(b) {
		t.Error("one trial must not decide a winner")
	}
}

func TestSteady(t *testing.T) {
	r := Steady{Window: 5, MaxCV: 0.05, MaxDrift: 0.05}
	tests := []struct {
		name   string
		series []float64
		want   bool
	}{
		{"too short", []float64{10, 10, 10}, false},                                // less than a window
		{"flat", []float64{1, 50, 100, 100, 101, 99, 100, 100}, true},              // last five flat: early ramp ignored
		{"still climbing", []float64{60, 70, 80, 90, 100}, false},                  // drift 40%
		{"noisy", []float64{100, 80, 120, 90, 110}, false},                         // CV ~16%
		{"slow climb within bounds", []float64{100, 100.5, 101, 101.5, 102}, true}, // drift 2%
		{"nothing served", []float64{0, 0, 0, 0, 0}, false},                        // no mean
	}
	for _, tt := range tests {
		if got, cv, drift := r.Holds(tt.series); got != tt.want {
			t.Errorf("%s: Holds(%v) = %v (cv %.3f, drift %.3f), want %v", tt.name, tt.series, got, cv, drift, tt.want)
		}
	}
}

func TestMedianAndGeoMean(t *testing.T) {
	xs := []float64{5, 1, 3, 2}
	if got := Median(xs); got != 2.5 {
		t.Errorf("Median(%v) = %v, want 2.5", xs, got)
	}
	if xs[0] != 5 || xs[3] != 2 {
		t.Errorf("Median reordered its input: %v", xs)
	}
	if got := Median([]float64{4, 9, 1}); got != 4 {
		t.Errorf("Median of three = %v, want 4", got)
	}
	if !math.IsNaN(Median(nil)) || !math.IsNaN(GeoMean(nil)) || !math.IsNaN(GeoMean([]float64{0, -1})) {
		t.Error("the median or geometric mean of nothing is not NaN")
	}
	// The values not taken (0) are left out, not averaged in.
	if got := GeoMean([]float64{2, 0, 8}); math.Abs(got-4) > 1e-12 {
		t.Errorf("GeoMean(2, 0, 8) = %v, want 4", got)
	}
}
