package plan

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A two-arm plan that leaves its stopping rule to showdown gets the
// default budget (and the default precision), so starts are added while
// a pair is wide; a plan that names any part of the rule keeps it.
func TestCompareDefaults(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		budget    time.Duration
		defaulted bool
		trialsMax int
	}{
		// Neither budget nor precision nor a count: the defaults.
		{"nothing set", "", DefaultBudget, true, DefaultTrialsMax},
		// A precision alone is a stopping rule: no budget added.
		{"precision", "precision: 5%\n", 0, false, 1},
		// Trials named: that many starts, as before.
		{"trials", "trials: 2\n", 0, false, 2},
		// trials: auto is a stopping rule of its own.
		{"trials auto", "trials: auto\n", 0, false, DefaultTrialsMax},
		// measure_max bounds the rounds: kept as written.
		{"measure_max", "measure_max: 1m\n", 0, false, 1},
		// The plan's own budget is not marked defaulted.
		{"budget", "budget: 5m\n", 5 * time.Minute, false, DefaultTrialsMax},
		// Not interleaved: nothing to add starts to.
		{"sequential", "interleave: false\n", 0, false, 1},
	}
	for _, tc := range tests {
		text := "name: b\nimplementations: [a, b]\nworkloads: [string]\nload: {levels: [10], warmup: auto}\n" + tc.text
		p, err := ParsePlan("b.yaml", []byte(text), Catalog{"a": {"string"}, "b": {"string"}}, testMachine)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := time.Duration(p.Rounds.Budget); got != tc.budget || p.BudgetDefaulted != tc.defaulted || p.TrialsMax != tc.trialsMax {
			t.Errorf("%s: budget %v (defaulted %v), trials_max %d; want %v (%v), %d", tc.name, got, p.BudgetDefaulted, p.TrialsMax, tc.budget, tc.defaulted, tc.trialsMax)
		}
		if tc.defaulted && (p.Rounds.Precision != DefaultPrecision || time.Duration(p.Rounds.MeasureMax) != DefaultBudget || p.MinStarts() != 2) {
			t.Errorf("%s: precision %v, measure_max %v, min starts %d; want 3%%, the budget, 2", tc.name, p.Rounds.Precision, time.Duration(p.Rounds.MeasureMax), p.MinStarts())
		}
	}
}

// fail_if as a mapping: slower_than beside the thresholds, refused where
// there is no comparison in rounds to judge.
func TestFailIfSlowerThan(t *testing.T) {
	cat := Catalog{"a": {"string"}, "b": {"string"}}
	base := "name: b\nworkloads: [string]\nload: {levels: [10], warmup: auto}\n"
	tests := []struct {
		name   string
		text   string
		slower Fraction
		failIf []string
		err    string // in the error; empty: none
	}{
		// The flow form.
		{"flow", "implementations: [a, b]\nfail_if: {slower_than: 5%}\n", 0.05, nil, ""},
		// The block form, with the list's thresholds beside it.
		{"block", "implementations: [a, b]\nfail_if:\n  slower_than: 0.1\n  thresholds: [p99>500ms]\n", 0.1, []string{"p99>500ms"}, ""},
		// The list form is unchanged.
		{"list", "implementations: [a, b]\nfail_if: [errors>1%]\n", 0, []string{"errors>1%"}, ""},
		// A misspelt key: its line and a hint.
		{"unknown", "implementations: [a, b]\nfail_if:\n  slower: 5%\n", 0, nil, "b.yaml:6: fail_if.slower: unknown field"},
		// Not a share.
		{"too much", "implementations: [a, b]\nfail_if: {slower_than: 150%}\n", 0, nil, "slower_than must be between"},
		// One implementation: nothing to compare.
		{"one arm", "implementations: [a]\nfail_if: {slower_than: 5%}\n", 0, nil, "slower_than needs a comparison in interleaved rounds: one implementation"},
	}
	for _, tc := range tests {
		p, err := ParsePlan("b.yaml", []byte(base+tc.text), cat, testMachine)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		case tc.err == "" && (p.SlowerThan != tc.slower || strings.Join(p.FailIf, ",") != strings.Join(tc.failIf, ",")):
			t.Errorf("%s: slower_than %v, fail_if %v; want %v, %v", tc.name, p.SlowerThan, p.FailIf, tc.slower, tc.failIf)
		}
	}
}

