package report

import (
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
)

// TestAuditText: the correctness cell of a workload whose rows are
// counted sums a stack's own levels and rounds, says what was lost or
// written past the answers, and counts the starts whose invariants held:
// its own levels' audits, and the audits after the rounds it shared.
func TestAuditText(t *testing.T) {
	const tr = "POST /transaction 200"
	level := func(answered, written int64, vs ...results.Violation) *results.LevelRun {
		return &results.LevelRun{Writes: results.Writes{tr: {Answered: answered, Written: written}}, Violations: vs}
	}
	run := func(trial int, lr *results.LevelRun) *results.ServiceRun {
		return &results.ServiceRun{Implementation: "a", Workload: "bank", Trial: trial, Status: results.OK, Levels: []*results.LevelRun{lr}}
	}
	round := func(start int, arm string, answered, written int64) results.Round {
		return results.Round{Start: start, Arms: []results.ArmRound{{Arm: arm, Writes: &results.RoundWrites{Counts: results.Writes{tr: {Answered: answered, Written: written}}}}}}
	}
	comp := &results.Comparison{Workload: "bank", Arms: []string{"a", "b"},
		Rounds: []results.Round{round(1, "a", 1000, 1000), round(1, "b", 50, 50), round(2, "a", 2000, 2000)}}
	r := &results.Run{Comparisons: []*results.Comparison{comp}}

	got := auditText(r, "bank", "a", []*results.ServiceRun{run(1, level(10, 10)), run(2, level(20, 20))})
	if want := "3,030 POST /transaction answered as written: 0 lost, 0 written past the answers; invariants held in 2 of 2 starts"; got != want {
		t.Errorf("a correct stack:\n got %q\nwant %q", got, want)
	}
	// Answers without rows in a round, and a level's broken ledger.
	comp.Rounds = append(comp.Rounds, round(2, "a", 500, 480))
	got = auditText(r, "bank", "a", []*results.ServiceRun{run(1, level(10, 10)), run(2, level(20, 20, results.Violation{Check: "ledger", Detail: "2 clients"}))})
	for _, want := range []string{"ROWS 3,530 POST /transaction", "20 lost", "INVARIANT FAILED in 1 of 2 starts: ledger"} {
		if !strings.Contains(got, want) {
			t.Errorf("a broken stack: %q lacks %q", got, want)
		}
	}
	// The audit after the rounds of start 1, shared by both stacks, with
	// no culprit at its own level: both are marked.
	comp.Violations = []results.Violation{{Check: "money", Detail: "after the rounds of start 1: ...", Start: 1}}
	bs := []*results.ServiceRun{run(1, level(5, 5))}
	bs[0].Implementation = "b"
	r.Services = bs
	if got := auditText(r, "bank", "b", bs); !strings.Contains(got, "INVARIANT FAILED in 1 of 1 starts: money (after the rounds it shared, by none alone)") {
		t.Errorf("after the shared rounds: %q", got)
	}
	// a broke money at its own level in start 1: b is not marked.
	as := []*results.ServiceRun{run(1, level(10, 10, results.Violation{Check: "money"}))}
	r.Services = append(bs, as...)
	if got := auditText(r, "bank", "b", bs); !strings.Contains(got, "invariants held in 1 of 1 starts") {
		t.Errorf("b beside a stack that broke money alone: %q", got)
	}
	// A workload whose rows are not counted says nothing.
	if got := auditText(&results.Run{}, "string", "a", []*results.ServiceRun{{Workload: "string", Levels: []*results.LevelRun{{}}}}); got != "" {
		t.Errorf("string: %q, want nothing", got)
	}
}
