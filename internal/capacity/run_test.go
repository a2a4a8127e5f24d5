package capacity

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/measure/measuretest"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/internal/wording"
)

// capacityPlan is a capacity search on the fake bench: probes of at most
// 2 s, confirmations of 5 s (so the fake tells them apart), two starts,
// trials_max where the test names it.
const capacityPlan = `name: c
implementations: [go-stdlib, java-spring]
workloads: [string]
slo: {p99: 5ms, errors: 0.1%}
capacity: {start_rate: 30000, resolution: 2%, probe_min: 500ms, probe_max: 2s, max_probes: 20, confirm: 5s}
trials: 2
load:
  levels: [10]
  warmup: 1s
`

// runCapacity runs plan text's capacity search on a fake bench whose
// arms meet the objective up to search(arm, trial) in the search's
// probes and up to 0.9 of it in the confirmations' longer runs (a host
// that stalls now and then misses it over 30 s near the knee), and
// returns the record and the fake.
func runCapacity(t *testing.T, text string, search func(arm string, trial int) float64) (*results.Run, *measuretest.Bench) {
	t.Helper()
	b := measuretest.New(t, measuretest.Plan(t, text), measuretest.Steady)
	b.Sustained = 2 * time.Second
	b.Capacity = func(arm string, trial int, sustained bool) float64 {
		if sustained {
			return 0.9 * search(arm, trial)
		}
		return search(arm, trial)
	}
	Run(context.Background(), b)
	return b.Rec, b
}

// capacityOf is arm's capacity in rec.
func capacityOf(t *testing.T, rec *results.Run, arm string) *results.Capacity {
	t.Helper()
	for _, c := range rec.Capacities {
		if c.Arm == arm {
			return c
		}
	}
	t.Fatalf("no capacity of %s", arm)
	return nil
}

// TestCapacityHeld: every start's confirmation runs from that start's
// own edge and steps down until a rate holds twice in a row, then
// bisects between it and the rate above that failed, as long; the
// capacity is the mean and interval of the held rates, the search's
// estimate kept beside it, and the arms are ranked and sized by what
// held. Starts that agree add none.
func TestCapacityHeld(t *testing.T) {
	edges := map[string][]float64{"go-stdlib": {40000, 40400}, "java-spring": {20000, 20200}}
	rec, _ := runCapacity(t, capacityPlan, func(arm string, trial int) float64 { return edges[arm][trial-1] })
	for arm, edge := range edges {
		c := capacityOf(t, rec, arm)
		if len(c.Brackets) != 2 {
			t.Fatalf("%s: %d brackets, want 2 (no start added)", arm, len(c.Brackets))
		}
		var held []float64
		for i, b := range c.Brackets {
			// From the start's own edge: ×1 and ×0.95 fail over the
			// sustained runs (above 0.9 of the edge), ×0.95×0.90 holds;
			// the bisections then bring what held within 3% of the 0.9
			// that sustained runs meet, below it, and what failed above.
			sustained := 0.9 * edge[i]
			stepped := ConfirmRates(b.Pass, c.Units(), 0.02)[2]
			if !b.Confirmed || b.HeldRuns != ConfirmHolds || b.Held <= stepped || b.Held > sustained || b.HeldFailed <= sustained || (b.HeldFailed-b.Held)/b.Held > 0.03 {
				t.Errorf("%s start %d: confirmed %v, held %g × %d below a failure at %g; want above the step's %g, at most the sustained %g, within 3%% of a failure above it (from its edge %g), %d runs", arm, b.Start, b.Confirmed, b.Held, b.HeldRuns, b.HeldFailed, stepped, sustained, b.Pass, ConfirmHolds)
			}
			held = append(held, b.Held)
			var from float64
			for _, pr := range c.Confirmations {
				if pr.Start == b.Start && from == 0 {
					from = pr.Rate
				}
			}
			if from != b.Pass {
				t.Errorf("%s start %d: confirmation began at %g, want its edge %g", arm, b.Start, from, b.Pass)
			}
		}
		iv := stats.CI95(held)
		if math.Abs(c.Rate-iv.Mean) > 1e-6 || math.Abs(c.Low-iv.Low) > 1e-6 || math.Abs(c.High-iv.High) > 1e-6 {
			t.Errorf("%s: capacity %g [%g, %g], want the held rates' %g [%g, %g]", arm, c.Rate, c.Low, c.High, iv.Mean, iv.Low, iv.High)
		}
		if c.SearchRate < 0.97*edge[0] || c.SearchRate <= c.Rate {
			t.Errorf("%s: search's estimate %g, want it kept beside the held %g, near the edges %v", arm, c.SearchRate, c.Rate, edge)
		}
		if c.Unsettled() {
			t.Errorf("%s: held interval [%g, %g] unsettled", arm, c.Low, c.High)
		}
		text := wording.Capacity(c)
		if !strings.HasPrefix(text, "held "+wording.Amount(c.Rate, c.Units())+" req/s [") || !strings.Contains(text, "(2 × 5 s in each start); the search's edge "+wording.Amount(c.SearchRate, c.Units())) {
			t.Errorf("%s: %q, want what held and the search's edge", arm, text)
		}
		if sz := results.SizeFor(c, *measuretest.Plan(t, capacityPlan+"sizing: {rate: 100000}\n").Sizing); sz.Instances != int(math.Ceil(100000/c.Low)) {
			t.Errorf("%s: %d instances for 100000 req/s, want from the held interval's lower end %g", arm, sz.Instances, c.Low)
		}
	}
	v := rec.CapacityVerdicts[0]
	if len(v.Ranking) != 2 || v.Ranking[0] != "go-stdlib" || v.AddedStarts != 0 {
		t.Fatalf("ranking %v, %d starts added; want go-stdlib first, none added", v.Ranking, v.AddedStarts)
	}
	if pr := v.Pairs[0]; pr.Starts != 2 || math.Abs(pr.Ratio-2) > 0.05 || !pr.Significant {
		t.Errorf("pair %+v, want about 2× over the two starts' held rates", pr)
	}
}

