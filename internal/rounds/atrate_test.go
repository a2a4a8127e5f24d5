package rounds

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/results"
)

// rateArm is one synthetic arm at a rate: its true p99 (ms) and CPU per
// request (µs), each with a start effect and a round noise (log sd).
type rateArm struct {
	name               string
	p99, cpu           float64
	p99Between, p99Rnd float64
	cpuBetween, cpuRnd float64
}

// simulateAtRate draws a comparison at rate over starts × rounds: p99
// with one round in twenty of an arm spiking 1.5-3× (a collector's
// pause), CPU seconds read as /proc does, through 10 ms ticks at both
// ends of the interval.
func simulateAtRate(rng *rand.Rand, arms []rateArm, rate, seconds float64, starts, rounds int) *results.Comparison {
	c := &results.Comparison{Workload: "string", Level: int(rate), Model: "open", AtRate: true, Precision: 0.1, RoundSeconds: seconds}
	for _, a := range arms {
		c.Arms = append(c.Arms, a.name)
	}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for s := 1; s <= starts; s++ {
		up := make([]float64, len(arms))
		uc := make([]float64, len(arms))
		for i, a := range arms {
			up[i], uc[i] = rng.NormFloat64()*a.p99Between, rng.NormFloat64()*a.cpuBetween
		}
		for r := 1; r <= rounds; r++ {
			machine := math.Exp(rng.NormFloat64() * 0.05)
			round := results.Round{Start: s, Index: r}
			for _, i := range rng.Perm(len(arms)) {
				a := arms[i]
				p99 := a.p99 * machine * math.Exp(up[i]+rng.NormFloat64()*a.p99Rnd)
				if rng.IntN(20) == 0 {
					p99 *= 1.5 + 1.5*rng.Float64()
				}
				samples := int64(rate * seconds)
				cpu := a.cpu * 1e-6 * float64(samples) * math.Exp(uc[i]+rng.NormFloat64()*a.cpuRnd)
				// Two readings through 10 ms ticks, at a random phase.
				phase := rng.Float64() * 0.01
				read := math.Floor((phase+cpu)/0.01)*0.01 - math.Floor(phase/0.01)*0.01
				at := t0.Add(time.Duration(s)*time.Hour + time.Duration(r*len(arms)+i)*4*time.Second)
				round.Arms = append(round.Arms, results.ArmRound{Arm: a.name, At: at, Seconds: seconds, Throughput: rate, Samples: samples,
					P50Ms: p99 / 5, P99Ms: p99, ServiceCPUSeconds: read, ServiceCPU: 100 * read / seconds, LatenessP99Ms: 0.05,
					RSSBytes: 20 << 20, Threads: 8, FDs: 12, StealPercent: -1, OtherServiceCPU: -1, OtherGeneratorCPU: -1})
			}
			c.Rounds = append(c.Rounds, round)
		}
	}
	return c
}

