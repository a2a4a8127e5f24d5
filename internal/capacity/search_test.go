package capacity

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/internal/wording"
)

// runSearch drives a search against a synthetic service: pass(rate)
// says whether the objective holds, limit(rate) whether the generator
// limits the probe. It returns the search and the rates probed.
func runSearch(t *testing.T, start, growth float64, pass, limit func(float64) bool) (*Search, []float64) {
	t.Helper()
	return runSearchOn(t, rateScale, start, growth, pass, limit)
}

// runSearchOn is runSearch on a scale: rates or users.
func runSearchOn(t *testing.T, sc Scale, start, growth float64, pass, limit func(float64) bool) (*Search, []float64) {
	t.Helper()
	s := NewSearch(sc, start, 0.02, growth, plan.DefaultMaxProbes)
	var rates []float64
	for i := 0; !s.Done(); i++ {
		if i > 100 {
			t.Fatalf("search not done after 100 probes: %+v", s)
		}
		r := s.next
		rates = append(rates, r)
		why := ""
		switch {
		case limit(r):
			why = "generator at 90% of its CPUs"
		case !pass(r):
			why = "p99 over its limit"
		}
		s.Record(r, pass(r) && !limit(r), limit(r), why)
	}
	return s, rates
}

func never(float64) bool { return false }

func TestSearchConverges(t *testing.T) {
	tests := []struct {
		name     string
		edge     float64 // the service's true capacity
		start    float64
		growth   float64
		maxSteps int
	}{
		// From below: doubles until a rate fails, then bisects.
		{"bracket upwards", 10_000, 600, BracketGrowth, 16},
		// From above: halves until a rate passes, then bisects.
		{"bracket downwards", 700, 40_000, BracketGrowth, 16},
		// A later start from the previous estimate needs fewer probes.
		{"refine from an estimate", 10_000, 9_900, RefineGrowth, 8},
		// The start rate is the edge itself.
		{"start at the edge", 5_000, 5_000, BracketGrowth, 10},
	}
	for _, tc := range tests {
		s, rates := runSearch(t, tc.start, tc.growth, func(r float64) bool { return r <= tc.edge }, never)
		b := s.Bracket(1)
		if !(b.Pass <= tc.edge && tc.edge < b.Fail) {
			t.Errorf("%s: bracket [%g, %g] does not hold the edge %g", tc.name, b.Pass, b.Fail, tc.edge)
		}
		if (b.Fail-b.Pass)/b.Pass > 0.02 {
			t.Errorf("%s: bracket [%g, %g] wider than the resolution", tc.name, b.Pass, b.Fail)
		}
		if len(rates) > tc.maxSteps {
			t.Errorf("%s: %d probes (%v), want at most %d", tc.name, len(rates), rates, tc.maxSteps)
		}
		if b.GeneratorLimited || b.Stopped != "" {
			t.Errorf("%s: bracket %+v, want a clean one", tc.name, b)
		}
	}
}

func TestSearchExpandsBothWays(t *testing.T) {
	// Upwards: every rate before the first failure is twice the last.
	_, up := runSearch(t, 1000, BracketGrowth, func(r float64) bool { return r <= 5000 }, never)
	if want := []float64{1000, 2000, 4000, 8000}; !prefix(up, want) {
		t.Errorf("upwards probed %v, want it to start %v", up, want)
	}
	// Downwards: halves until one passes.
	_, down := runSearch(t, 8000, BracketGrowth, func(r float64) bool { return r <= 900 }, never)
	if want := []float64{8000, 4000, 2000, 1000, 500}; !prefix(down, want) {
		t.Errorf("downwards probed %v, want it to start %v", down, want)
	}
}

