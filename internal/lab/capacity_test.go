package lab

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/wording"
)

// TestRunCapacity runs plans/smoke-capacity.yaml: go-stdlib's capacity
// on string searched for real, on a tiny budget (a loose objective, 20%
// resolution, short probes) over two fresh starts: every probe is recorded with its figures, each start
// ends in a bracket (or a lower bound, which says why: on a busy machine
// the generator may be the limit), the second start begins where the
// first passed, the capacity's interval holds its estimate, run.json
// keeps it all, and nothing is left running.
func TestRunCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("builds go-stdlib and searches its capacity")
	}
	dir, rec, c := runCapacityPlan(t, "plans/smoke-capacity.yaml", func(root string, catalog plan.Catalog) (*plan.Plan, error) {
		return plan.LoadPlan(filepath.Join(root, "plans", "smoke-capacity.yaml"), catalog, thisMachine())
	})
	if len(rec.Services) != 2 {
		t.Fatalf("%d service records, want one per start", len(rec.Services))
	}
	for _, sr := range rec.Services {
		if sr.Status != results.OK || len(sr.Levels) != 0 || sr.Warmup == nil {
			t.Errorf("start %d: %s %s, %d levels, warm-up %v; want OK, warmed, no levels", sr.Trial, sr.Status, sr.Reason, len(sr.Levels), sr.Warmup)
		}
	}
	if c.Arm != "go-stdlib" || c.Workload != "string" || c.Objective != "p90 ≤ 20ms, errors ≤ 1%" || c.CPUs != 1 {
		t.Errorf("capacity of %s on %s at %q on %g CPUs", c.Arm, c.Workload, c.Objective, c.CPUs)
	}
	if len(c.Brackets) != 2 || len(c.Probes) < 4 {
		t.Fatalf("%d brackets, %d probes; want 2 and at least 4", len(c.Brackets), len(c.Probes))
	}
	for _, pr := range c.Probes {
		if pr.Rate <= 0 || pr.Seconds < 0.4 || pr.Samples == 0 || pr.P50Ms <= 0 || pr.P99Ms < pr.P50Ms || pr.ServiceCPU <= 0 || pr.GeneratorCPU <= 0 || pr.RSSBytes == 0 {
			t.Errorf("start %d probe at %.0f: %+v; want every figure measured", pr.Start, pr.Rate, pr)
		}
		if pr.Pass == (pr.Why != "") {
			t.Errorf("probe at %.0f: pass %v, why %q", pr.Rate, pr.Pass, pr.Why)
		}
	}
	checkSearched(t, c, 0.2)
	// This host's own floor was measured before the search, and the
	// capacity names it and which of the four answers it is.
	if f := rec.Machine.HostFloor; f == nil || c.Floor == nil || f.P99Ms <= 0 || f.Samples == 0 || c.Answer == "" || !strings.Contains(wording.Capacity(c), "this host's own p99 floor: ") {
		t.Errorf("host floor %+v, the capacity's %+v, answer %q, %q: want the floor measured and named, and an answer", f, c.Floor, c.Answer, wording.Capacity(c))
	}
	if len(rec.CapacityVerdicts) != 1 {
		t.Fatalf("%d capacity verdicts, want 1", len(rec.CapacityVerdicts))
	}
	want := "only go-stdlib was measured"
	if c.Rate == 0 {
		want = "no verdict: no capacity was found"
	}
	if lines := strings.Join(wording.CapacityVerdict(rec.CapacityVerdicts[0]), "\n"); !strings.Contains(lines, want) {
		t.Errorf("capacity verdict %q lacks %q", lines, want)
	}
	// The found capacity is what held in every start: each start's
	// confirmation from its own bracket's passing rate, or stepped back
	// from it.
	if c.Rate > 0 && !c.LowerBound {
		if len(c.Confirmations) == 0 || !c.HeldPerStart() {
			t.Errorf("capacity %s reported with no confirmation run in each start", wording.Capacity(c))
		}
		from := map[int]float64{}
		for _, b := range c.Brackets {
			from[b.Start] = b.Pass
			if b.Held > b.Pass {
				t.Errorf("start %d held %.0f, above its search's edge %.0f", b.Start, b.Held, b.Pass)
			}
		}
		for _, pr := range c.Confirmations {
			if pr.Seconds < 1.5 || pr.Rate > from[pr.Start]+1e-9 {
				t.Errorf("start %d confirmation at %.0f for %.1f s: want at most its edge %.0f, for the plan's 2 s", pr.Start, pr.Rate, pr.Seconds, from[pr.Start])
			}
		}
		if !strings.Contains(wording.Capacity(c), "held") || c.SearchRate <= 0 {
			t.Errorf("capacity %q does not say it held, or keeps no search estimate (%g)", wording.Capacity(c), c.SearchRate)
		}
	}
	back, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Capacities) != 1 || len(back.Capacities[0].Probes) != len(c.Probes) || back.Plan.SLO == nil || back.Plan.SLO.String() != c.Objective {
		t.Errorf("run.json does not keep the capacity and its objective")
	}
}

// runCapacityPlan runs the capacity plan that load reads (from the
// repository's root, against its services) for real, checks that nothing
// is left running, and returns its results directory, its record and
// its one capacity.
func runCapacityPlan(t *testing.T, name string, load func(root string, catalog plan.Catalog) (*plan.Plan, error)) (string, *results.Run, *results.Capacity) {
	t.Helper()
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	p, err := load(root, catalogOf(t, root))
	if err != nil {
		t.Fatal(err)
	}
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Progress: testWriter{t}, Command: "showdown run " + name, NoiseSeconds: -1}
	dir, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	if len(rec.Capacities) != 1 {
		t.Fatalf("%d capacities, want 1", len(rec.Capacities))
	}
	return dir, rec, rec.Capacities[0]
}