// TestAtRateCoverage checks the intervals of the two new ratios at a
// rate on synthetic comparisons (three stacks, p99s with collector
// spikes, CPU read through /proc's ticks, two and three starts): CPU per
// request covers the true ratio of each adjacent pair in 95% ± 2% of
// them. p99's round-to-round noise (15%) dwarfs its start effect (5%),
// and there the comparison's estimator is conservative: its intervals
// cover in 98-100% (with or without the spikes), so p99 is held only to
// never covering less than 93%.
func TestAtRateCoverage(t *testing.T) {
	arms := []rateArm{
		{"a", 1.0, 60, 0.05, 0.15, 0.04, 0.03},
		{"b", 1.5, 90, 0.05, 0.15, 0.04, 0.03},
		{"c", 2.4, 150, 0.05, 0.15, 0.04, 0.03},
	}
	n := 800
	if testing.Short() {
		n = 200
	}
	for _, starts := range []int{2, 3} {
		rng := rand.New(rand.NewPCG(7, uint64(starts)))
		hit := map[string]int{}
		all := map[string]int{}
		for range n {
			c := simulateAtRate(rng, arms, 2000, 2, starts, 6)
			v := JudgeWith(c, c.Precision, "")
			for _, set := range []struct {
				what  string
				pairs []results.PairRatio
				truth func(rateArm) float64
			}{
				{"p99", v.Pairs, func(a rateArm) float64 { return a.p99 }},
				{"cpu", v.CPUPairs, func(a rateArm) float64 { return a.cpu }},
			} {
				for _, pr := range set.pairs {
					var better, worse rateArm
					for _, a := range arms {
						if a.name == pr.Better {
							better = a
						}
						if a.name == pr.Worse {
							worse = a
						}
					}
					want := set.truth(worse) / set.truth(better)
					key := fmt.Sprintf("%s %s/%s", set.what, pr.Better, pr.Worse)
					all[key]++
					if pr.Low <= want && want <= pr.High {
						hit[key]++
					}
				}
			}
		}
		for key, k := range all {
			if k < n*9/10 {
				t.Errorf("%d starts: %s judged in %d of %d comparisons: the ranking should hold", starts, key, k, n)
			}
			cov := float64(hit[key]) / float64(k)
			t.Logf("%d starts, %s: coverage %.3f", starts, key, cov)
			// ±0.02, or three binomial standard errors where -short's
			// fewer comparisons make 0.02 too tight (±0.015 at 200).
			tol := max(0.02, 3*math.Sqrt(0.95*0.05/float64(k)))
			if cov < 0.95-tol || cov > 0.95+tol && strings.HasPrefix(key, "cpu") {
				t.Errorf("%d starts, %s: coverage %.3f, want 0.95 ± %.3f", starts, key, cov, tol)
			}
		}
	}
}

// TestGrowths checks the leak check on rounds with a known slope: a
// steady arm, one whose RSS grows 4 MiB a minute, one whose descriptors
// grow 30 a minute, one whose second start merely sits higher (no
// growth within either start), and one whose RSS grows 30 MiB a minute
// over each start's first 0.6 minutes and then stays (settling).
func TestGrowths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := &results.Comparison{Arms: []string{"steady", "rss", "fds", "higher", "settles"}}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for s := 1; s <= 2; s++ {
		for r := 1; r <= 10; r++ {
			round := results.Round{Start: s, Index: r}
			for i, arm := range c.Arms {
				min := float64(r) * 0.2 // a round every 12 s
				at := t0.Add(time.Duration(s)*time.Hour + time.Duration(min*float64(time.Minute)) + time.Duration(i)*time.Second)
				rss := 50e6 + rng.NormFloat64()*0.3e6
				fds := 20
				switch arm {
				case "rss":
					rss += 4 * (1 << 20) * min
				case "fds":
					fds += int(30 * min)
				case "higher":
					rss += float64(s-1) * 40e6
				case "settles":
					rss += 30 * (1 << 20) * math.Min(min, 0.6)
				}
				round.Arms = append(round.Arms, results.ArmRound{Arm: arm, At: at, RSSBytes: uint64(rss), Threads: 9, FDs: fds})
			}
			c.Rounds = append(c.Rounds, round)
		}
	}
	leaks := map[string]bool{}
	for _, g := range Growths(c) {
		if g.Leak {
			leaks[g.Arm+" "+g.Resource] = true
		}
		if g.Arm == "rss" && g.Resource == "rss" && !(g.Low < 4*(1<<20) && 4*(1<<20) < g.High) {
			t.Errorf("rss: %g a minute [%g, %g], want the interval to hold 4 MiB", g.PerMinute, g.Low, g.High)
		}
		if g.Arm == "settles" && g.Resource == "rss" && (!g.Settling || g.Low <= g.Limit || g.LaterPerMinute > g.Limit) {
			t.Errorf("settles: %+v, want a growth above the limit over the whole, marked settling by its later half", g)
		}
		if g.Settling && g.Arm != "settles" {
			t.Errorf("%s %s marked settling", g.Arm, g.Resource)
		}
		if g.Arm == "higher" && g.Resource == "rss" && math.Abs(g.PerMinute) > 1<<20 {
			t.Errorf("higher: a second start that sits higher reads as %g bytes a minute", g.PerMinute)
		}
	}
	want := map[string]bool{"rss rss": true, "fds fds": true}
	if fmt.Sprint(leaks) != fmt.Sprint(want) {
		t.Errorf("leaks %v, want %v", leaks, want)
	}
}

