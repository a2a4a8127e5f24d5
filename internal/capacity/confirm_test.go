package capacity

import (
	"math"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
)

// TestConfirmRates: from the interval's lower end down, by the larger of
// ConfirmStep and the resolution; whole users stay whole.
func TestConfirmRates(t *testing.T) {
	got := ConfirmRates(&results.Capacity{Rate: 30000, Low: 29000, High: 31000}, 0.02)
	want := []float64{29000, 27550, 26172.5, 24863.875}
	if len(got) != len(want) {
		t.Fatalf("rates %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6 {
			t.Errorf("rate %d: %g, want %g", i, got[i], want[i])
		}
	}
	if got := ConfirmRates(&results.Capacity{Rate: 300, Low: 300, LowerBound: true}, 0.1); got[1] != 270 {
		t.Errorf("resolution 10%%: second rate %g, want 270", got[1])
	}
	if got := ConfirmRates(&results.Capacity{Unit: results.UnitUsers, Rate: 41, Low: 39, High: 43}, 0.02); got[1] != 37 {
		t.Errorf("users: second %g, want 37 (whole)", got[1])
	}
	if got := ConfirmRates(&results.Capacity{}, 0.02); got != nil {
		t.Errorf("no capacity: %v, want none", got)
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
