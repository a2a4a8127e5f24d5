package lab

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stack"
)

// TestRunInterleavedAA runs one implementation against its own second
// start in interleaved rounds over two fresh starts: every round measures
// both arms, each start's level is measured alone too, the verdict has
// the A/A pair, the audit after the rounds catches the broken ledger, and
// nothing is left running.
func TestRunInterleavedAA(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and two services")
	}
	root, cat := testRoot(t)
	p := parseTestPlan(t, cat, `name: aa
implementations: [broken-bank]
workloads: [bank]
verify: quick
aa: true
round: 500ms
settle: 200ms
measure_max: 8s
load:
  levels: [2]
  duration: 1s
  warmup: 1s
database: {max_connections: 30}
`)
	if ok, why := p.Interleaved(); !ok || p.MinStarts() != 2 {
		t.Fatalf("interleaved %v (%s), trials %d; want rounds over two starts", ok, why, p.MinStarts())
	}
	rn := &Runner{Root: root, ResultsDir: t.TempDir(), Command: "go test", NoiseSeconds: -1}
	dir, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	// Two arms alive at once, each with a pool of 20: the server was
	// sized for them, above the plan's 30.
	if want := 2*20 + stack.HarnessConnections; rec.Databases.MaxConnections != want {
		t.Errorf("max_connections %d, want %d", rec.Databases.MaxConnections, want)
	}
	if len(rec.Services) != 4 {
		t.Fatalf("%d service records, want 2 arms x 2 starts", len(rec.Services))
	}
	for _, sr := range rec.Services {
		if sr.Status != results.OK || sr.Levels[0].Status != results.OK {
			t.Errorf("%s trial %d: %s %s; level %s", sr.Implementation, sr.Trial, sr.Status, sr.Reason, sr.Levels[0].Status)
		}
	}
	if len(rec.Comparisons) != 1 {
		t.Fatalf("%d comparisons, want 1", len(rec.Comparisons))
	}
	c := rec.Comparisons[0]
	if c.Workload != "bank" || c.Level != 2 || len(c.Arms) != 2 || c.Arms[1] != "broken-bank+aa" {
		t.Errorf("comparison %s at %d, arms %v", c.Workload, c.Level, c.Arms)
	}
	starts := map[int]int{}
	for _, r := range c.Rounds {
		starts[r.Start]++
		if len(r.Arms) != 2 || r.Arms[0].Arm == r.Arms[1].Arm {
			t.Errorf("start %d round %d measured %d arms", r.Start, r.Index, len(r.Arms))
		}
		for _, a := range r.Arms {
			if a.Samples == 0 || a.Throughput <= 0 || a.Seconds < 0.4 {
				t.Errorf("start %d round %d %s: %d samples in %.2fs", r.Start, r.Index, a.Arm, a.Samples, a.Seconds)
			}
		}
	}
	if starts[1] < plan.MinRounds || starts[2] < plan.MinRounds {
		t.Errorf("rounds per start %v, want at least %d in each of two", starts, plan.MinRounds)
	}
	v := c.Verdict
	if v == nil || v.AA == nil || v.AA.Starts != 2 || len(v.Ranking) != 1 {
		t.Fatalf("verdict %+v, want the A/A pair over two starts and one arm ranked", v)
	}
	if !(v.AA.Low < v.AA.Ratio && v.AA.Ratio < v.AA.High) {
		t.Errorf("A/A interval [%g, %g] around %g", v.AA.Low, v.AA.High, v.AA.Ratio)
	}
	// The broken bank's ledger is wrong: the audit after the rounds says so.
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "INVARIANT FAILED") || len(c.Violations) == 0 {
		t.Errorf("warnings %q, violations %v; want the audit's failed invariant", c.Warnings, c.Violations)
	}
	back, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Comparisons) != 1 || len(back.Comparisons[0].Rounds) != len(c.Rounds) || back.Comparisons[0].Verdict == nil {
		t.Errorf("run.json does not hold the comparison back")
	}
}