func prefix(got, want []float64) bool {
	if len(got) < len(want) {
		return false
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestSearchLowerBound(t *testing.T) {
	// The service would pass up to 50,000 req/s, the generator cannot
	// drive more than 12,000: the search bisects under the generator's
	// ceiling and its bracket is the generator's.
	s, _ := runSearch(t, 3000, BracketGrowth, func(r float64) bool { return r <= 50_000 }, func(r float64) bool { return r > 12_000 })
	b := s.Bracket(1)
	if !b.GeneratorLimited || b.Pass > 12_000 || b.Pass < 12_000/1.03 {
		t.Errorf("bracket %+v, want generator-limited just under 12,000", b)
	}
	// Over starts the bound is the lowest highest-passing rate.
	c := &results.Capacity{Brackets: []results.Bracket{b, {Start: 2, Pass: 11_000, Fail: 11_200}}}
	Estimate(c)
	if !c.LowerBound || c.Low != 11_000 || c.Rate != c.Low || c.High != 0 || c.Reason != "generator at 90% of its CPUs" {
		t.Errorf("capacity %+v, want a lower bound of 11,000 with its reason", c)
	}

	// A service that passes at every rate up to the search's highest is
	// a lower bound too, and says why.
	s, _ = runSearch(t, 1e5, BracketGrowth, func(float64) bool { return true }, never)
	b = s.Bracket(1)
	if b.Fail != 0 || !strings.Contains(b.Stopped, "highest rate") {
		t.Errorf("bracket %+v, want no failing rate and why", b)
	}
	c = &results.Capacity{Brackets: []results.Bracket{b}}
	Estimate(c)
	if !c.LowerBound || !strings.Contains(c.Reason, "highest rate") {
		t.Errorf("capacity %+v, want a lower bound with its reason", c)
	}

	// A service that fails everywhere has no capacity, and the rate that
	// failed last.
	s, _ = runSearch(t, 100, BracketGrowth, func(float64) bool { return false }, never)
	c = &results.Capacity{Brackets: []results.Bracket{s.Bracket(1)}}
	Estimate(c)
	if c.Rate != 0 || c.LowerBound || c.Failed == 0 || c.Failed > 2*MinProbeRate || !strings.HasPrefix(wording.Capacity(c), "none: start 1 failed the objective at every rate") {
		t.Errorf("capacity %q %+v, want none, failed near %g", wording.Capacity(c), c, MinProbeRate)
	}
}

func TestSearchMaxProbes(t *testing.T) {
	s := NewSearch(rateScale, 1, 0.02, BracketGrowth, 3)
	for i := 0; !s.Done() && i < 10; i++ {
		s.Record(s.next, true, false, "")
	}
	if s.probes != 3 || !strings.Contains(s.stop, "max_probes") {
		t.Errorf("%d probes, stop %q; want 3 and max_probes named", s.probes, s.stop)
	}
}

// closedService is a synthetic closed-model service: one server of
// capacity mu req/s, users each thinking think seconds between requests.
// Its latency at n users is that of the closed model's asymptote (the
// interactive response time law): R(n) = max(s, n/mu - think), with
// service time s = 1/mu; the objective holds while R(n) <= limit, up to
// n* = floor(mu × (limit + think)).
func closedService(mu, think, limit float64) (pass func(float64) bool, edge float64) {
	pass = func(n float64) bool { return math.Max(1/mu, n/mu-think) <= limit }
	return pass, math.Floor(mu * (limit + think))
}

func TestSearchUsers(t *testing.T) {
	tests := []struct {
		name          string
		mu, think, ms float64 // capacity (req/s), think time (s), limit (ms)
		start, growth float64
		maxSteps      int
	}{
		// 20,000 req/s, 10 ms think, 10 ms limit: 400 users, from 50.
		{"bracket upwards", 20_000, 0.010, 10, 50, BracketGrowth, 16},
		// From far above: halves, then bisects.
		{"bracket downwards", 2_000, 0.010, 5, 3000, BracketGrowth, 16},
		// A slow service with a long think: 3 users; whole numbers
		// end the search where 2% cannot.
		{"a few users", 100, 0.020, 10, 1, BracketGrowth, 8},
		// A later start refines from an estimate.
		{"refine", 20_000, 0.010, 10, 390, RefineGrowth, 10},
	}
	for _, tc := range tests {
		pass, edge := closedService(tc.mu, tc.think, tc.ms/1e3)
		s, users := runSearchOn(t, usersScale, tc.start, tc.growth, pass, never)
		for _, n := range users {
			if n != math.Round(n) || n < 1 {
				t.Errorf("%s: probed %g users, want whole numbers from 1", tc.name, n)
			}
		}
		b := s.Bracket(1)
		if !(b.Pass <= edge && edge < b.Fail) {
			t.Errorf("%s: bracket [%g, %g] does not hold the edge %g users", tc.name, b.Pass, b.Fail, edge)
		}
		if (b.Fail-b.Pass)/b.Pass > 0.02 && b.Fail-b.Pass > 1 {
			t.Errorf("%s: bracket [%g, %g] wider than the resolution and one user", tc.name, b.Pass, b.Fail)
		}
		if len(users) > tc.maxSteps || b.Stopped != "" {
			t.Errorf("%s: %d probes (%v), stopped %q; want at most %d", tc.name, len(users), users, b.Stopped, tc.maxSteps)
		}
		c := &results.Capacity{Unit: results.UnitUsers, Brackets: []results.Bracket{b}}
		Estimate(c)
		if c.Low != b.Pass || c.High != b.Fail || !strings.HasSuffix(strings.Fields(wording.Capacity(c))[1], "users") {
			t.Errorf("%s: capacity %q, want the bracket in users", tc.name, wording.Capacity(c))
		}
	}

	// A service failing at one user has no capacity, and says so in users.
	s, users := runSearchOn(t, usersScale, 8, BracketGrowth, func(float64) bool { return false }, never)
	c := &results.Capacity{Unit: results.UnitUsers, Brackets: []results.Bracket{s.Bracket(1)}}
	Estimate(c)
	if last := users[len(users)-1]; last != 1 || c.Rate != 0 || wording.Capacity(c) != "none: start 1 failed the objective at every number of users it tried, down to 1 users (p99 over its limit)" {
		t.Errorf("probed %v; capacity %q, want none, down to 1 user", users, wording.Capacity(c))
	}
	// The generator's ceiling bounds users as it bounds rates.
	pass, _ := closedService(50_000, 0.010, 0.010)
	s, _ = runSearchOn(t, usersScale, 64, BracketGrowth, pass, func(n float64) bool { return n > 300 })
	c = &results.Capacity{Unit: results.UnitUsers, Brackets: []results.Bracket{s.Bracket(1)}}
	Estimate(c)
	if !c.LowerBound || c.Low < 294 || c.Low > 300 || !strings.HasPrefix(wording.Capacity(c), "at least") || !strings.Contains(wording.Capacity(c), "users") {
		t.Errorf("capacity %q, want a lower bound just under 300 users", wording.Capacity(c))
	}
	v := Judge("string", "p99 ≤ 10ms", []*results.Capacity{c})
	if lb := strings.Join(v.LowerBounds, "\n"); !strings.Contains(lb, "users: generator at 90%") {
		t.Errorf("lower bounds %q, want them in users", v.LowerBounds)
	}
}

func TestEstimateInterval(t *testing.T) {
	// Two starts, brackets [990, 1010] and [1090, 1110]: midpoints 1000
	// and 1100, half-width 10 each. The mean is 1050; the t interval of
	// two values is 1050 ± 12.706 × 70.71 / √2 = ± 635.3, widened by 10.
	c := &results.Capacity{Brackets: []results.Bracket{{Start: 1, Pass: 990, Fail: 1010}, {Start: 2, Pass: 1090, Fail: 1110}}}
	Estimate(c)
	h := 12.706*math.Sqrt(2*50*50)/math.Sqrt(2) + 10
	if math.Abs(c.Rate-1050) > 1e-9 || math.Abs(c.Low-(1050-h)) > 1e-6 || math.Abs(c.High-(1050+h)) > 1e-6 {
		t.Errorf("capacity %g [%g, %g], want 1050 [%g, %g]", c.Rate, c.Low, c.High, 1050-h, 1050+h)
	}
	if c.Failed != 1010 || c.LowerBound {
		t.Errorf("failed %g, lower bound %v; want 1010, false", c.Failed, c.LowerBound)
	}
	// One start: the bracket itself.
	c = &results.Capacity{Brackets: []results.Bracket{{Start: 1, Pass: 990, Fail: 1010, Why: "p99 12 ms > 10 ms"}}}
	Estimate(c)
	if c.Rate != 1000 || c.Low != 990 || c.High != 1010 || c.FailedWhy != "p99 12 ms > 10 ms" {
		t.Errorf("one start: %+v, want 1000 [990, 1010] and why it failed", c)
	}
	// A start whose every rate the generator limited is left out, and
	// makes the capacity a lower bound; with every start so, no figure.
	c = &results.Capacity{Brackets: []results.Bracket{{Start: 1, Fail: 1000, GeneratorLimited: true, Why: "generator late"}, {Start: 2, Pass: 990, Fail: 1010}}}
	Estimate(c)
	if !c.LowerBound || c.Rate != 990 || !strings.Contains(c.Reason, "start 1: the generator limited every rate") {
		t.Errorf("one start the generator's: %+v, want a lower bound of 990 saying why", c)
	}
	c = &results.Capacity{Brackets: []results.Bracket{{Start: 1, Fail: 1000, GeneratorLimited: true, Why: "generator late"}}}
	Estimate(c)
	if c.Rate != 0 || !strings.HasPrefix(wording.Capacity(c), "none: start 1: the generator limited every rate") {
		t.Errorf("every start the generator's: %q", wording.Capacity(c))
	}
	// The RSS for sizing is the highest passing probe's.
	c.Probes = []results.Probe{{Rate: 500, Pass: true, RSSBytes: 10}, {Rate: 990, Pass: true, RSSBytes: 30}, {Rate: 1010, RSSBytes: 40}}
	Estimate(c)
	if c.RSSBytes != 30 {
		t.Errorf("RSS %d, want the highest passing probe's 30", c.RSSBytes)
	}
}

func TestJudgeCapacity(t *testing.T) {
	fast := &results.Capacity{Arm: "fast", Brackets: []results.Bracket{{Start: 1, Pass: 1980, Fail: 2020}, {Start: 2, Pass: 2180, Fail: 2220}}}
	slow := &results.Capacity{Arm: "slow", Brackets: []results.Bracket{{Start: 1, Pass: 990, Fail: 1010}, {Start: 2, Pass: 1090, Fail: 1110}}}
	Estimate(fast)
	Estimate(slow)
	v := Judge("string", "p99 ≤ 10ms, errors ≤ 0.1%", []*results.Capacity{slow, fast})
	if len(v.Ranking) != 2 || v.Ranking[0] != "fast" || len(v.Pairs) != 1 {
		t.Fatalf("verdict %+v, want fast before slow", v)
	}
	pr := v.Pairs[0]
	// Paired by start the ratio is 2 in both: the interval is only the
	// brackets' widening, half of each arm's log bracket, averaged over
	// the starts.
	w := (math.Log(2020.0/1980)/2 + math.Log(1010.0/990)/2 + math.Log(2220.0/2180)/2 + math.Log(1110.0/1090)/2) / 2
	if math.Abs(pr.Ratio-2) > 1e-9 || math.Abs(pr.Low-2*math.Exp(-w)) > 1e-9 || math.Abs(pr.High-2*math.Exp(w)) > 1e-9 || !pr.Significant || pr.Starts != 2 {
		t.Errorf("pair %+v, want 2 [%g, %g] over 2 starts", pr, 2*math.Exp(-w), 2*math.Exp(w))
	}
	lines := strings.Join(wording.CapacityVerdict(&results.CapacityVerdict{Workload: "string", Objective: "p99 ≤ 10ms", Verdict: v.Verdict}), "\n")
	if !strings.Contains(lines, "fast 2.00× slow") || !strings.Contains(lines, "capacity") {
		t.Errorf("verdict lines:\n%s", lines)
	}
	// A lower bound is named, with its reason, and so is its pair.
	bound := &results.Capacity{Arm: "bound", Brackets: []results.Bracket{{Start: 1, Pass: 5000, Fail: 5100, GeneratorLimited: true, Why: "generator at 90% of its CPUs"}}}
	Estimate(bound)
	lb := strings.Join(Judge("string", "p99 ≤ 10ms", []*results.Capacity{fast, bound}).LowerBounds, "\n")
	if !strings.Contains(lb, "bound's capacity is a lower bound, at least 5000 req/s: generator at 90%") || !strings.Contains(lb, "bound against fast") {
		t.Errorf("lower bounds %q", lb)
	}
	// With one start, the interval is the brackets' extremes.
	one := capacityRatio(&results.Capacity{Arm: "a", Rate: 2000, Brackets: []results.Bracket{{Start: 1, Pass: 1980, Fail: 2020}}},
		&results.Capacity{Arm: "b", Rate: 1000, Brackets: []results.Bracket{{Start: 1, Pass: 990, Fail: 1010}}})
	if one.Low != 1980.0/1010 || one.High != 2020.0/990 || !one.OneStart {
		t.Errorf("one start: %+v, want [%g, %g]", one, 1980.0/1010, 2020.0/990)
	}
}

func TestJudgeProbe(t *testing.T) {
	slo := plan.SLO{Percentiles: []plan.PercentileLimit{{Q: 99, Limit: plan.Duration(10 * time.Millisecond)}, {Q: 99.9, Limit: plan.Duration(50 * time.Millisecond)}}, Errors: 0.001}
	at := func(p99, p999 float64) func(float64) float64 {
		return func(q float64) float64 {
			if q == 99 {
				return p99
			}
			return p999
		}
	}
	tests := []struct {
		name             string
		pr               results.Probe
		latency, service func(float64) float64
		pass, limited    bool
		why              []string
		farOver          bool
	}{
		// Within every limit.
		{"pass", results.Probe{ErrorRate: 0.0005, GeneratorCPU: 40}, at(4, 20), at(3, 15), true, false, nil, false},
		// One percentile over, and errors over: both named.
		{"fail", results.Probe{ErrorRate: 0.004, GeneratorCPU: 40}, at(14, 20), at(13, 15), false, false, []string{"p99 14", "> 10", "errors 0.4% > 0.1%"}, false},
		// The generator at 85% of its CPUs: its probe, not the service's.
		{"generator busy", results.Probe{GeneratorCPU: 85}, at(4, 20), at(3, 15), false, true, []string{"generator at 85%"}, false},
		// Late sends made the latency while the service met its limits.
		{"generator late", results.Probe{LatenessP99Ms: 3, GeneratorCPU: 40}, at(12, 20), at(3, 15), false, true, []string{"generator late", "3", "> 1"}, false},
		// Late sends, and the objective met all the same: a pass (its
		// latency counts the lateness).
		{"late within the objective", results.Probe{LatenessP99Ms: 3, GeneratorCPU: 40}, at(3.2, 20), at(3, 15), true, false, nil, false},
		// Late sends while the service itself missed: the service's failure.
		{"late but the service failed", results.Probe{LatenessP99Ms: 3, GeneratorCPU: 40}, at(30, 90), at(25, 80), false, false, []string{"p99 30", "p99.9 90"}, false},
		// Ten times a limit: the service overloaded (not repeated).
		{"far over", results.Probe{GeneratorCPU: 40}, at(100, 90), at(100, 90), false, false, []string{"p99 100"}, true},
		{"far over on errors", results.Probe{ErrorRate: 0.02, GeneratorCPU: 40}, at(4, 20), at(3, 15), false, false, []string{"errors 2%"}, true},
	}
	for _, tc := range tests {
		pr := tc.pr
		JudgeProbe(&pr, slo, nil, tc.latency, tc.service)
		if RepeatProbe(pr) != (!tc.pass && (tc.limited || !tc.farOver)) {
			t.Errorf("%s: repeated %v, want it only for a failure not far over", tc.name, RepeatProbe(pr))
		}
		if pr.FarOver != tc.farOver {
			t.Errorf("%s: far over %v, want %v (%s)", tc.name, pr.FarOver, tc.farOver, pr.Why)
		}
		if pr.Pass != tc.pass || pr.GeneratorLimited != tc.limited {
			t.Errorf("%s: pass %v limited %v (%s), want %v %v", tc.name, pr.Pass, pr.GeneratorLimited, pr.Why, tc.pass, tc.limited)
		}
		for _, w := range tc.why {
			if !strings.Contains(pr.Why, w) {
				t.Errorf("%s: why %q lacks %q", tc.name, pr.Why, w)
			}
		}
	}
}

// TestDroppedFailed: a probe's dropped sends (still waiting for a
// connection when it ended) count as failed only beyond the queue the
// objective's tightest limit allows at the probe's rate; without a rate
// all of them do.
func TestDroppedFailed(t *testing.T) {
	cases := []struct {
		dropped int64
		rate    float64
		limit   time.Duration
		want    int64
	}{
		{140, 47000, 10 * time.Millisecond, 0},   // 3 ms of arrivals: under 10 ms
		{600, 47000, 10 * time.Millisecond, 130}, // 12.8 ms: the 130 oldest waited past it
		{600, 0, 10 * time.Millisecond, 600},     // closed model: no rate
		{5, 47000, 0, 5},                         // no latency limit
		{0, 47000, 10 * time.Millisecond, 0},
	}
	for _, c := range cases {
		if got := DroppedFailed(c.dropped, c.rate, c.limit); got != c.want {
			t.Errorf("DroppedFailed(%d, %g, %s) = %d, want %d", c.dropped, c.rate, c.limit, got, c.want)
		}
	}
}

// TestEstimateHeld: a capacity confirmed in every start is what held,
// the mean and 95% t interval of the starts' held rates, the search's
// estimate kept beside it; a start that held nothing is left out of the
// interval, a capacity no start held has none, a lower bound is the
// lowest rate held, and a run recorded before reads as it did.
func TestEstimateHeld(t *testing.T) {
	held := func(pass, fail, h float64, start int) results.Bracket {
		return results.Bracket{Start: start, Pass: pass, Fail: fail, Confirmed: true, Held: h, HeldSeconds: 30, HeldRuns: 2}
	}
	// The user's day: edges 46,386 and 55,808 held at 39,000 and 44,000.
	c := &results.Capacity{Brackets: []results.Bracket{held(46386, 46900, 39000, 1), held(55808, 56400, 44000, 2)}}
	Estimate(c)
	h := 12.706 * math.Sqrt(2*2500*2500) / math.Sqrt(2)
	if c.Rate != 41500 || math.Abs(c.Low-(41500-h)) > 1e-6 || math.Abs(c.High-(41500+h)) > 1e-6 {
		t.Errorf("held %g [%g, %g], want 41500 [%g, %g]", c.Rate, c.Low, c.High, 41500-h, 41500+h)
	}
	if math.Abs(c.SearchRate-(46643+56104)/2.0) > 1e-9 || c.SearchHigh <= c.SearchRate || !c.Unsettled() {
		t.Errorf("search's estimate %g [%g, %g], unsettled %v; want the midpoints' mean kept, and unsettled", c.SearchRate, c.SearchLow, c.SearchHigh, c.Unsettled())
	}
	// Three starts close together: settled.
	c.Brackets = append(c.Brackets, held(50000, 50500, 41500, 3))
	c.Brackets[0].Held, c.Brackets[1].Held = 41000, 42000
	Estimate(c)
	if c.Rate != 41500 || c.Unsettled() || c.Low < 40000 {
		t.Errorf("three starts: held %g [%g, %g], unsettled %v; want 41500 within ±25%%", c.Rate, c.Low, c.High, c.Unsettled())
	}
	// A start that held nothing is left out; with none held, no capacity.
	c.Brackets[2].Held = 0
	Estimate(c)
	if c.Rate != 41500 || c.Low >= 41000 {
		t.Errorf("a start holding nothing: %g [%g, %g], want the other two's 41500", c.Rate, c.Low, c.High)
	}
	for i := range c.Brackets {
		c.Brackets[i].Held = 0
	}
	Estimate(c)
	if c.Rate != 0 || c.SearchRate <= 0 || !strings.HasPrefix(wording.Capacity(c), "none held: no start held a rate in 2 sustained runs in a row") {
		t.Errorf("none held: %g (search %g), %q", c.Rate, c.SearchRate, wording.Capacity(c))
	}
	// A lower bound: the lowest rate held, still a lower bound.
	bound := &results.Capacity{Brackets: []results.Bracket{held(5000, 5100, 4500, 1), held(5200, 5300, 4700, 2)}}
	bound.Brackets[0].GeneratorLimited, bound.Brackets[0].Why = true, "generator at 90% of its CPUs"
	Estimate(bound)
	if !bound.LowerBound || bound.Rate != 4500 || bound.Low != 4500 || bound.SearchRate != 5000 || bound.Unsettled() {
		t.Errorf("lower bound: %+v, want at least 4500, the search's 5000 beside it", bound)
	}
	// Recorded before every start was confirmed: the search's estimate,
	// with no search figures beside it.
	old := &results.Capacity{Held: 39000, Brackets: []results.Bracket{{Start: 1, Pass: 990, Fail: 1010}, {Start: 2, Pass: 1090, Fail: 1110}}}
	Estimate(old)
	if old.Rate != 1050 || old.SearchRate != 0 || old.Held != 39000 {
		t.Errorf("an old run: %g (search %g, held %g), want 1050 as before", old.Rate, old.SearchRate, old.Held)
	}
}

// TestJudgeHeld: arms confirmed in every start rank by what held, and
// their ratio is paired by start over the held rates.
func TestJudgeHeld(t *testing.T) {
	held := func(start int, pass, h float64) results.Bracket {
		return results.Bracket{Start: start, Pass: pass, Fail: pass * 1.02, Confirmed: true, Held: h, HeldRuns: 2, HeldSeconds: 30}
	}
	// a's search edge is higher, but b held more in both starts.
	a := &results.Capacity{Arm: "a", Brackets: []results.Bracket{held(1, 3000, 1500), held(2, 3100, 1600)}}
	b := &results.Capacity{Arm: "b", Brackets: []results.Bracket{held(1, 2000, 1800), held(2, 2100, 1900)}}
	Estimate(a)
	Estimate(b)
	v := Judge("string", "p99 ≤ 10ms", []*results.Capacity{a, b})
	if v.Ranking[0] != "b" {
		t.Fatalf("ranking %v, want b first by what held", v.Ranking)
	}
	pr := v.Pairs[0]
	logs := []float64{math.Log(1800.0 / 1500), math.Log(1900.0 / 1600)}
	iv := stats.CI95(logs)
	if pr.Starts != 2 || math.Abs(pr.Ratio-math.Exp(iv.Mean)) > 1e-9 || math.Abs(pr.Low-math.Exp(iv.Low)) > 1e-9 || math.Abs(pr.High-math.Exp(iv.High)) > 1e-9 {
		t.Errorf("pair %+v, want %g [%g, %g] over 2 starts", pr, math.Exp(iv.Mean), math.Exp(iv.Low), math.Exp(iv.High))
	}
}