// TestGrowthsDBConnections checks the fourth resource: on a workload
// with a database a pool that stays at 20 is no leak and one that opens
// 12 more a minute is, the limit held by each growth; an arm whose
// rounds never read a connection gets no check, nor does a workload
// without a database, whatever its rounds hold.
func TestGrowthsDBConnections(t *testing.T) {
	rounds := func(arms []string, conns func(arm string, min float64) int) []results.Round {
		var out []results.Round
		t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		for s := 1; s <= 2; s++ {
			for r := 1; r <= 8; r++ {
				round := results.Round{Start: s, Index: r}
				for i, arm := range arms {
					min := float64(r) * 0.1 // a round every 6 s
					at := t0.Add(time.Duration(s)*time.Hour + time.Duration(min*float64(time.Minute)) + time.Duration(i)*time.Second)
					round.Arms = append(round.Arms, results.ArmRound{Arm: arm, At: at, RSSBytes: 50e6, Threads: 9, FDs: 30, DBConnections: conns(arm, min)})
				}
				out = append(out, round)
			}
		}
		return out
	}
	bank := &results.Comparison{Workload: "bank", Arms: []string{"pool", "leak", "unread"}}
	bank.Rounds = rounds(bank.Arms, func(arm string, min float64) int {
		switch arm {
		case "pool":
			return 20
		case "leak":
			// One more every 5 s, on top of its pool.
			return 20 + int(12*min)
		}
		return 0
	})
	checked := map[string]results.Growth{}
	for _, g := range Growths(bank) {
		if g.Resource == "db_connections" {
			checked[g.Arm] = g
		}
	}
	if g, ok := checked["pool"]; !ok || g.Leak || g.Limit != LeakDBConnectionsPerMinute {
		t.Errorf("pool: %+v (checked %v), want a check at the limit and no leak", g, ok)
	}
	if g, ok := checked["leak"]; !ok || !g.Leak || !(g.Low < 12 && 12 < g.High) {
		t.Errorf("leak: %+v (checked %v), want a leak whose interval holds 12 a minute", g, ok)
	}
	if g, ok := checked["unread"]; ok {
		t.Errorf("unread: %+v, want no check of connections never read", g)
	}
	str := &results.Comparison{Workload: "string", Arms: []string{"leak"}}
	str.Rounds = rounds(str.Arms, func(_ string, min float64) int { return 20 + int(12*min) })
	for _, g := range Growths(str) {
		if g.Resource == "db_connections" {
			t.Errorf("a workload without a database checked its connections: %+v", g)
		}
	}
}