// TestJudge ranks arms from synthetic rounds: the faster arm first, the
// pair's interval around the true ratio, a misbehaved round left out,
// a generator-bound arm marked, and too few starts reported with what
// they would need.
func TestJudge(t *testing.T) {
	c := &results.Comparison{Workload: "string", Level: 50, Model: "closed", Arms: []string{"slow", "fast", "slow+aa"}, Precision: 0.03, SettleSeconds: 1}
	for s := 1; s <= 2; s++ {
		for r := 1; r <= 8; r++ {
			drift := 1 + 0.1*math.Sin(float64(r+s*3))
			jitter := 1 + 0.01*float64((r*7+s)%5-2)
			rd := results.Round{Start: s, Index: r, Arms: []results.ArmRound{
				{Arm: "slow", Throughput: 1000 * drift, Seconds: 2, Samples: 2000, ServiceCPU: 100, GeneratorCPU: 40},
				{Arm: "fast", Throughput: 2000 * drift * jitter, Seconds: 2, Samples: 4000, ServiceCPU: 100, GeneratorCPU: 90},
				{Arm: "slow+aa", Throughput: 1000 * drift / jitter, Seconds: 2, Samples: 2000, ServiceCPU: 100, GeneratorCPU: 40},
			}}
			if s == 1 && r == 1 {
				rd.Arms[1].Throughput, rd.Arms[1].Misbehaved = 1, "answered 3 errors in the second after its thaw"
			}
			c.Rounds = append(c.Rounds, rd)
		}
	}
	v := judgeWith(c, 0.03, "slow+aa")
	if len(v.Ranking) != 2 || v.Ranking[0] != "fast" || v.Ranking[1] != "slow" {
		t.Fatalf("ranking %v, want fast then slow (the A/A twin apart)", v.Ranking)
	}
	pr := v.Pairs[0]
	if !pr.Significant || pr.Low > 2 || pr.High < 2 || pr.Rounds != 15 || pr.Starts != 2 {
		t.Errorf("fast/slow %.3f [%.3f, %.3f] over %d rounds in %d starts; want about 2, significant, 15 rounds (one misbehaved) in 2", pr.Ratio, pr.Low, pr.High, pr.Rounds, pr.Starts)
	}
	// CPU per request: fast spends half of slow's.
	if cpu := v.CPU[0]; math.Abs(cpu.Ratio-2) > 0.1 {
		t.Errorf("CPU per request ratio %.3f, want about 2 (slow's over fast's)", cpu.Ratio)
	}
	if v.AA == nil || v.AA.Worse != "slow+aa" || math.Abs(v.AA.Ratio-1) > 0.02 {
		t.Errorf("A/A %+v, want about 1", v.AA)
	}
	if g := v.GeneratorBound["fast"]; g != 90 || len(v.GeneratorBound) != 1 {
		t.Errorf("generator-bound %v, want fast at 90%%", v.GeneratorBound)
	}
	lines := strings.Join((&results.Comparison{Workload: "string", Level: 50, Model: "closed", Rounds: c.Rounds, Verdict: v}).VerdictLines(), "\n")
	for _, want := range []string{"fast 2.0", "× slow [", "fast is generator-bound", "A/A"} {
		if !strings.Contains(lines, want) {
			t.Errorf("verdict lines lack %q:\n%s", want, lines)
		}
	}
	// One start only: an interval from its rounds, said to be so.
	one := *c
	one.Rounds = c.Rounds[:8]
	v1 := judgeWith(&one, 0.03, "slow+aa")
	if !v1.Pairs[0].OneStart || !strings.Contains(v1.Pairs[0].Describe(v1.Metric), "one start") {
		t.Errorf("one start: %+v, want a one-start interval, said", v1.Pairs[0])
	}
	// Wider than the precision: what would reach it is named.
	if v := judgeWith(c, 0.001, "slow+aa"); len(v.Unresolved) != 1 || v.Pairs[0].Need == "" {
		t.Errorf("precision 0.1%%: unresolved %v, need %q", v.Unresolved, v.Pairs[0].Need)
	}
}

// TestRoundOrder checks the rounds' orders: each odd round a permutation,
// each even round the reverse of the one before, so that in every pair
// each arm's two slots are symmetric about the pair's middle (a linear
// drift then costs every arm the same), and the odd rounds' orders vary.
func TestRoundOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 4
	var order []int
	firsts := map[string]bool{}
	for r := 1; r <= 40; r++ {
		prev := order
		order = roundOrder(order, n, r, rng)
		sorted := slices.Sorted(slices.Values(order))
		if !slices.Equal(sorted, []int{0, 1, 2, 3}) {
			t.Fatalf("round %d: %v is not a permutation of %d arms", r, order, n)
		}
		if r%2 == 1 {
			firsts[fmt.Sprint(order)] = true
			continue
		}
		// Slot of arm a in the pair: i in the first round, n+j in the
		// second; symmetric means i + (n+j) = 2n-1 for every arm.
		for i, a := range prev {
			j := slices.Index(order, a)
			if i+n+j != 2*n-1 {
				t.Errorf("round %d: arm %d at %d and %d of the pair %v %v: not symmetric", r, a, i, n+j, prev, order)
			}
		}
	}
	if len(firsts) < 5 {
		t.Errorf("20 odd rounds had only %d orders: want them random", len(firsts))
	}
}
