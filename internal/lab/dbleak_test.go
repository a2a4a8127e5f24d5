package lab

import (
	"context"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
)

// TestRunFindsConnectionLeak runs a bank that leaks database connections
// (broken-bank's BROKEN_BANK=leak: one more pgx connection at a transfer
// at most every 250 ms, never closed) beside the same bank leaking nothing, both on
// one PostgreSQL, in interleaved rounds: every round reads each arm's own
// connections from its sockets, and the leak check names database
// connections for the leaking arm and for it alone.
func TestRunFindsConnectionLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and two services")
	}
	root, cat := testRoot(t)
	// Every transfer may leak, so the gap alone sets the pace: four
	// connections a second served on any host that serves four transfers
	// a second (a count of transfers would tie the pace to the host's
	// speed: on a loaded CI host it fell to one a second and the slope's
	// interval reached below the limit). The cap keeps it well inside
	// max_connections: the server must keep admitting the correct arm
	// and the harness.
	p := parseTestPlan(t, cat, `name: dbleak
implementations:
  - {service: broken-bank, variant: leak, env: {BROKEN_BANK: leak, LEAK_CONN_EVERY: "1", LEAK_CONN_GAP: 250ms, LEAK_CONN_MAX: "60"}}
  - {service: broken-bank, variant: none, env: {BROKEN_BANK: none}}
workloads: [bank]
verify: quick
round: 500ms
settle: 200ms
measure_max: 10s
load:
  levels: [2]
  duration: 1s
  warmup: 1s
database: {max_connections: 100}
`)
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Command: "go test", NoiseSeconds: -1}
	_, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	if len(rec.Comparisons) != 1 {
		t.Fatalf("%d comparisons, want 1", len(rec.Comparisons))
	}
	c := rec.Comparisons[0]
	for _, r := range c.Rounds {
		for _, a := range r.Arms {
			t.Logf("start %d round %d %s: %.0f req/s, %d database connections, %d FDs", r.Start, r.Index, a.Arm, a.Throughput, a.DBConnections, a.FDs)
			// The correct bank holds its one connection; the leak at least that.
			if a.DBConnections < 1 || a.Arm == "broken-bank+none" && a.DBConnections != 1 {
				t.Errorf("start %d round %d %s: %d database connections", r.Start, r.Index, a.Arm, a.DBConnections)
			}
		}
	}
	if c.Verdict == nil {
		t.Fatal("no verdict")
	}
	lines := strings.Join(wording.Leaks(c.Verdict.Leaks), "\n")
	t.Log(lines)
	checked := map[string]results.Growth{}
	for _, g := range c.Verdict.Leaks {
		if g.Resource == "db_connections" {
			checked[g.Arm] = g
		}
	}
	if g, ok := checked["broken-bank+leak"]; !ok || !g.Leak {
		t.Errorf("the leaking arm's connections: %+v (checked %v), want a leak:\n%s", g, ok, lines)
	}
	if g, ok := checked["broken-bank+none"]; !ok || g.Leak {
		t.Errorf("the correct arm's connections: %+v (checked %v), want checked and no leak:\n%s", g, ok, lines)
	}
	if !strings.Contains(lines, "LEAK: broken-bank+leak grew by") || !strings.Contains(lines, "database connections a minute") || strings.Contains(lines, "LEAK: broken-bank+none") {
		t.Errorf("the verdict's leak lines do not name the leaking arm's database connections alone:\n%s", lines)
	}
}
