package wording

import (
	"strings"
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
	settles := []results.Growth{{Arm: "java-spring", Resource: "rss", Limit: 1 << 20, PerMinute: 30 << 20, Low: 20 << 20, High: 40 << 20,
		Points: 24, Minutes: 2.4, Settling: true, LaterPerMinute: 0.5 * (1 << 20)}}
	tests := []struct {
		name string
		gs   []results.Growth
		want string
	}{
		// A heap that grew to its size and stays: no leak, and the
		// growth said with its later half.
		{"settling", settles, "no leak: no arm's RSS grew past 1.0 MiB a minute over its rounds (the whole 95% interval above it)\n" +
			"settling, not a leak: java-spring's RSS grew by 30.0 MiB a minute [20.0 MiB, 40.0 MiB] over 24 rounds of 2.4 minutes, by 512 KiB a minute over their later half (limit 1.0 MiB a minute)"},
		// A workload without a database: three resources.
		{"no database", three, "no leak: no arm's RSS, threads or FDs grew past 1.0 MiB, 10.0 threads or 10.0 FDs a minute over its rounds (the whole 95% interval above it)"},
		// With one: the connections too.
		{"database", four, "no leak: no arm's RSS, threads, FDs or database connections grew past 1.0 MiB, 10.0 threads, 10.0 FDs or 5.0 database connections a minute over its rounds (the whole 95% interval above it)"},
		// A pool that keeps opening connections.
		{"leak", leak, "LEAK: a grew by 12.0 database connections a minute [9.5 database connections, 14.5 database connections] over 16 rounds of 1.4 minutes (limit 5.0 database connections a minute)"},
	}
	for _, tc := range tests {
		got := Leaks(tc.gs)
		if strings.Join(got, "\n") != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestUnsettled: a held interval too wide to use says why, in words: too
// few starts held, it reaches zero, or it is wider than ±25%; one that is
// narrow enough, a lower bound, or not held per start says nothing.
func TestUnsettled(t *testing.T) {
	held := func(rate, low, high float64, helds ...float64) *results.Capacity {
		c := &results.Capacity{Rate: rate, Low: low, High: high, SearchRate: rate * 1.1}
		for i, h := range helds {
			c.Brackets = append(c.Brackets, results.Bracket{Start: i + 1, Pass: h * 1.1, Confirmed: true, Held: h, HeldSeconds: 30, HeldRuns: 2})
		}
		return c
	}
	tests := []struct {
		name string
		c    *results.Capacity
		want string
	}{
		// The interval of two starts far apart reaches zero.
		{"reaching zero", held(41500, 0, 73266, 39000, 44000), "two starts held 39000 and 44000 req/s, an interval [0.00, 73266] reaching zero"},
		// Three starts, ±32%.
		{"wide", held(41000, 28000, 54000, 36000, 41000, 46000), "three starts held 36000, 41000 and 46000 req/s, an interval [28000, 54000] wider than ±25%"},
		{"one start", held(39000, 39000, 39000, 39000), "one start held 39000 req/s, too few for an interval"},
		{"one of two", held(39000, 39000, 39000, 39000, 0), "one of two starts held 39000 req/s, too few for an interval"},
		{"narrow", held(45990, 44090, 47890, 45840, 46140), ""},
		{"search only", &results.Capacity{Rate: 51439, Low: 0, High: 111897, Brackets: []results.Bracket{{Start: 1, Pass: 46386}, {Start: 2, Pass: 55808}}}, ""},
	}
	for _, tc := range tests {
		if got := Unsettled(tc.c); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// The capacity's line says it once, and which start would narrow it.
	if got, want := Capacity(tests[0].c), "held 41500 req/s [0.00, 73266] (2 × 30 s in each start); the search's edge 45650; two starts held 39000 and 44000 req/s, an interval reaching zero: a third start would narrow this"; got != want {
		t.Errorf("Capacity: %q, want %q", got, want)
	}
	for n, want := range map[int]string{2: "second", 3: "third", 11: "11th", 12: "12th", 21: "21st", 22: "22nd", 23: "23rd"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
	for w, want := range map[string]string{"third": "a", "eighth": "an", "eleventh": "an", "11th": "an", "18th": "an", "110th": "a", "81st": "an", "21st": "a"} {
		if got := article(w); got != want {
			t.Errorf("article(%q) = %q, want %q", w, got, want)
		}
	}
	if got := and([]string{"a", "b", "c"}); got != "a, b and c" {
		t.Errorf("and: %q", got)
	}
}
