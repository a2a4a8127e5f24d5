package wording

import (
	"testing"

	"github.com/showdownlab/showdown/internal/results"
)

// TestCapacityUnit: a capacity says its unit, and one recorded before
// capacities had units (no unit in run.json) is a rate.
func TestCapacityUnit(t *testing.T) {
	tests := []struct {
		name string
		c    results.Capacity
		want string
	}{
		// A run recorded before the closed model's search: req/s.
		{"no unit", results.Capacity{Rate: 2100, Low: 2000, High: 2200}, "2100 req/s [2000, 2200]"},
		// The closed model's: users.
		{"users", results.Capacity{Unit: results.UnitUsers, Rate: 310, Low: 290, High: 330}, "310 users [290, 330]"},
		// A lower bound in users.
		{"lower bound", results.Capacity{Unit: results.UnitUsers, Rate: 512, Low: 512, LowerBound: true, Reason: "generator at 90% of its CPUs"}, "at least 512 users (a lower bound: generator at 90% of its CPUs)"},
	}
	for _, tc := range tests {
		if got := Capacity(&tc.c); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestHeld: a confirmation held in runs in a row says how many; one
// recorded before the rule says one run; failed rates are named.
func TestHeld(t *testing.T) {
	c := &results.Capacity{Held: 21000, HeldSeconds: 30, HeldRuns: 2, Confirmations: []results.Probe{
		{Rate: 26156, Pass: true, Seconds: 30}, {Rate: 26156, Seconds: 30},
		{Rate: 24848, Seconds: 30},
		{Rate: 21000, Pass: true, Seconds: 30}, {Rate: 21000, Pass: true, Seconds: 30},
	}}
	if got, want := Held(c), "; held 2 × 30 s only at 21000 (not at 26156, 24848)"; got != want {
		t.Errorf("Held: %q, want %q", got, want)
	}
	old := &results.Capacity{Held: 60336, HeldSeconds: 30, Confirmations: []results.Probe{{Rate: 60336, Pass: true, Seconds: 30}}}
	if got, want := Held(old), "; held 30 s at 60336"; got != want {
		t.Errorf("Held of an old run: %q, want %q", got, want)
	}
}
