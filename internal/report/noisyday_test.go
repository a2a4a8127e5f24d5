package report

import (
	"bytes"
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/rounds"
	"github.com/showdownlab/showdown/internal/wording"
)

// noisyDay is the default plan's run on a noisy day (2026-11-27, AMD
// EPYC, machine noise 5% per second; testdata/noisy-day/README.md): six
// arms, two starts of five rounds, one round with rust-axum stalled.
const noisyDay = "testdata/noisy-day"

// TestNoisyDayPipeline: the whole verdict pipeline on a real run, from
// run.json's rounds through judging again to summary.md and report.html.
// It pins what the data decide (the order of arms far apart, five
// adjacent pairs each with its line in the verdict's words, the page
// opening with the verdict and its charts), not the intervals, which are
// the estimator's to move.
func TestNoisyDayPipeline(t *testing.T) {
	res, err := Load(noisyDay)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Run.Comparisons[0]
	want := rounds.Judge(c, res.Run.Plan)
	// What the run recorded is replaced: judging again must not read it.
	c.Verdict = &results.Verdict{Metric: "throughput", Ranking: []string{"python-fastapi", "rust-axum"},
		Pairs: []results.PairRatio{{Better: "python-fastapi", Worse: "rust-axum", Ratio: 9, Low: 8, High: 10, Significant: true}}}
	var md, page bytes.Buffer
	if err := WriteMarkdown(&md, res, WithRejudging()); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, res, WithRejudging()); err != nil {
		t.Fatal(err)
	}
	v := c.Verdict
	if v == nil || !slices.Equal(v.Ranking, want.Ranking) {
		t.Fatalf("judged again: ranking %v, want rounds.Judge's %v", v, want.Ranking)
	}
	// The arms far apart in every round keep their places; java-spring
	// and node-http (1.02× in the rounds) may come either way.
	if len(v.Ranking) != 6 || v.Ranking[0] != "rust-axum" || v.Ranking[1] != "java-helidon" || v.Ranking[2] != "go-stdlib" || v.Ranking[5] != "python-fastapi" {
		t.Errorf("ranking %v, want rust-axum, java-helidon, go-stdlib, then java-spring and node-http, python-fastapi last", v.Ranking)
	}
	if len(v.Pairs) != 5 {
		t.Fatalf("%d pairs, want the five adjacent pairs of six arms", len(v.Pairs))
	}
	s := Summarize(res, WithRejudging())
	wl := s.Workloads[0]
	for i, pr := range v.Pairs {
		if pr.Better != v.Ranking[i] || pr.Worse != v.Ranking[i+1] {
			t.Errorf("pair %d is %s against %s, want adjacent %s and %s", i, pr.Better, pr.Worse, v.Ranking[i], v.Ranking[i+1])
		}
		if !(pr.Low <= pr.Ratio && pr.Ratio <= pr.High) || pr.Low <= 0 {
			t.Errorf("%s against %s: ratio %g outside its interval [%g, %g]", pr.Better, pr.Worse, pr.Ratio, pr.Low, pr.High)
		}
		line := "at 50 users: " + wording.Pair(pr, v.Metric)
		if !slices.Contains(wl.Verdicts, line) {
			t.Errorf("the verdict lacks %q:\n%s", line, strings.Join(wl.Verdicts, "\n"))
		}
		if !strings.Contains(md.String(), "- "+line+"\n") {
			t.Errorf("summary.md lacks %q", line)
		}
		if !strings.Contains(page.String(), html.EscapeString(line)) {
			t.Errorf("report.html lacks %q", line)
		}
		// The forest plot's row says the pair in the same words.
		if !strings.Contains(page.String(), "<title>"+html.EscapeString(wording.Pair(pr, v.Metric))+"</title>") {
			t.Errorf("the forest plot has no row for %s against %s", pr.Better, pr.Worse)
		}
	}
	if !strings.Contains(wl.VerdictBasis, RejudgedNote) || !strings.Contains(md.String(), RejudgedNote) {
		t.Errorf("the verdict does not say it was %s: %q", RejudgedNote, wl.VerdictBasis)
	}
	if !slices.ContainsFunc(wl.Recorded, func(l string) bool { return strings.Contains(l, "python-fastapi 9.00× rust-axum") }) {
		t.Errorf("the verdict as recorded is not shown beside the new one: %q", wl.Recorded)
	}
	checkVerdictFirst(t, page.String(), v)
	// The stalled round (rust-axum at 21,806 req/s in start 1, round 3)
	// is a point of its own in the rounds' chart.
	if !strings.Contains(page.String(), "rust-axum, start 1 round 3: 21806 req/s") {
		t.Errorf("the rounds' chart does not show rust-axum's stalled round")
	}
}

