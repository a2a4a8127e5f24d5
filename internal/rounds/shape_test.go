package rounds

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/results"
)

// rateRounds is a comparison at 4,300 req/s of arms whose CPU per request
// (µs) each round is cost[arm] with 3% noise, over two starts of six
// rounds.
func rateRounds(shape string, contrast bool, cost map[string]float64, seed uint64) *results.Comparison {
	rng := rand.New(rand.NewPCG(seed, 1))
	arms := []string{"go-stdlib", "node-http", "rust-axum"}
	c := &results.Comparison{Workload: "string", Level: 4300, Model: "open", Arms: arms, AtRate: true, Contrast: contrast, Shape: shape, RoundSeconds: 2}
	at := time.Unix(0, 0)
	for start := 1; start <= 2; start++ {
		for i := 1; i <= 6; i++ {
			r := results.Round{Start: start, Index: i}
			for _, arm := range arms {
				at = at.Add(3 * time.Second)
				us := cost[arm] * (1 + 0.03*rng.NormFloat64())
				r.Arms = append(r.Arms, results.ArmRound{Arm: arm, At: at, Seconds: 2, Throughput: 4300, Samples: 8600,
					P50Ms: 0.2, P99Ms: 0.5 + 0.05*rng.NormFloat64(), ServiceCPU: 100 * us * 4300 / 1e6, ServiceCPUSeconds: us * 8600 / 1e6,
					StealPercent: -1, OtherServiceCPU: -1, OtherGeneratorCPU: -1})
			}
			c.Rounds = append(c.Rounds, r)
		}
	}
	return c
}

// TestShapeDependence: go-stdlib is cheaper than node-http under a pool
// of 50 connections and dearer under one connection (as measured
// 2026-12-01: 32 against 34 µs under wrk2's 16 connections, 70 against
// 50 under clockwork); the pair is named as depending on the shape, the
// pair whose order holds (rust-axum cheapest under both) is not.
func TestShapeDependence(t *testing.T) {
	main := rateRounds("poisson arrivals over a pool of 50 connections", false, map[string]float64{"go-stdlib": 30, "node-http": 36, "rust-axum": 20}, 1)
	k := rateRounds("even arrivals over 1 connection", true, map[string]float64{"go-stdlib": 70, "node-http": 50, "rust-axum": 30}, 2)
	main.Verdict = JudgeWith(main, 0.1, "")
	k.Verdict = JudgeWith(k, 0.1, "")
	JudgeShapes([]*results.Comparison{main, k})
	flips := main.Verdict.ShapeDepends
	if len(flips) != 1 || flips[0].Cheaper != "go-stdlib" || flips[0].Dearer != "node-http" {
		t.Fatalf("flips %+v, want go-stdlib against node-http alone", flips)
	}
	f := flips[0]
	if f.Main.Ratio < 1.1 || f.Contrast.Ratio < 1.3 || !f.Main.Significant || !f.Contrast.Significant || f.ContrastShape != k.Shape {
		t.Errorf("flip %+v", f)
	}
	if k.Verdict.ShapeDepends != nil {
		t.Errorf("the contrast's own verdict names flips: %+v", k.Verdict.ShapeDepends)
	}
	// The same order under both shapes: nothing depends on the shape.
	same := rateRounds("even arrivals over 1 connection", true, map[string]float64{"go-stdlib": 60, "node-http": 75, "rust-axum": 30}, 3)
	same.Verdict = JudgeWith(same, 0.1, "")
	if got := ShapeDependence(main, same); got != nil {
		t.Errorf("flips %+v where the order holds", got)
	}
}

// TestP99AgainstBest: every arm is compared with the best on p99, not
// only with its neighbour.
func TestP99AgainstBest(t *testing.T) {
	c := rateRounds("", false, map[string]float64{"go-stdlib": 30, "node-http": 36, "rust-axum": 20}, 4)
	for i := range c.Rounds {
		for j := range c.Rounds[i].Arms {
			a := &c.Rounds[i].Arms[j]
			if a.Arm == "node-http" {
				a.P99Ms *= 4
			}
		}
	}
	v := JudgeWith(c, 0.1, "")
	if len(v.P99Best) != 2 {
		t.Fatalf("p99 against the best: %+v", v.P99Best)
	}
	last := v.P99Best[1]
	if last.Worse != "node-http" || last.Ratio < 3 || !last.Significant {
		t.Errorf("node-http against the best: %+v", last)
	}
}
