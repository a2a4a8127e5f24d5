package plan

import (
	"testing"
	"time"
)

// TestBudgetDefaults: a budget bounds the rounds (measure_max) and lets
// starts go on up to the default most (trials_max), unless the plan says
// otherwise.
func TestBudgetDefaults(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		measureMax time.Duration
		trialsMax  int
	}{
		// No budget: measure_max's default, trials_max the trials.
		{"no budget", "trials: 2\n", DefaultMeasureMax, 2},
		// A budget: it bounds the rounds, and starts may go on.
		{"budget", "trials: 2\nbudget: 12m\n", 12 * time.Minute, DefaultTrialsMax},
		// The plan's own trials_max and measure_max win.
		{"budget with limits", "trials: 2\nbudget: 12m\ntrials_max: 3\nmeasure_max: 2m\n", 2 * time.Minute, 3},
	}
	for _, tc := range tests {
		text := "name: b\nimplementations: [a, b]\nworkloads: [string]\nload: {levels: [10], warmup: auto}\n" + tc.text
		p, err := ParsePlan("b.yaml", []byte(text), Catalog{"a": {"string"}, "b": {"string"}}, testMachine)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := time.Duration(p.Rounds.MeasureMax); got != tc.measureMax || p.TrialsMax != tc.trialsMax {
			t.Errorf("%s: measure_max %v, trials_max %d; want %v, %d", tc.name, got, p.TrialsMax, tc.measureMax, tc.trialsMax)
		}
	}
	bad, err := ParsePlan("b.yaml", []byte("name: b\nimplementations: [a]\nworkloads: [string]\nbudget: 30s\n"), Catalog{"a": {"string"}}, testMachine)
	if err == nil {
		t.Errorf("budget 30s accepted (%+v), want an error: a start takes longer", bad.Rounds)
	}
}