// checkVerdictFirst checks the layout of an interleaved run's page: the
// verdict, then its forest plot and rounds, before any table; CPU per
// request and memory side by side; none of the charts that a 2 s level
// measured at one load level leaves empty.
func checkVerdictFirst(t *testing.T, page string, v *results.Verdict) {
	t.Helper()
	// The scorecard, the whole answer, comes first of all; the order
	// below is the rest's.
	if i := strings.Index(page, `<section class="scorecard">`); i >= 0 {
		if j := strings.Index(page, `<div class="verdict">`); j >= 0 && j < i {
			t.Errorf("report.html has the scorecard after the verdict")
		}
		end := i + strings.Index(page[i:], "</section>")
		page = page[:i] + page[end:]
	}
	order := []string{`<div class="verdict">`, `class="chart forest"`, "of each arm in every round, by start", "<table", "service CPU per request", "service peak RSS", `<section id="memory">`}
	last := -1
	for _, mark := range order {
		i := strings.Index(page, mark)
		if i < 0 {
			t.Errorf("report.html lacks %q", mark)
			continue
		}
		if i < last {
			t.Errorf("report.html has %q too late: want the order %q", mark, order)
		}
		last = i
	}
	for _, unwanted := range []string{"vs load level", "Second by second", "every second"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("report.html of a one-level interleaved run has %q", unwanted)
		}
	}
	// Separated pairs are filled squares, the others hollow circles,
	// each with one more in the legend.
	i := strings.Index(page, `class="chart forest"`)
	forest := page[i : i+strings.Index(page[i:], "</svg>")]
	sig := 0
	for _, pr := range v.Pairs {
		if pr.Significant {
			sig++
		}
	}
	if got := strings.Count(forest, `fill="`+forestSolid+`"`); got != sig+1 {
		t.Errorf("forest plot: %d filled marks, want %d separated pairs and the legend's", got, sig+1)
	}
	if got := strings.Count(forest, `<circle`); got != len(v.Pairs)-sig+1 {
		t.Errorf("forest plot: %d hollow marks, want %d pairs with no significant difference and the legend's", got, len(v.Pairs)-sig+1)
	}
}

// Without the plan there is nothing to judge with: the verdict stands as
// recorded, and is not said to be judged again.
func TestRejudgeWithoutPlan(t *testing.T) {
	res, err := Load(noisyDay)
	if err != nil {
		t.Fatal(err)
	}
	recorded := res.Run.Comparisons[0].Verdict
	res.Run.Plan = nil
	if res.Rejudge() {
		t.Error("Rejudge judged a run without its plan")
	}
	if res.Run.Comparisons[0].Verdict != recorded {
		t.Error("the recorded verdict was replaced")
	}
}

// A run recorded by this version's estimator judges again to the same
// verdict: nothing is shown as recorded beside it.
func TestRejudgeAgrees(t *testing.T) {
	res, err := Load(noisyDay)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Run.Comparisons[0]
	c.Verdict = rounds.Judge(c, res.Run.Plan)
	wl := Summarize(res, WithRejudging()).Workloads[0]
	if len(wl.Verdicts) == 0 || wl.Recorded != nil {
		t.Errorf("verdicts %q, recorded %q: want the verdict and nothing recorded beside it", wl.Verdicts, wl.Recorded)
	}
}
