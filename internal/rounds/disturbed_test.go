package rounds

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/results"
)

// TestDisturbed judges rounds from their own records, one reason a row.
func TestDisturbed(t *testing.T) {
	tests := []struct {
		name    string
		a       results.ArmRound
		typical float64
		withDB  bool
		want    string // a part of the reason; "" for none
	}{
		// Nothing else ran, and the service got its usual CPU.
		{"clean", results.ArmRound{ServiceCPU: 97, StealPercent: 1, OtherServiceCPU: 3, OtherGeneratorCPU: 5}, 98, false, ""},
		// The hypervisor took the CPU.
		{"steal", results.ArmRound{ServiceCPU: 97, StealPercent: 9}, 98, false, "stole 9%"},
		// Another process ran on the service's CPU.
		{"other on service", results.ArmRound{ServiceCPU: 70, OtherServiceCPU: 30}, 98, false, "on the service's CPUs"},
		// Another process on the generator's CPU, no database there.
		{"other on generator", results.ArmRound{ServiceCPU: 97, OtherGeneratorCPU: 40}, 98, false, "generator's CPUs"},
		// The same with a database: its CPU is the workload's.
		{"database on generator", results.ArmRound{ServiceCPU: 97, OtherGeneratorCPU: 40}, 98, true, ""},
		// The noisy day's rust-axum round: 28% of its CPU against 95-100%.
		{"starved", results.ArmRound{ServiceCPU: 28}, 97, false, "got 28% of a CPU against its usual 97%"},
		// A JVM at 84% against 97%: within the floor.
		{"within the floor", results.ArmRound{ServiceCPU: 84}, 97, false, ""},
		// No usual CPU yet: the share is not judged.
		{"no typical", results.ArmRound{ServiceCPU: 28}, 0, false, ""},
		// Not measured (an old record): nothing said.
		{"not measured", results.ArmRound{StealPercent: -1, OtherServiceCPU: -1, OtherGeneratorCPU: -1}, 97, false, ""},
	}
	for _, tc := range tests {
		got := Disturbed(tc.a, tc.typical, tc.withDB)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestJudgeLeavesOutDisturbed: a round whose record shows a starved
// service is left out of the verdict, whatever its figure, and counted.
func TestJudgeLeavesOutDisturbed(t *testing.T) {
	c := &results.Comparison{Workload: "string", Level: 50, Model: "closed", Arms: []string{"a", "b", "c"}, Precision: 0.03}
	for s := 1; s <= 2; s++ {
		for r := 1; r <= 10; r++ {
			j := 1 + 0.01*float64((r*7+s)%5-2)
			rd := results.Round{Start: s, Index: r, Arms: []results.ArmRound{
				{Arm: "a", Throughput: 1200 * j, ServiceCPU: 98, Seconds: 2, Samples: 2400},
				{Arm: "b", Throughput: 1000 / j, ServiceCPU: 97, Seconds: 2, Samples: 2000},
				{Arm: "c", Throughput: 500 * j, ServiceCPU: 99, Seconds: 2, Samples: 1000},
			}}
			if s == 1 && r == 3 {
				rd.Arms[0].Throughput, rd.Arms[0].ServiceCPU = 300, 28 // starved, as its record says
			}
			c.Rounds = append(c.Rounds, rd)
		}
	}
	v := JudgeWith(c, 0.03, "")
	if v.Disturbed != 1 {
		t.Errorf("disturbed %d, want the one starved round", v.Disturbed)
	}
	pr := v.Pairs[0]
	if pr.Better != "a" || math.Abs(pr.Ratio-1.2) > 0.02 || !pr.Significant {
		t.Errorf("a/b %.3f [%.3f, %.3f], want about 1.2, significant", pr.Ratio, pr.Low, pr.High)
	}
}

// TestBought says what a budget bought and what would reach the
// precision, from the pairs' variances.
func TestBought(t *testing.T) {
	v := &results.Verdict{Pairs: []results.PairRatio{
		{HalfWidth: 0.02, BetweenSD: 0.01, WithinSD: 0.03},
		{HalfWidth: 0.08, BetweenSD: 0.02, WithinSD: 0.10},
	}}
	Bought(v, 12*time.Minute, 0.03, 90*time.Second, 18*time.Second, 10)
	if v.BudgetSeconds != 720 || v.Bought != 0.08 {
		t.Errorf("budget %g s bought ±%g, want 720 and the widest pair's 0.08", v.BudgetSeconds, v.Bought)
	}
	if v.NeedSeconds <= 720 {
		t.Errorf("need %g s, want more than the budget for ±8%% to reach ±3%%", v.NeedSeconds)
	}
	// Starts that differ by 4%: ten starts cannot reach ±3%.
	hard := &results.Verdict{Pairs: []results.PairRatio{{HalfWidth: 0.08, BetweenSD: 0.04, WithinSD: 0.10}}}
	Bought(hard, 12*time.Minute, 0.03, 90*time.Second, 18*time.Second, 10)
	if hard.NeedSeconds != -1 {
		t.Errorf("starts 4%% apart: need %g, want -1 (no design)", hard.NeedSeconds)
	}
	// Variances that the budget itself would reach ±3% with, in a run
	// that bought ±4% (cut short, or its starts spent elsewhere): what
	// is needed is more than the budget that did not reach it.
	spent := &results.Verdict{Pairs: []results.PairRatio{{HalfWidth: 0.04, BetweenSD: 0.002, WithinSD: 0.01}}}
	Bought(spent, 12*time.Minute, 0.03, 90*time.Second, 18*time.Second, 10)
	if spent.NeedSeconds <= 720 {
		t.Errorf("bought ±4%% in 720 s: need %g s, want more than the budget that was spent", spent.NeedSeconds)
	}
	within := &results.Verdict{Pairs: []results.PairRatio{{HalfWidth: 0.02}}}
	Bought(within, 12*time.Minute, 0.03, 90*time.Second, 18*time.Second, 10)
	if within.NeedSeconds != 0 {
		t.Errorf("within the precision: need %g, want 0", within.NeedSeconds)
	}
}

// TestOverran records a run that took longer than its budget, with what
// its starts' setups took of it, and nothing for a run within it.
func TestOverran(t *testing.T) {
	v := &results.Verdict{}
	Overran(v, 24*time.Minute, 36*time.Minute, []time.Duration{14 * time.Minute, 13 * time.Minute})
	if v.TookSeconds != 2160 || v.SetupsSeconds != 1620 || v.OverranStarts != 2 {
		t.Errorf("overran: took %g s, setups %g s over %d starts; want 2160, 1620, 2", v.TookSeconds, v.SetupsSeconds, v.OverranStarts)
	}
	within := &results.Verdict{}
	Overran(within, 24*time.Minute, 23*time.Minute, []time.Duration{10 * time.Minute})
	if within.TookSeconds != 0 || within.SetupsSeconds != 0 || within.OverranStarts != 0 {
		t.Errorf("within the budget: %+v, want nothing recorded", within)
	}
	none := &results.Verdict{}
	Overran(none, 0, time.Hour, []time.Duration{time.Minute})
	if none.TookSeconds != 0 {
		t.Errorf("no budget: took %g recorded, want 0", none.TookSeconds)
	}
}

// TestJudgeKeepsABusyMachine: when most of an arm's rounds in a start
// are disturbed, the machine was that busy throughout; they are kept
// (leaving them out would leave nothing), and counted as busy.
func TestJudgeKeepsABusyMachine(t *testing.T) {
	c := &results.Comparison{Workload: "string", Level: 50, Model: "closed", Arms: []string{"a", "b"}, Precision: 0.03}
	for s := 1; s <= 2; s++ {
		for r := 1; r <= 6; r++ {
			c.Rounds = append(c.Rounds, results.Round{Start: s, Index: r, Arms: []results.ArmRound{
				{Arm: "a", Throughput: 1200, ServiceCPU: 60, OtherServiceCPU: 40, Seconds: 2, Samples: 2400},
				{Arm: "b", Throughput: 1000, ServiceCPU: 60, OtherServiceCPU: 40, Seconds: 2, Samples: 2000},
			}})
		}
	}
	v := JudgeWith(c, 0.03, "")
	if len(v.Ranking) != 2 || v.Busy != 24 || v.Disturbed != 0 {
		t.Errorf("ranking %v, busy %d, disturbed %d: want both arms ranked, all 24 arm rounds kept as busy", v.Ranking, v.Busy, v.Disturbed)
	}
}
