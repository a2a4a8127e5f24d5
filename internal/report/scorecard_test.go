package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/rounds"
)

// TestScorecardOldRun: a results folder from before at_rate (the noisy
// day's) is judged again with a scorecard that answers what it can
// (throughput, RSS at the level, startup, size, the contract) and says
// which parts it cannot, without failing.
func TestScorecardOldRun(t *testing.T) {
	res, err := Load(noisyDay)
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(res, WithRejudging())
	if len(s.Scorecards) != 1 {
		t.Fatalf("%d scorecards, want one for string", len(s.Scorecards))
	}
	sc := s.Scorecards[0]
	if sc.Rate != 0 || len(sc.Missing) != 1 || !strings.Contains(sc.Missing[0], "no rate common to every stack") {
		t.Errorf("rate %d, missing %q: want no rate and the part it cannot answer named", sc.Rate, sc.Missing)
	}
	if len(sc.Rows) != 6 {
		t.Fatalf("%d rows, want the six stacks", len(sc.Rows))
	}
	best := 0
	for _, r := range sc.Rows {
		if r.P99 != "not measured" || r.CPU != "not measured" {
			t.Errorf("%s: p99 %q, CPU %q at no rate", r.Stack, r.P99, r.CPU)
		}
		if !strings.Contains(r.Throughput, "req/s") || !strings.Contains(r.Correct, "contract passed") {
			t.Errorf("%s: throughput %q, correct %q", r.Stack, r.Throughput, r.Correct)
		}
		if r.Best["throughput"] {
			best++
		}
	}
	if best != 1 || sc.Rows[0].Stack != s.Workloads[0].Comparisons[0].Verdict.Ranking[0] || !sc.Rows[0].Best["throughput"] {
		t.Errorf("the first row is not the ranking's first, marked best in throughput (%d marked)", best)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, res, WithRejudging()); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	a, v := strings.Index(out, "## The answer: string"), strings.Index(out, "Verdict (")
	if a < 0 || v < 0 || a > v {
		t.Errorf("summary.md does not open with the scorecard before the verdict (at %d and %d)", a, v)
	}
	if !strings.Contains(out, "- Not answered by this run: faster and CPU per request") {
		t.Errorf("summary.md does not say which parts the old run cannot answer")
	}
}

// scorecardDay is the main job's run with a comparison at one rate
// (testdata/scorecard-day/README.md).
const scorecardDay = "testdata/scorecard-day"

// TestScorecardGolden: the whole answer of a real run, as summary.md
// and report.html open with it: one row per stack, every column filled,
// the rate and how it was chosen named, and the page's two charts with
// their fronts.
func TestScorecardGolden(t *testing.T) {
	res, err := Load(scorecardDay)
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(res, WithRejudging())
	if len(s.Scorecards) != 1 || s.Scorecards[0].Rate == 0 || len(s.Scorecards[0].Missing) != 0 {
		t.Fatalf("scorecards %+v: want one, at a rate, answering every part", s.Scorecards)
	}
	for _, r := range s.Scorecards[0].Rows {
		for _, c := range ScorecardColumns {
			if c[0] == "p99_busy" && s.Scorecards[0].BusyRate == 0 {
				continue // a run from before the busy rate
			}
			if v := r.Cell(c[0]); v == "" || strings.Contains(v, "not measured") {
				t.Errorf("%s: %s is %q", r.Stack, c[1], v)
			}
		}
	}
	var md, page bytes.Buffer
	if err := WriteMarkdown(&md, res, WithRejudging()); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, res, WithRejudging()); err != nil {
		t.Fatal(err)
	}
	i := strings.Index(md.String(), "## The answer: string")
	j := strings.Index(md.String()[i:], "\n## ")
	golden(t, "scorecard.golden.md", []byte(md.String()[i:i+j+1]))
	h := page.String()
	a := strings.Index(h, `<section class="scorecard">`)
	b := strings.Index(h[a:], "</section>")
	golden(t, "scorecard.golden.html", []byte(h[a:a+b+len("</section>")]+"\n"))
	for _, want := range []string{"against RSS (the front", "p99 against CPU per request (the front"} {
		if !strings.Contains(h[a:a+b], want) {
			t.Errorf("report.html's scorecard lacks the chart %q", want)
		}
	}
}

