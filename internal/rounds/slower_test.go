package rounds

import (
	"math"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
)

// JudgeSlower fails the run only when the whole interval lies beyond the
// threshold, and says why it passes otherwise.
func TestJudgeSlower(t *testing.T) {
	tests := []struct {
		name             string
		ratio, low, high float64
		outcome          string
		crossed          bool
		words            string
	}{
		// Wholly beyond 1.05: fails.
		{"beyond", 1.12, 1.08, 1.16, results.SlowerBeyond, true, "FAILED: new is 1.12× slower than old [1.08, 1.16] on throughput, the whole interval beyond 1.05×"},
		// Its low end just at the threshold: not wholly beyond.
		{"touching", 1.08, 1.05, 1.11, results.SlowerUnsure, false, "passed, not within the precision: new against old, 1.08× [1.05, 1.11] as slow on throughput, reaches past 1.05×"},
		// Holds 1 and reaches past the threshold: cannot tell.
		{"wide", 1.05, 0.60, 1.83, results.SlowerUnsure, false, "not within the precision"},
		// Holds 1, within the threshold: no significant difference.
		{"same", 1.01, 0.97, 1.04, results.SlowerSame, false, "passed, no significant difference: new against old, 1.01× [0.97, 1.04] as slow"},
		// Slower, but by less than the threshold throughout.
		{"within", 1.03, 1.01, 1.045, results.SlowerWithin, false, "passed, within the threshold: new is 1.03× slower than old [1.01, 1.04]"},
		// Faster throughout.
		{"faster", 0.8, 0.75, 0.85, results.SlowerFaster, false, "passed, faster: new is 1.25× faster than old [1.18, 1.33]"},
		// No interval (one start, no degrees of freedom).
		{"no interval", 1.1, math.NaN(), math.NaN(), results.SlowerUnsure, false, "not within the precision"},
	}
	for _, tc := range tests {
		s := JudgeSlower(results.Slower{Baseline: "old", Arm: "new", Metric: "throughput", Threshold: 0.05, Ratio: tc.ratio, Low: tc.low, High: tc.high})
		if s.Outcome != tc.outcome || s.Crossed != tc.crossed {
			t.Errorf("%s: %s (crossed %v), want %s (%v)", tc.name, s.Outcome, s.Crossed, tc.outcome, tc.crossed)
		}
		if w := wording.Slower(s); !strings.Contains(w, tc.words) || !strings.HasPrefix(w, "fail_if slower_than 5%: ") {
			t.Errorf("%s: %q lacks %q", tc.name, w, tc.words)
		}
	}
}

// Slower judges every arm against the baseline (the arm at a revision),
// adjacent in the ranking or not, from the rounds: a fifth slower fails
// a 5% threshold, the same code passes with no significant difference.
func TestSlowerFromRounds(t *testing.T) {
	p := &plan.Plan{Implementations: []plan.Implementation{{Service: "fast"}, {Service: "old", Rev: "HEAD~1"}, {Service: "slowed"}, {Service: "same"}}, SlowerThan: 0.05}
	c := &results.Comparison{Workload: "string", Level: 50, Model: "closed", Arms: []string{"fast", "old", "slowed", "same"}, Precision: 0.03}
	for s := 1; s <= 3; s++ {
		for r := 1; r <= 8; r++ {
			drift := 1 + 0.1*math.Sin(float64(r+s*3))
			jitter := 1 + 0.01*float64((r*7+s)%5-2)
			c.Rounds = append(c.Rounds, results.Round{Start: s, Index: r, Arms: []results.ArmRound{
				{Arm: "fast", Throughput: 3000 * drift, Seconds: 2, Samples: 6000},
				{Arm: "old", Throughput: 1000 * drift * jitter, Seconds: 2, Samples: 2000},
				{Arm: "slowed", Throughput: 800 * drift / jitter, Seconds: 2, Samples: 1600},
				{Arm: "same", Throughput: 1000 * drift / jitter, Seconds: 2, Samples: 2000},
			}})
		}
	}
	v := Judge(c, p)
	got := map[string]results.Slower{}
	for _, s := range v.FailIf {
		got[s.Arm] = s
		t.Logf("%s", wording.Slower(s))
	}
	if s := got["slowed"]; !s.Crossed || s.Baseline != "old" || s.Low > 1.25 || s.High < 1.25 {
		t.Errorf("slowed: %+v, want beyond 5%% with 1.25 in its interval", s)
	}
	if s := got["same"]; s.Crossed || s.Outcome != results.SlowerSame {
		t.Errorf("same: %+v, want no significant difference", s)
	}
	if s := got["fast"]; s.Crossed || s.Outcome != results.SlowerFaster {
		t.Errorf("fast: %+v, want faster", s)
	}
	if len(v.FailIf) != 3 {
		t.Errorf("%d judgements, want one per arm but the baseline", len(v.FailIf))
	}
	rec := &results.Run{Comparisons: []*results.Comparison{c}}
	c.Verdict = v
	if crossed := results.CrossedSlower(rec); len(crossed) != 1 || crossed[0].Arm != "slowed" {
		t.Errorf("CrossedSlower = %+v, want slowed alone", crossed)
	}
	lines := strings.Join(wording.Verdict(v), "\n")
	if !strings.Contains(lines, "fail_if slower_than 5%: FAILED: slowed is 1.25× slower than old") {
		t.Errorf("verdict lines lack the failure:\n%s", lines)
	}
	p.SlowerThan = 0
	if v := Judge(c, p); len(v.FailIf) != 0 {
		t.Errorf("no slower_than: %+v, want no judgement", v.FailIf)
	}
}