// checkSearched checks what a real search of two starts at resolution
// left in c: the second start began at the first's highest pass, and
// its outcome, whatever a busy machine made it (the generator may limit
// the search, or stall enough that nothing passes), names its reason
// and its unit; a capacity has its interval, the load that failed and
// why, and brackets within the resolution (or one user).
func checkSearched(t *testing.T, c *results.Capacity, resolution float64) {
	t.Helper()
	if first := c.Brackets[0]; first.Pass > 0 {
		for _, pr := range c.Probes {
			if pr.Start == 2 {
				if pr.Rate != first.Pass {
					t.Errorf("start 2 began at %g %s, want start 1's highest pass %g", pr.Rate, c.Units(), first.Pass)
				}
				break
			}
		}
	}
	switch {
	case c.Rate == 0:
		if c.Reason == "" {
			t.Errorf("no capacity and no reason: %+v", c)
		}
		t.Logf("no capacity on this machine now: %s", wording.Capacity(c))
	case c.LowerBound:
		if c.Reason == "" || c.Low <= 0 || !strings.Contains(wording.Capacity(c), c.Units()) {
			t.Errorf("lower bound %q without a reason or its unit", wording.Capacity(c))
		}
		t.Logf("capacity is a lower bound on this machine now: %s", wording.Capacity(c))
	default:
		// An interval is said where there is one: a busy host can leave
		// one start holding no rate, and the capacity is then the other's.
		if !(c.Low <= c.Rate && c.Rate <= c.High) || c.Failed <= 0 || c.FailedWhy == "" || c.RSSBytes == 0 || c.Low < c.High && !strings.Contains(wording.Capacity(c), " "+c.Units()+" [") {
			t.Errorf("capacity %s, failed at %g (%s), RSS %d", wording.Capacity(c), c.Failed, c.FailedWhy, c.RSSBytes)
		}
		for _, b := range c.Brackets {
			if b.Stopped == "" && (b.Fail-b.Pass)/b.Pass > resolution && !(c.Units() == results.UnitUsers && b.Fail-b.Pass <= 1) {
				t.Errorf("start %d bracket [%g, %g] wider than the resolution", b.Start, b.Pass, b.Fail)
			}
		}
		t.Logf("capacity: %s", wording.Capacity(c))
	}
}

// smokeCapacityUsers is a closed-model capacity search on a tiny budget:
// go-stdlib on string, users thinking 10 ms, a loose objective, 20%
// resolution, short probes, two starts.
const smokeCapacityUsers = `name: smoke-capacity-users
implementations: [go-stdlib]
workloads: [string]
verify: quick
slo: {p90: 20ms, errors: 1%}
capacity: {resolution: 20%, probe_min: 500ms, probe_max: 2s, max_probes: 10}
settle: 200ms
load:
  model: closed
  think_time: 10ms
  levels: [32]
  warmup: 1s
`

// TestRunCapacityUsers searches go-stdlib's capacity in users for real
// (the closed model with a think time): every probe runs a whole number
// of users and is recorded with its figures, the search starts at the
// warm-up's users and the second start where the first passed, the
// capacity is in users with its interval (or a lower bound or none,
// with the reason: the machine may be busy), and run.json keeps it.
func TestRunCapacityUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds go-stdlib and searches its capacity")
	}
	dir, _, c := runCapacityPlan(t, "smoke-capacity-users.yaml", func(_ string, catalog plan.Catalog) (*plan.Plan, error) {
		return plan.ParsePlan("smoke-capacity-users.yaml", []byte(smokeCapacityUsers), catalog, thisMachine())
	})
	if c.Unit != results.UnitUsers || c.Arm != "go-stdlib" || c.Objective != "p90 ≤ 20ms, errors ≤ 1%" {
		t.Errorf("capacity of %s at %q in %q, want go-stdlib's in users", c.Arm, c.Objective, c.Unit)
	}
	if len(c.Brackets) != 2 || len(c.Probes) < 3 {
		t.Fatalf("%d brackets, %d probes; want 2 and at least 3", len(c.Brackets), len(c.Probes))
	}
	if c.Probes[0].Rate != 32 {
		t.Errorf("first probe at %g users, want the warm-up's 32", c.Probes[0].Rate)
	}
	for _, pr := range c.Probes {
		if pr.Rate < 1 || pr.Rate != float64(int(pr.Rate)) {
			t.Errorf("probe at %g users, want a whole number from 1", pr.Rate)
		}
		// Latency from the send: a closed model has no send lateness.
		if pr.Seconds < 0.4 || pr.Samples == 0 || pr.Achieved <= 0 || pr.P50Ms <= 0 || pr.P99Ms < pr.P50Ms || pr.ServiceCPU <= 0 || pr.GeneratorCPU <= 0 || pr.LatenessP99Ms != 0 {
			t.Errorf("start %d probe at %g users: %+v; want every figure measured, no lateness", pr.Start, pr.Rate, pr)
		}
		// Each user waits 10 ms between requests: it cannot send 100
		// a second.
		if pr.Achieved > 100*pr.Rate {
			t.Errorf("probe at %g users achieved %.0f req/s, more than 100 per user", pr.Rate, pr.Achieved)
		}
		if pr.Pass == (pr.Why != "") {
			t.Errorf("probe at %g users: pass %v, why %q", pr.Rate, pr.Pass, pr.Why)
		}
	}
	checkSearched(t, c, 0.2)
	back, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Capacities) != 1 || back.Capacities[0].Unit != results.UnitUsers || back.Plan.Capacity.Model != "closed" {
		t.Errorf("run.json does not keep the capacity in users and the search's model")
	}
}