// TestCapacityAddsStarts: two starts that held far apart leave an
// interval reaching zero; with trials_max the search adds starts until
// the held interval is within ±25%, and the verdict says how many and
// why. Without trials_max the answer says a third start would narrow it.
func TestCapacityAddsStarts(t *testing.T) {
	edges := []float64{40000, 56000, 48000, 48000, 48000, 48000}
	search := func(arm string, trial int) float64 {
		if arm == "java-spring" {
			return 20000
		}
		return edges[trial-1]
	}
	rec, _ := runCapacity(t, capacityPlan+"trials_max: 6\n", search)
	c := capacityOf(t, rec, "go-stdlib")
	if len(c.Brackets) != 4 {
		t.Fatalf("%d starts, want 4: the third and fourth added while the interval was wide", len(c.Brackets))
	}
	if c.Unsettled() || c.Low <= 0 {
		t.Errorf("after 4 starts: [%g, %g] around %g still unsettled", c.Low, c.High, c.Rate)
	}
	v := rec.CapacityVerdicts[0]
	if v.AddedStarts != 2 || len(v.Added) != 2 || !strings.HasPrefix(v.Added[0], "start 3, as go-stdlib on string: two starts held ") || !strings.Contains(v.Added[0], "reaching zero") ||
		!strings.HasPrefix(v.Added[1], "start 4, as go-stdlib on string: three starts held ") || !strings.Contains(v.Added[1], "wider than ±25%") {
		t.Errorf("added %d: %q; want starts 3 and 4, each with why", v.AddedStarts, v.Added)
	}
	if lines := strings.Join(wording.CapacityVerdict(v), "\n"); !strings.Contains(lines, "two starts added past the plan's trials") {
		t.Errorf("verdict %q does not say the starts were added", lines)
	}
	t.Logf("%s\n%s\n%s", wording.Capacity(c), wording.Answer(c), strings.Join(wording.CapacityVerdict(v), "\n"))
	if strings.Contains(wording.Capacity(c), "would narrow") {
		t.Errorf("%q: a settled capacity asks for another start", wording.Capacity(c))
	}

	// The plan's two starts alone: nothing added, and the answer says so.
	rec, _ = runCapacity(t, capacityPlan, search)
	c = capacityOf(t, rec, "go-stdlib")
	if len(c.Brackets) != 2 || rec.CapacityVerdicts[0].AddedStarts != 0 || !c.Unsettled() {
		t.Fatalf("%d starts, %d added, unsettled %v; want 2, none, unsettled", len(c.Brackets), rec.CapacityVerdicts[0].AddedStarts, c.Unsettled())
	}
	t.Logf("%s\n%s", wording.Capacity(c), wording.Answer(c))
	want := "two starts held " + wording.Amount(c.Brackets[0].Held, c.Units()) + " and " + wording.Amount(c.Brackets[1].Held, c.Units()) + " req/s, an interval reaching zero: a third start would narrow this"
	if text := wording.Capacity(c); !strings.HasSuffix(text, want) {
		t.Errorf("%q, want it to end %q", text, want)
	}
}

// TestCapacityAnotherStart: a start is added for a held interval too
// wide to use only while the budget left holds the longest start so far.
func TestCapacityAnotherStart(t *testing.T) {
	b := measuretest.New(t, measuretest.Plan(t, capacityPlan), measuretest.Steady)
	wide := &results.Capacity{Arm: "go-stdlib", Workload: "string", Rate: 41500, Low: 9735, High: 73265, SearchRate: 51400,
		Brackets: []results.Bracket{{Start: 1, Pass: 46386, Confirmed: true, Held: 39000}, {Start: 2, Pass: 55808, Confirmed: true, Held: 44000}}}
	b.Rec.Capacities = []*results.Capacity{wide}
	x := &runner{b: b, p: b.Plan(), rec: b.Rec}
	if x.another(3, time.Now().Add(30*time.Second), time.Minute) {
		t.Errorf("start 3 added with 30 s of the budget left and starts of a minute")
	}
	if !strings.Contains(strings.Join(b.Said, "\n"), "no start 3: 30s of the budget left, and a start takes about 1m0s") {
		t.Errorf("said %q, want why no start was added", b.Said)
	}
	if !x.another(3, time.Time{}, time.Minute) || len(x.added) != 1 || !strings.HasPrefix(x.added[0], "start 3, as go-stdlib on string: two starts held 39000 and 44000 req/s") {
		t.Errorf("no budget: added %q, want start 3 and why", x.added)
	}
	wide.Brackets[1].Held, wide.Low, wide.High = 40000, 38000, 41000
	if x.another(4, time.Time{}, time.Minute) {
		t.Errorf("start 4 added for a settled interval")
	}
}