// TestScorecardNamesLeaks: the "Still correct" cell names what leaked as
// the reader knows it, database connections included, once though the
// level and the rate both found it; an arm that leaked nothing says so.
func TestScorecardNamesLeaks(t *testing.T) {
	leaks := []results.Growth{
		{Arm: "leaky", Resource: "fds", Leak: true},
		{Arm: "leaky", Resource: "db_connections", Leak: true},
		{Arm: "tight", Resource: "db_connections"},
	}
	r := &results.Run{Comparisons: []*results.Comparison{
		{Workload: "bank", Level: 2, Model: "closed", Arms: []string{"leaky", "tight"},
			Verdict: &results.Verdict{Ranking: []string{"tight", "leaky"}, Leaks: leaks}},
		{Workload: "bank", Level: 100, Model: "open", AtRate: true, Arms: []string{"leaky", "tight"},
			Verdict: &results.Verdict{Ranking: []string{"tight", "leaky"}, Leaks: leaks[1:]}},
	}}
	sc := scorecards(r)
	if len(sc) != 1 {
		t.Fatalf("%d scorecards, want one for bank", len(sc))
	}
	got := map[string]string{}
	for _, row := range sc[0].Rows {
		got[row.Stack] = row.Correct
	}
	if want := "contract not checked; LEAK: FDs, database connections grew"; got["leaky"] != want {
		t.Errorf("leaky: %q, want %q", got["leaky"], want)
	}
	if want := "contract not checked; no leak"; got["tight"] != want {
		t.Errorf("tight: %q, want %q", got["tight"], want)
	}
}

// TestScorecardDatabaseBound: a bank comparison whose rounds read the
// database over results.DatabaseBoundPercent under one stack marks that
// stack's throughput cell with the database's share, and only that one.
func TestScorecardDatabaseBound(t *testing.T) {
	c := &results.Comparison{Workload: "bank", Level: 50, Model: "closed", Arms: []string{"go-stdlib", "node-http"}, Precision: 0.03,
		Database: &results.DatabaseCPUs{Engine: "PostgreSQL", CPUs: "1", Count: 1}}
	for s := 1; s <= 2; s++ {
		for r := 1; r <= 6; r++ {
			jitter := 1 + 0.01*float64((r*7+s)%5-2)
			c.Rounds = append(c.Rounds, results.Round{Start: s, Index: r, Arms: []results.ArmRound{
				{Arm: "go-stdlib", Throughput: 2000 * jitter, Seconds: 2, Samples: 4000, ServiceCPU: 60, GeneratorCPU: 30, DatabaseCPU: 95},
				{Arm: "node-http", Throughput: 1000 / jitter, Seconds: 2, Samples: 2000, ServiceCPU: 90, GeneratorCPU: 20, DatabaseCPU: 50},
			}})
		}
	}
	c.Verdict = rounds.JudgeWith(c, c.Precision, "")
	scs := scorecards(&results.Run{Comparisons: []*results.Comparison{c}})
	if len(scs) != 1 || len(scs[0].Rows) != 2 {
		t.Fatalf("scorecards %+v: want one of two rows", scs)
	}
	for _, r := range scs[0].Rows {
		marked := strings.Contains(r.Throughput, "(database-bound: PostgreSQL 95% of CPU 1)")
		if want := r.Stack == "go-stdlib"; marked != want || (!want && strings.Contains(r.Throughput, "database-bound")) {
			t.Errorf("%s: throughput %q; want it marked database-bound: %v", r.Stack, r.Throughput, want)
		}
	}
}