// An implementation at a revision is an arm of its own, named for the
// stack and the revision; --against adds one before each implementation;
// the baseline is the first at a revision, else the first listed.
func TestRevisions(t *testing.T) {
	const file = "/w/plans/p.yaml"
	cat := Catalog{"go-stdlib": {"string"}, "go-stdlib@HEAD~1": {"string"}, "/w/ours": {"string"}, "ours@v1.2": {"string"},
		"ours@origin-main": {"string"}, "ours@HEAD~1": {"string"}, "go-stdlib@3f2a1bc": {"string"}}
	tests := []struct {
		name     string
		impls    string
		against  string
		ids      []string
		baseline string
		revs     []Revision
		err      string
	}{
		// A stack under services/ against its parent commit.
		{"service", "[go-stdlib, {service: go-stdlib, rev: HEAD~1}]", "", []string{"go-stdlib", "go-stdlib@HEAD~1"}, "go-stdlib@HEAD~1",
			[]Revision{{Line: 2, Field: "implementations.1.rev", Stack: "go-stdlib", Rev: "HEAD~1", Name: "go-stdlib@HEAD~1"}}, ""},
		// A folder at a tag; the other arm is the rival and the baseline.
		{"folder", "[go-stdlib, {path: ../ours, rev: v1.2}]", "", []string{"go-stdlib", "ours@v1.2"}, "ours@v1.2",
			[]Revision{{Line: 2, Field: "implementations.1.rev", Folder: "/w/ours", Stack: "ours", Rev: "v1.2", Name: "ours@v1.2"}}, ""},
		// A branch's '/' is not a path in results.
		{"branch", "[{path: ../ours, rev: origin/main}, {path: ../ours}]", "", []string{"ours@origin-main", "ours"}, "ours@origin-main", nil, ""},
		// --against: the revision first, the baseline.
		{"against", "[{path: ../ours}]", "HEAD~1", []string{"ours@HEAD~1", "ours"}, "ours@HEAD~1",
			[]Revision{{Line: 2, Field: "--against", Folder: "/w/ours", Stack: "ours", Rev: "HEAD~1", Name: "ours@HEAD~1"}}, ""},
		// --against leaves an implementation at a revision alone.
		{"against kept", "[{service: go-stdlib, rev: 3f2a1bc}, go-stdlib]", "HEAD~1", []string{"go-stdlib@3f2a1bc", "go-stdlib@HEAD~1", "go-stdlib"}, "go-stdlib@3f2a1bc", nil, ""},
		// No baseline at a revision: the first listed.
		{"no rev", "[go-stdlib, {path: ../ours}]", "", []string{"go-stdlib", "ours"}, "go-stdlib", nil, ""},
		// A revision with neither folder nor name.
		{"rev alone", "[go-stdlib, {rev: HEAD~1}]", "", nil, "", nil, "implementations.1.rev: rev needs the stack's folder or name"},
		// An empty revision.
		{"empty rev", "[go-stdlib, {service: go-stdlib, rev: ''}]", "", nil, "", nil, "rev \"\" is not a revision"},
	}
	for _, tc := range tests {
		text := "name: p\nimplementations: " + tc.impls + "\nworkloads: [string]\nload: {levels: [1]}\n"
		p, err := ParsePlanAgainst(file, []byte(text), cat, testMachine, tc.against)
		if tc.err != "" {
			var list ErrorList
			if !errors.As(err, &list) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var ids []string
		for _, im := range p.Arms() {
			ids = append(ids, im.ID())
		}
		if strings.Join(ids, " ") != strings.Join(tc.ids, " ") || p.Baseline() != tc.baseline {
			t.Errorf("%s: arms %v, baseline %s; want %v, %s", tc.name, ids, p.Baseline(), tc.ids, tc.baseline)
		}
		if tc.revs != nil {
			got := Revisions(file, []byte(text), tc.against)
			if len(got) != len(tc.revs) || got[0] != tc.revs[0] {
				t.Errorf("%s: Revisions = %+v, want %+v", tc.name, got, tc.revs)
			}
		}
	}
}
