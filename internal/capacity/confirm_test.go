package capacity

import (
	"math"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
)

// TestConfirmRates: from a start's edge down, each step back one more
// of the larger of ConfirmStep and the resolution; whole users stay
// whole.
func TestConfirmRates(t *testing.T) {
	got := ConfirmRates(29000, results.UnitRate, 0.02)
	want := []float64{29000, 27550, 24795, 21075.75, 16860.6, 12645.45}
	if len(got) != len(want) {
		t.Fatalf("rates %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6 {
			t.Errorf("rate %d: %g, want %g", i, got[i], want[i])
		}
	}
	// A resolution of 20%: steps of 20, 40, 60, 80%, and none at zero.
	if got := ConfirmRates(300, results.UnitRate, 0.2); len(got) != 5 || got[1] != 240 || got[4] <= 0 {
		t.Errorf("resolution 20%%: rates %v, want 300, 240, 144, 57.6, 11.52", got)
	}
	if got := ConfirmRates(39, results.UnitUsers, 0.02); got[1] != 37 || got[2] != 33 {
		t.Errorf("users: %v, want 39, 37, 33 (whole)", got)
	}
	if got := ConfirmRates(0, results.UnitRate, 0.02); got != nil {
		t.Errorf("no edge: %v, want none", got)
	}
}

// TestProbeDisturbed judges probes from their own records.
func TestProbeDisturbed(t *testing.T) {
	tests := []struct {
		name string
		pr   results.Probe
		want string
	}{
		{"clean", results.Probe{StealPercent: 1, OtherServiceCPU: 4, GeneratorCPU: 40}, ""},
		{"steal", results.Probe{StealPercent: 12}, "stole 12%"},
		{"other process", results.Probe{OtherServiceCPU: 60}, "60% of a CPU"},
		// The noisy day's second start: late sends at 47% busy.
		{"late while idle", results.Probe{GeneratorLimited: true, LatenessP99Ms: 1.1, GeneratorCPU: 47}, "late while 47% busy"},
		// Late because the generator itself was busy: its own limit.
		{"late and busy", results.Probe{GeneratorLimited: true, LatenessP99Ms: 1.1, GeneratorCPU: 85}, ""},
	}
	for _, tc := range tests {
		got := Disturbed(tc.pr)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRefine bisects between the rate that held and the one above that
// failed while they are further apart than the resolution, in whole
// users on the users scale.
func TestRefine(t *testing.T) {
	tests := []struct {
		name              string
		held, failed, res float64
		unit              string
		want              float64
		ok                bool
	}{
		{"a 5% step", 20000, 21000, 0.02, results.UnitRate, 20500, true},
		{"within the resolution", 20000, 20300, 0.02, results.UnitRate, 0, false},
		{"nothing failed above", 20000, 0, 0.02, results.UnitRate, 0, false},
		{"nothing held", 0, 21000, 0.02, results.UnitRate, 0, false},
		{"users: whole", 40, 45, 0.02, results.UnitUsers, 42, true},
		{"users: adjacent", 40, 41, 0.01, results.UnitUsers, 0, false},
	}
	for _, tc := range tests {
		got, ok := Refine(tc.held, tc.failed, tc.unit, tc.res)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %g, %v; want %g, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
