package report

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/capacity"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
)

// TestCapacityHeadline: a capacity run leads with who serves the most
// within the objective, ranks by capacity with intervals, says which
// capacity is a lower bound and why, and sizes each stack for the plan's
// load, in the Markdown summary and in report.html.
func TestCapacityHeadline(t *testing.T) {
	slo := &plan.SLO{Percentiles: []plan.PercentileLimit{{Q: 99, Limit: plan.Duration(10 * time.Millisecond)}}, Errors: 0.001}
	p := &plan.Plan{Name: "cap", Workloads: []plan.Workload{{Name: "string"}}, Load: plan.Load{Model: "closed", Levels: []int{50}},
		Implementations: []plan.Implementation{{Service: "go-stdlib"}, {Service: "rust-axum"}, {Service: "node-http"}},
		SLO:             slo, Sizing: &plan.Sizing{DailyPageViews: 10_000_000, RequestsPerView: 3}}
	fast := &results.Capacity{Workload: "string", Arm: "rust-axum", Objective: slo.String(), Rate: 40_000, Low: 38_000, CPUs: 1, LowerBound: true,
		Reason: "generator at 91% of its CPUs (over 80%)", RSSBytes: 8 << 20, Brackets: []results.Bracket{{Start: 1, Pass: 38_000, Fail: 40_000, GeneratorLimited: true}}}
	mid := &results.Capacity{Workload: "string", Arm: "go-stdlib", Objective: slo.String(), Rate: 20_000, Low: 19_500, High: 20_500, CPUs: 1,
		Failed: 20_300, FailedWhy: "p99 14.2ms > 10.0ms", RSSBytes: 12 << 20, Brackets: []results.Bracket{{Start: 1, Pass: 19_800, Fail: 20_300}, {Start: 2, Pass: 19_900, Fail: 20_200}}}
	slow := &results.Capacity{Workload: "string", Arm: "node-http", Objective: slo.String(), Rate: 9_000, Low: 8_800, High: 9_200, CPUs: 1, RSSBytes: 60 << 20,
		Brackets: []results.Bracket{{Start: 1, Pass: 8_900, Fail: 9_100}, {Start: 2, Pass: 8_950, Fail: 9_050}}}
	v := &results.CapacityVerdict{Workload: "string", Objective: slo.String(), Verdict: results.Verdict{Metric: "capacity", Ranking: []string{"rust-axum", "go-stdlib", "node-http"},
		Pairs: []results.PairRatio{
			{Better: "rust-axum", Worse: "go-stdlib", Ratio: 2, Low: 1.9, High: 2.1, Significant: true, Starts: 1},
			{Better: "go-stdlib", Worse: "node-http", Ratio: 2.22, Low: 2.15, High: 2.3, Significant: true, Starts: 2},
		}}}
	res := &Results{Kind: KindRun, Run: &results.Run{Plan: p, Capacities: []*results.Capacity{mid, fast, slow}, CapacityVerdicts: []*results.CapacityVerdict{v}}}
	s := Summarize(res)
	wl := s.Workloads[0]
	for _, want := range []string{"At p99 ≤ 10ms, errors ≤ 0.1%, rust-axum serves the most: at least 38000 req/s (a lower bound: generator at 91%", "go-stdlib 2.22× [2.15, 2.30] node-http"} {
		if !strings.Contains(wl.Headline, want) {
			t.Errorf("headline %q lacks %q", wl.Headline, want)
		}
	}
	if !strings.Contains(strings.Join(wl.Verdicts, "\n"), "rust-axum 2.00× go-stdlib [1.90, 2.10] capacity") {
		t.Errorf("verdicts %q lack the capacity ratio", wl.Verdicts)
	}
	// 10M views × 3 requests, 0.8 of them in 0.4 of a day: 694.4 req/s;
	// go-stdlib's capacity's lower end 19,500 on one CPU: 0.036 cores.
	var sz SizingRow
	for _, r := range wl.Sizing {
		if r.Implementation == "go-stdlib" {
			sz = r
		}
	}
	if want := 0.8 * 30_000_000 / (86_400 * 0.4) / 19_500; sz.Instances != 1 || sz.Cores < want-1e-9 || sz.Cores > want+1e-9 || sz.MemoryBytes != 12<<20 {
		t.Errorf("go-stdlib sizing %+v, want %.4f cores, 1 process of 12 MiB", sz, want)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| go-stdlib | 20000 req/s [19500, 20500] | 20000 | 20300 | p99 14.2ms > 10.0ms | 2 |", "Sizing for 10000000 daily page views × 3 requests per view", "| go-stdlib | 694 | 0.04 | 1 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md.String())
		}
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<table class="capacity">`, "<th>Capacity (req/s)</th>", "<th>Lowest failing rate</th>", "20000 req/s [19500, 20500]", `<table class="sizing">`, `class="chart forest"`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// A capacity run measures no level: neither page shows an empty
	// table of levels, or a second-by-second section with nothing in it.
	for name, text := range map[string]string{"report.html": page.String(), "summary.md": md.String()} {
		for _, unwanted := range []string{"Level (", "| Implementation | Users |", "Second by second"} {
			if strings.Contains(text, unwanted) {
				t.Errorf("%s of a capacity run has %q", name, unwanted)
			}
		}
	}
}

// TestCapacityInUsers: a closed-model capacity reads in users everywhere
// the report names it: the headline, the table's headings and cells, the
// verdict's basis and the setup line.
func TestCapacityInUsers(t *testing.T) {
	slo := &plan.SLO{Percentiles: []plan.PercentileLimit{{Q: 99, Limit: plan.Duration(10 * time.Millisecond)}}, Errors: 0.001}
	p := &plan.Plan{Name: "users", Workloads: []plan.Workload{{Name: "string"}}, Load: plan.Load{Model: "closed", Levels: []int{50}, ThinkTime: plan.Duration(10 * time.Millisecond)},
		Implementations: []plan.Implementation{{Service: "go-stdlib"}, {Service: "node-http"}}, SLO: slo,
		Capacity: plan.CapacitySettings{Model: "closed", Resolution: 0.02}}
	fast := &results.Capacity{Workload: "string", Arm: "go-stdlib", Unit: results.UnitUsers, Objective: slo.String(), Rate: 410, Low: 400, High: 420, CPUs: 1,
		Failed: 416, FailedWhy: "p99 12ms > 10ms", Brackets: []results.Bracket{{Start: 1, Pass: 400, Fail: 416}, {Start: 2, Pass: 404, Fail: 420}}}
	slow := &results.Capacity{Workload: "string", Arm: "node-http", Unit: results.UnitUsers, Objective: slo.String(), Rate: 150, Low: 145, High: 155, CPUs: 1,
		Brackets: []results.Bracket{{Start: 1, Pass: 147, Fail: 150}, {Start: 2, Pass: 149, Fail: 152}}}
	v := &results.CapacityVerdict{Workload: "string", Objective: slo.String(), Verdict: results.Verdict{Metric: "capacity", Ranking: []string{"go-stdlib", "node-http"},
		Pairs: []results.PairRatio{{Better: "go-stdlib", Worse: "node-http", Ratio: 2.73, Low: 2.6, High: 2.85, Significant: true, Starts: 2}}}}
	for _, c := range []*results.Capacity{fast, slow} {
		for i, n := range []float64{50, 100, 200, 400, 416} {
			c.Probes = append(c.Probes, results.Probe{Start: 1, Rate: n, Achieved: 60 * n, P50Ms: 1 + float64(i), P99Ms: 3 + 3*float64(i), P999Ms: 5 + 4*float64(i), Pass: n <= c.Rate})
		}
	}
	res := &Results{Kind: KindRun, Run: &results.Run{Plan: p, Capacities: []*results.Capacity{fast, slow}, CapacityVerdicts: []*results.CapacityVerdict{v}}}
	wl := Summarize(res).Workloads[0]
	if len(wl.Curves) != 2 || wl.Curves[0].Unit != results.UnitUsers {
		t.Errorf("curves %+v, want two in users", wl.Curves)
	}
	if want := "At p99 ≤ 10ms, errors ≤ 0.1%, go-stdlib serves the most: 410 users [400, 420]"; !strings.HasPrefix(wl.Headline, want) {
		t.Errorf("headline %q, want it to start %q", wl.Headline, want)
	}
	if !strings.Contains(wl.VerdictBasis, "the most closed-model users (think time 10ms)") {
		t.Errorf("verdict basis %q, want it in users", wl.VerdictBasis)
	}
	var md, page bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, res); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		text string
		want []string
	}{
		"summary.md": {md.String(), []string{"| Implementation | Capacity (users) | Per CPU | Fewest users failing |", "| go-stdlib | 410 users [400, 420] | 410 | 416 |", "closed-model probes of users thinking 10ms"}},
		"report.html": {page.String(), []string{"<th>Capacity (users)</th>", "<th>Fewest users failing</th>", "410 users [400, 420]", "closed-model probes of users thinking 10ms",
			// The latency-load curve is against users.
			"closed-model users", "go-stdlib capacity 410 users", "go-stdlib at 200 users offered"}},
	} {
		for _, want := range c.want {
			if !strings.Contains(c.text, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
		if strings.Contains(c.text, "req/s [") || strings.Contains(c.text, "Capacity (req/s)") || strings.Contains(c.text, "offered rate") || strings.Contains(c.text, "achieved = offered") {
			t.Errorf("%s names a capacity in req/s", name)
		}
	}
}

// TestAcceptableFromObjective: a plan's objective is the headline's
// acceptable latency, unless WithAcceptable says otherwise.
func TestAcceptableFromObjective(t *testing.T) {
	slo := &plan.SLO{Percentiles: []plan.PercentileLimit{{Q: 99, Limit: plan.Duration(5 * time.Millisecond)}}, Errors: 0.002}
	res := &Results{Kind: KindRun, Run: &results.Run{Plan: &plan.Plan{Name: "t", SLO: slo}}}
	o := newOptions(nil)
	applyObjective(&o, res.Run.Plan)
	if o.p99Ms != 5 || o.errorPercent != 0.2 {
		t.Errorf("acceptable p99 %g ms, errors %g%%; want the objective's 5 ms, 0.2%%", o.p99Ms, o.errorPercent)
	}
	o = newOptions([]Option{WithAcceptable(250, 1)})
	applyObjective(&o, res.Run.Plan)
	if o.p99Ms != 250 {
		t.Errorf("acceptable p99 %g ms, want the option's 250", o.p99Ms)
	}
}

// TestCapacityRejudged: judging a capacity run again estimates every
// capacity from its brackets (capacity.Estimate) and ranks them again
// (capacity.Judge), whatever the run recorded, and says so.
func TestCapacityRejudged(t *testing.T) {
	slo := &plan.SLO{Percentiles: []plan.PercentileLimit{{Q: 99, Limit: plan.Duration(5 * time.Millisecond)}}}
	p := &plan.Plan{Name: "cap", Workloads: []plan.Workload{{Name: "string"}}, Load: plan.Load{Model: "open", Levels: []int{1000}},
		Implementations: []plan.Implementation{{Service: "go-stdlib"}, {Service: "node-http"}}, SLO: slo}
	caps := func() []*results.Capacity {
		return []*results.Capacity{
			{Workload: "string", Arm: "go-stdlib", Objective: slo.String(), Brackets: []results.Bracket{{Start: 1, Pass: 30_000, Fail: 31_000}, {Start: 2, Pass: 29_000, Fail: 30_000}}},
			{Workload: "string", Arm: "node-http", Objective: slo.String(), Brackets: []results.Bracket{{Start: 1, Pass: 10_000, Fail: 10_500}, {Start: 2, Pass: 9_500, Fail: 10_000}}},
		}
	}
	// Recorded: node-http ahead with figures its brackets do not give.
	rec := caps()
	rec[0].Rate, rec[0].Low, rec[0].High = 5_000, 4_000, 6_000
	rec[1].Rate, rec[1].Low, rec[1].High = 50_000, 40_000, 60_000
	recorded := capacity.Judge("string", slo.String(), []*results.Capacity{rec[1], rec[0]})
	res := &Results{Kind: KindRun, Run: &results.Run{Plan: p, Capacities: rec, CapacityVerdicts: []*results.CapacityVerdict{recorded}}}
	fresh := caps()
	for _, c := range fresh {
		capacity.Estimate(c)
	}
	want := capacity.Judge("string", slo.String(), fresh)
	s := Summarize(res, WithRejudging())
	wl := s.Workloads[0]
	if got := res.Run.CapacityVerdicts[0]; !slices.Equal(got.Ranking, []string{"go-stdlib", "node-http"}) || !slices.Equal(wording.CapacityVerdict(got), wording.CapacityVerdict(want)) {
		t.Errorf("judged again: %q, want %q", wording.CapacityVerdict(got), wording.CapacityVerdict(want))
	}
	if wl.Capacities[0].Capacity != wording.Capacity(fresh[0]) {
		t.Errorf("go-stdlib's capacity %q, want %q from its brackets", wl.Capacities[0].Capacity, wording.Capacity(fresh[0]))
	}
	if !strings.Contains(wl.VerdictBasis, RejudgedNote) || !slices.Equal(wl.Recorded, append(wording.Verdict(&recorded.Verdict), recorded.LowerBounds...)) {
		t.Errorf("basis %q, recorded %q: want the note and the verdict as recorded", wl.VerdictBasis, wl.Recorded)
	}
	// Judged again once more, nothing changes: the recorded lines are
	// those of the run, not of the first judging.
	res.Rejudge()
	if again := Summarize(res, WithRejudging()).Workloads[0]; !slices.Equal(again.Verdicts, wl.Verdicts) || !slices.Equal(again.Recorded, wl.Recorded) {
		t.Errorf("judging twice changed the verdict: %q, recorded %q", again.Verdicts, again.Recorded)
	}
}

// TestCapacityHeldReport: a run whose every start was confirmed leads
// with what held, the search's edge beside it, sizes from the held
// interval, and keeps the starts it added (and why) when judged again.
func TestCapacityHeldReport(t *testing.T) {
	slo := &plan.SLO{Percentiles: []plan.PercentileLimit{{Q: 99, Limit: plan.Duration(5 * time.Millisecond)}}, Errors: 0.001}
	p := &plan.Plan{Name: "cap", Workloads: []plan.Workload{{Name: "string"}}, Load: plan.Load{Model: "open", Levels: []int{1000}},
		Implementations: []plan.Implementation{{Service: "go-stdlib"}, {Service: "node-http"}}, SLO: slo, Sizing: &plan.Sizing{Rate: 100_000}}
	held := func(start int, pass, h float64) results.Bracket {
		return results.Bracket{Start: start, Pass: pass, Fail: pass * 1.01, Why: "p99 7.1ms > 5.0ms", Confirmed: true, Held: h, HeldSeconds: 30, HeldRuns: 2}
	}
	goStd := &results.Capacity{Workload: "string", Arm: "go-stdlib", Objective: slo.String(), CPUs: 1, RSSBytes: 1 << 20,
		Brackets: []results.Bracket{held(1, 46_386, 39_000), held(2, 55_808, 44_000), held(3, 50_000, 41_000), held(4, 49_000, 41_500)}}
	node := &results.Capacity{Workload: "string", Arm: "node-http", Objective: slo.String(), CPUs: 1, RSSBytes: 1 << 20,
		Brackets: []results.Bracket{held(1, 12_000, 10_000), held(2, 12_100, 10_100), held(3, 12_050, 10_050), held(4, 12_000, 10_000)}}
	caps := []*results.Capacity{goStd, node}
	for _, c := range caps {
		capacity.Estimate(c)
	}
	v := capacity.Judge("string", slo.String(), caps)
	v.AddedStarts, v.Added = 2, []string{"start 3, as go-stdlib on string: two starts held 39000 and 44000 req/s, an interval [9735, 73265] wider than ±25%", "start 4, as ..."}
	res := &Results{Kind: KindRun, Run: &results.Run{Plan: p, Capacities: caps, CapacityVerdicts: []*results.CapacityVerdict{v}}}
	wl := Summarize(res, WithRejudging()).Workloads[0]
	want := "go-stdlib serves the most: held " + wording.Amount(goStd.Rate, "req/s") + " req/s ["
	if !strings.Contains(wl.Headline, want) || !strings.Contains(wl.Headline, "(2 × 30 s in each start); the search's edge ") {
		t.Errorf("headline %q, want %q... and the search's edge", wl.Headline, want)
	}
	if lines := strings.Join(wl.Verdicts, "\n"); !strings.Contains(lines, "two starts added past the plan's trials") || !strings.Contains(lines, "start 3, as go-stdlib on string") {
		t.Errorf("verdicts %q lack the added starts", wl.Verdicts)
	}
	if !strings.Contains(wl.VerdictBasis, "sustained runs") {
		t.Errorf("basis %q does not say the capacity is what held", wl.VerdictBasis)
	}
	if strings.Contains(wl.VerdictBasis, "bisecting") {
		t.Errorf("basis %q says the confirmation bisected, which none of these starts did", wl.VerdictBasis)
	}
	goStd.Brackets[0].HeldFailed = 41_000
	if b := Summarize(res, WithRejudging()).Workloads[0].VerdictBasis; !strings.Contains(b, "then bisecting as long toward the rate above it that failed") {
		t.Errorf("basis %q, want the bisection a start made said", b)
	}
	if row := wl.Capacities[0]; row.SearchRate <= row.Rate {
		t.Errorf("row %+v: want the search's estimate beside the held rate", row)
	}
	for _, sz := range wl.Sizing {
		if c := map[string]*results.Capacity{"go-stdlib": goStd, "node-http": node}[sz.Implementation]; sz.Instances != int(math.Ceil(100_000/c.Low)) {
			t.Errorf("%s: %d processes, want from the held interval's lower end %g", sz.Implementation, sz.Instances, c.Low)
		}
	}
}
