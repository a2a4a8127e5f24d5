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

// TestLeaks: a leak of database connections says so in its unit, and
// the no-leak line names database connections only where they were
// checked.
func TestLeaks(t *testing.T) {
	three := []results.Growth{
		{Arm: "a", Resource: "rss", Limit: 1 << 20},
		{Arm: "a", Resource: "threads", Limit: 10},
		{Arm: "a", Resource: "fds", Limit: 10},
	}
	four := append(append([]results.Growth{}, three...), results.Growth{Arm: "a", Resource: "db_connections", Limit: 5})
	leak := append(append([]results.Growth{}, three...), results.Growth{Arm: "a", Resource: "db_connections", Limit: 5,
		PerMinute: 12, Low: 9.5, High: 14.5, Points: 16, Minutes: 1.4, Leak: true})
	tests := []struct {
		name string
		gs   []results.Growth
		want string
	}{
		// A workload without a database: three resources.
		{"no database", three, "no leak: no arm's RSS, threads or FDs grew past 1.0 MiB, 10.0 threads or 10.0 FDs a minute over its rounds (the whole 95% interval above it)"},
		// With one: the connections too.
		{"database", four, "no leak: no arm's RSS, threads, FDs or database connections grew past 1.0 MiB, 10.0 threads, 10.0 FDs or 5.0 database connections a minute over its rounds (the whole 95% interval above it)"},
		// A pool that keeps opening connections.
		{"leak", leak, "LEAK: a grew by 12.0 database connections a minute [9.5 database connections, 14.5 database connections] over 16 rounds of 1.4 minutes (limit 5.0 database connections a minute)"},
	}
	for _, tc := range tests {
		got := Leaks(tc.gs)
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