// TestOverloadedAndFloor checks an arm that cannot carry the rate, each
// way the verdict tells: errors, sends queued for a free connection, and
// a shortfall while the generator sent on time; one whose shortfall was
// the generator's is ranked, and a pair whose p99s differ by less than
// the generator's lateness is marked inside the floor.
func TestOverloadedAndFloor(t *testing.T) {
	arm := func(name string, thr float64, errs, queued int64, p99, late float64) results.ArmRound {
		return results.ArmRound{Arm: name, Seconds: 2, Throughput: thr, Samples: int64(2 * thr), Errors: errs, Queued: queued,
			P99Ms: p99, P50Ms: p99 / 4, LatenessP99Ms: late, ServiceCPUSeconds: 0.2, StealPercent: -1, OtherServiceCPU: -1, OtherGeneratorCPU: -1}
	}
	c := &results.Comparison{Workload: "string", Level: 1000, Model: "open", AtRate: true, Precision: 0.1,
		Arms: []string{"fast", "close", "errors", "queued", "short", "late"}}
	for s := 1; s <= 2; s++ {
		for r := 1; r <= 4; r++ {
			c.Rounds = append(c.Rounds, results.Round{Start: s, Index: r, Arms: []results.ArmRound{
				arm("fast", 1000, 0, 0, 1.0+0.01*float64(r), 0.4),
				arm("close", 1000, 0, 0, 1.2+0.01*float64(s), 0.4),
				arm("errors", 1000, 50, 0, 2, 0.4),
				arm("queued", 1000, 0, 300, 30, 0.4),
				arm("short", 800, 0, 0, 40, 0.4),
				arm("late", 800, 0, 0, 6, 5),
			}})
		}
	}
	v := JudgeWith(c, c.Precision, "")
	for _, a := range []string{"errors", "queued", "short"} {
		if v.Overloaded[a] == "" {
			t.Errorf("%s is not named as unable to carry the rate: %v", a, v.Overloaded)
		}
	}
	for _, a := range []string{"fast", "close", "late"} {
		if why, over := v.Overloaded[a]; over {
			t.Errorf("%s named as unable to carry the rate: %s", a, why)
		}
	}
	if strings.Join(v.Ranking, " ") != "fast close late" {
		t.Errorf("ranking %v, want fast close late", v.Ranking)
	}
	if len(v.Pairs) < 1 || v.Pairs[0].Better != "fast" || !v.Pairs[0].InsideFloor {
		t.Errorf("fast against close (0.2 ms apart, lateness 0.4 ms): %+v, want inside the floor", v.Pairs)
	}
	if len(v.Pairs) < 2 || v.Pairs[1].InsideFloor {
		t.Errorf("close against late (about 5 ms apart): %+v, want ranked", v.Pairs)
	}
}

// TestCPUAAAtRate: at one rate the A/A twin stays out of the CPU
// ranking, and the verdict judges it against the first arm on CPU per
// request (CPUAA) with the estimator of the CPU pairs; a closed level
// has no such judgement.
func TestCPUAAAtRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 53))
	arms := []rateArm{
		{name: "go", p99: 1, cpu: 70, p99Between: 0.05, p99Rnd: 0.1, cpuBetween: 0.03, cpuRnd: 0.04},
		{name: "node", p99: 1.2, cpu: 50, p99Between: 0.05, p99Rnd: 0.1, cpuBetween: 0.03, cpuRnd: 0.04},
		{name: "go+aa", p99: 1, cpu: 70, p99Between: 0.05, p99Rnd: 0.1, cpuBetween: 0.03, cpuRnd: 0.04},
	}
	c := simulateAtRate(rng, arms, 2000, 2, 2, 8)
	v := JudgeWith(c, 0.1, "go+aa")
	if v == nil || v.CPUAA == nil {
		t.Fatalf("no A/A on CPU per request: %+v", v)
	}
	for _, arm := range v.CPURanking {
		if arm == "go+aa" {
			t.Errorf("the twin is in the CPU ranking %v", v.CPURanking)
		}
	}
	if a := v.CPUAA; a.Better != "go" || a.Worse != "go+aa" || a.Low > 1 || a.High < 1 || math.Abs(a.Ratio-1) > 0.1 {
		t.Errorf("A/A on CPU %s/%s %.3f [%.3f, %.3f], want the twins about 1 with 1 inside", a.Better, a.Worse, a.Ratio, a.Low, a.High)
	}
	c.AtRate = false
	if v := JudgeWith(c, 0.1, "go+aa"); v.CPUAA != nil {
		t.Errorf("a closed level judged the twins' CPU: %+v", v.CPUAA)
	}
}
