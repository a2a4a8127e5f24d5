package capacity

import (
	"math"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
)

// TestConfirmRates: from the interval's lower end (or the lowest rate
// every start held, when higher) down, each step back one more of the larger of
// ConfirmStep and the resolution; whole users stay whole.
func TestConfirmRates(t *testing.T) {
	got := ConfirmRates(&results.Capacity{Rate: 30000, Low: 29000, High: 31000}, 0.02)
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
	if got := ConfirmRates(&results.Capacity{Rate: 300, Low: 300, LowerBound: true}, 0.2); len(got) != 5 || got[1] != 240 || got[4] <= 0 {
		t.Errorf("resolution 20%%: rates %v, want 300, 240, 144, 57.6, 11.52", got)
	}
	if got := ConfirmRates(&results.Capacity{Unit: results.UnitUsers, Rate: 41, Low: 39, High: 43}, 0.02); got[1] != 37 || got[2] != 33 {
		t.Errorf("users: %v, want 39, 37, 33 (whole)", got)
	}
	// An interval clipped at zero (two starts far apart, 2026-11-28):
	// from the lowest rate a start held, not from the estimate.
	if got := ConfirmFrom(&results.Capacity{Rate: 29882, Low: 0, High: 105029, Brackets: []results.Bracket{{Pass: 35533}, {Pass: 23807}}}); got != 23807 {
		t.Errorf("interval reaching zero: first rate %g, want 23807", got)
	}
	// Two starts whose interval's lower end lies below both brackets
	// (2026-11-28): from the lowest rate a start held.
	two := &results.Capacity{Rate: 27048, Low: 11048, High: 43048, Brackets: []results.Bracket{{Start: 1, Pass: 28086, Fail: 28499}, {Start: 2, Pass: 25628, Fail: 25979}}}
	if got := ConfirmRates(two, 0.02); got[0] != 25628 {
		t.Errorf("two starts: first rate %g, want 25628, the lowest a start held", got[0])
	}
	// A start that held nothing: the interval's lower end.
	two.Brackets[1].Pass = 0
	if got := ConfirmFrom(two); got != 11048 {
		t.Errorf("a start that held nothing: first rate %g, want 11048", got)
	}
	// Never above the estimate, never below the interval's lower end.
	if got := ConfirmFrom(&results.Capacity{Rate: 100, Low: 90, High: 110, Brackets: []results.Bracket{{Pass: 120}, {Pass: 130}}}); got != 100 {
		t.Errorf("brackets above the estimate: %g, want 100", got)
	}
	if got := ConfirmFrom(&results.Capacity{Rate: 100, Low: 90, High: 110, Brackets: []results.Bracket{{Pass: 80}, {Pass: 130}}}); got != 90 {
		t.Errorf("a bracket below the lower end: %g, want 90", got)
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
