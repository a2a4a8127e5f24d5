package interleave

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
)

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
	v := JudgeWith(c, 0.03, "slow+aa")
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
	lines := strings.Join(wording.Comparison(&results.Comparison{Workload: "string", Level: 50, Model: "closed", Rounds: c.Rounds, Verdict: v}), "\n")
	for _, want := range []string{"fast 2.0", "× slow [", "fast is generator-bound", "A/A"} {
		if !strings.Contains(lines, want) {
			t.Errorf("verdict lines lack %q:\n%s", want, lines)
		}
	}
	// One start only: an interval from its rounds, said to be so.
	one := *c
	one.Rounds = c.Rounds[:8]
	v1 := JudgeWith(&one, 0.03, "slow+aa")
	if !v1.Pairs[0].OneStart || !strings.Contains(wording.Pair(v1.Pairs[0], v1.Metric), "one start") {
		t.Errorf("one start: %+v, want a one-start interval, said", v1.Pairs[0])
	}
	// Wider than the precision: what would reach it is named.
	if v := JudgeWith(c, 0.001, "slow+aa"); len(v.Unresolved) != 1 || v.Pairs[0].Need == "" {
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
		order = RoundOrder(order, n, r, rng)
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
