package stats

import (
	"math"
	"testing"
)

// Two-sided p-values of Student's t at textbook critical values.
func TestWelchDistribution(t *testing.T) {
	for _, tc := range []struct{ t, df, p float64 }{
		{12.706, 1, 0.05},   // df 1, 95%
		{2.228, 10, 0.05},   // df 10, 95%
		{3.169, 10, 0.01},   // df 10, 99%
		{1.962, 1000, 0.05}, // close to the normal
		{0, 5, 1},           // no difference
	} {
		p := regIncBeta(tc.df/2, 0.5, tc.df/(tc.df+tc.t*tc.t))
		if math.Abs(p-tc.p) > 0.0006 {
			t.Errorf("t=%v df=%v: p=%.5f, want %.3f", tc.t, tc.df, p, tc.p)
		}
	}
	// identical samples with no variance: p=1; different ones: p=0
	if p := WelchP([]float64{1, 1}, []float64{1, 1}); p != 1 {
		t.Errorf("identical: p=%v, want 1", p)
	}
	if p := WelchP([]float64{1, 1}, []float64{2, 2}); p != 0 {
		t.Errorf("constant but different: p=%v, want 0", p)
	}
}

// Upper-tail p-values of F at textbook critical values.
func TestFP(t *testing.T) {
	for _, tc := range []struct {
		f      float64
		d1, d2 int
		p      float64
	}{
		{2.571 * 2.571, 1, 5, 0.05}, // F(1, d) is t(d)²
		{5.79, 2, 5, 0.05},          // F(2, 5), 95%
		{3.33, 5, 10, 0.05},         // F(5, 10), 95%
		{0, 1, 5, 1},                // no lack of fit
	} {
		if got := FP(tc.f, tc.d1, tc.d2); math.Abs(got-tc.p) > 0.001 {
			t.Errorf("F=%v (%d, %d): got p %.4f, want %.3f", tc.f, tc.d1, tc.d2, got, tc.p)
		}
	}
}
