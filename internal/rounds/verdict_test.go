package rounds

import (
	"fmt"
	"maps"
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

// TestDatabaseBound judges recorded rounds of a database workload on
// both sides of results.DatabaseBoundPercent: an arm whose database had
// no room left on its CPUs is named with the database's share, and the
// verdict's words say so; one under the line gets neither.
func TestDatabaseBound(t *testing.T) {
	apart := &results.DatabaseCPUs{Engine: "PostgreSQL", CPUs: "1", Count: 1}
	pair := &results.DatabaseCPUs{Engine: "PostgreSQL", CPUs: "2-3", Count: 2}
	shared := &results.DatabaseCPUs{Engine: "MariaDB", CPUs: "1", Count: 1, WithGenerator: true}
	for _, tc := range []struct {
		name string
		db   *results.DatabaseCPUs
		// Each arm's database CPU (percent of one CPU) and generator CPU
		// (percent of its CPUs) in every round.
		fastDB, fastGen, slowDB, slowGen float64
		bound, with                      map[string]float64
		line                             string // "" for no line
	}{
		// On a CPU of its own, over the line under both arms.
		{"apart, every arm", apart, 96, 30, 93, 20, map[string]float64{"fast": 96, "slow": 93}, nil,
			"PostgreSQL used 93–96% of CPU 1 during the rounds of every stack: throughput measures PostgreSQL, not the services; compare CPU per request and memory"},
		// Only one arm drove it that hard: that arm is named.
		{"apart, one arm", apart, 90, 30, 40, 20, map[string]float64{"fast": 90}, nil,
			"PostgreSQL used 90% of CPU 1 during the rounds of fast: throughput"},
		// Under the line: room left, nothing said.
		{"apart, under", apart, 70, 30, 60, 20, nil, nil, ""},
		// 170% of one CPU is 85% of two.
		{"two CPUs", pair, 170, 30, 170, 20, map[string]float64{"fast": 85, "slow": 85}, nil,
			"PostgreSQL used 85% of CPUs 2-3 during the rounds of every stack"},
		// Sharing the generator's CPU: each alone under the line, the two
		// together over it.
		{"shared, full", shared, 60, 35, 55, 30, map[string]float64{"fast": 60, "slow": 55}, map[string]float64{"fast": 95, "slow": 85},
			"MariaDB and the generator share CPU 1 and together used 85–95% of it during the rounds of every stack (MariaDB 55–60%): CPU 1 is full, so throughput measures it"},
		// Shared, with room left.
		{"shared, under", shared, 30, 40, 20, 30, nil, nil, ""},
		// Shared, the generator alone over its line: generator-bound, not
		// database-bound.
		{"shared, generator", shared, 8, 90, 8, 90, nil, nil, ""},
		// No database: the rounds read none, nothing is judged.
		{"no database", nil, 0, 30, 0, 20, nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &results.Comparison{Workload: "bank", Level: 50, Model: "closed", Arms: []string{"slow", "fast"}, Precision: 0.03, SettleSeconds: 1, Database: tc.db}
			for s := 1; s <= 2; s++ {
				for r := 1; r <= 6; r++ {
					jitter := 1 + 0.01*float64((r*7+s)%5-2)
					c.Rounds = append(c.Rounds, results.Round{Start: s, Index: r, Arms: []results.ArmRound{
						{Arm: "slow", Throughput: 1000 * jitter, Seconds: 2, Samples: 2000, ServiceCPU: 50, GeneratorCPU: tc.slowGen, DatabaseCPU: tc.slowDB},
						{Arm: "fast", Throughput: 2000 / jitter, Seconds: 2, Samples: 4000, ServiceCPU: 50, GeneratorCPU: tc.fastGen, DatabaseCPU: tc.fastDB},
					}})
				}
			}
			v := JudgeWith(c, 0.03, "")
			if !maps.Equal(v.DatabaseBound, tc.bound) || !maps.Equal(v.WithGenerator, tc.with) {
				t.Errorf("database-bound %v, with the generator %v; want %v, %v", v.DatabaseBound, v.WithGenerator, tc.bound, tc.with)
			}
			lines := strings.Join(wording.Verdict(v), "\n")
			if tc.line == "" {
				if strings.Contains(lines, "measures it") || strings.Contains(lines, "not the services") {
					t.Errorf("verdict names a database-bound arm:\n%s", lines)
				}
			} else if !strings.Contains(lines, tc.line) {
				t.Errorf("verdict lines lack %q:\n%s", tc.line, lines)
			}
		})
	}
}
