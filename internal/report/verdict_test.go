package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
)

// TestVerdictHeadline: a run with an interleaved comparison leads with
// its ranking as ratios with intervals, says where there is no
// significant difference, shows the A/A check, and draws its ratios as a
// forest plot and the rounds start by start.
func TestVerdictHeadline(t *testing.T) {
	at := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	c := &results.Comparison{Workload: "string", Level: 50, Model: "closed", Arms: []string{"go-stdlib", "rust-axum", "node-http", "go-stdlib+aa"}, RoundSeconds: 2, SettleSeconds: 1, Precision: 0.03}
	for i, arm := range c.Arms {
		c.Rounds = append(c.Rounds, results.Round{Start: 1, Index: 1, Arms: []results.ArmRound{{Arm: arm, At: at.Add(time.Duration(i*3) * time.Second), Seconds: 2, Throughput: 1000 * float64(i+1)}}})
	}
	c.Verdict = &results.Verdict{Metric: "throughput", Ranking: []string{"rust-axum", "go-stdlib", "node-http"},
		Pairs: []results.PairRatio{
			{Better: "rust-axum", Worse: "go-stdlib", Ratio: 2.08, Low: 2.01, High: 2.15, Significant: true, Starts: 2, Rounds: 20},
			{Better: "go-stdlib", Worse: "node-http", Ratio: 1.01, Low: 0.97, High: 1.05, Starts: 2, Rounds: 20},
		},
		AA:             &results.PairRatio{Better: "go-stdlib", Worse: "go-stdlib+aa", Ratio: 0.996, Low: 0.98, High: 1.01, Starts: 2, Rounds: 20},
		GeneratorBound: map[string]float64{"rust-axum": 88}}
	p := &plan.Plan{Name: "t", Workloads: []plan.Workload{{Name: "string"}}, Load: plan.Load{Model: "closed", Levels: []int{50}}}
	for _, id := range c.Arms {
		p.Implementations = append(p.Implementations, plan.Implementation{Service: id})
	}
	res := &Results{Kind: KindRun, Run: &results.Run{Plan: p, Comparisons: []*results.Comparison{c}}}
	s := Summarize(res)
	wl := s.Workloads[0]
	for _, want := range []string{"rust-axum 2.08× [2.01, 2.15] go-stdlib", "≈ node-http (no significant difference", "A/A 0.996× [0.980, 1.010], no difference claimed"} {
		if !strings.Contains(wl.Headline, want) {
			t.Errorf("headline %q lacks %q", wl.Headline, want)
		}
	}
	if strings.Contains(wl.Headline, "fewer") {
		t.Errorf("headline %q ranks with a bare ratio", wl.Headline)
	}
	verdicts := strings.Join(wl.Verdicts, "\n")
	for _, want := range []string{"rust-axum is generator-bound: the generator used 88%", "go-stdlib ≈ node-http on throughput: no significant difference"} {
		if !strings.Contains(verdicts, want) {
			t.Errorf("verdicts lack %q:\n%s", want, verdicts)
		}
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, "of each arm in every round, by start") || strings.Count(page, "start 1 round 1: ") != 4 {
		t.Errorf("report.html has no chart of the rounds with a mark per arm and round")
	}
	if !strings.Contains(page, `class="chart forest"`) || !strings.Contains(page, ">A/A: go-stdlib vs go-stdlib+aa<") {
		t.Errorf("report.html has no forest plot of the ratios with the A/A check")
	}
	if !strings.Contains(page, "interleaved in a random order, over 1 fresh start(s)") {
		t.Errorf("report.html does not say what the verdict rests on")
	}
}
