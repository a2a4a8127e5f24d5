package lab

import (
	"context"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
)

// TestRunAtRateFindsTheLeak runs a service that leaks on purpose
// (testdata/services/leaky-string: memory on every request, a file
// descriptor on every 50th) against its own build told to leak nothing,
// in interleaved rounds with a comparison at one automatic rate: the
// rate is the plan's share of the slower arm's throughput, both arms
// carry it, every round records the CPU seconds, RSS and descriptors the
// verdict needs, and the leak check names the leaking arm and only it.
func TestRunAtRateFindsTheLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts two services")
	}
	root, cat := testRoot(t)
	p := parseTestPlan(t, cat, `name: leak
implementations:
  - leaky-string
  - {service: leaky-string, variant: tight, env: {LEAK_BYTES: "0", LEAK_FD_EVERY: "0"}}
workloads: [string]
verify: quick
round: 500ms
settle: 200ms
measure_max: 12s
at_rate: {rates: [auto], share: 10%}
load:
  levels: [2]
  duration: 1s
  warmup: 1s
`)
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: t.TempDir(), Command: "go test", NoiseSeconds: -1}
	_, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	var level, at, contrast *results.Comparison
	for _, c := range rec.Comparisons {
		switch {
		case c.Contrast:
			contrast = c
		case c.AtRate:
			at = c
		default:
			level = c
		}
	}
	if level == nil || at == nil || contrast == nil {
		t.Fatalf("comparisons %d, want one at the level, one at a rate and its contrast", len(rec.Comparisons))
	}
	// The rate's traffic is the plan's default shape, and the contrast
	// the same rate as clockwork over one connection, in the same starts.
	if at.Shape != "poisson arrivals over a pool of 2 connections" || contrast.Shape != "even arrivals over 1 connection" || contrast.Level != at.Level || len(contrast.Rounds) == 0 {
		t.Errorf("shapes %q and %q at %d and %d req/s, %d contrast rounds", at.Shape, contrast.Shape, at.Level, contrast.Level, len(contrast.Rounds))
	}
	if at.Model != "open" || at.Level <= 0 || !strings.Contains(at.RateRule, "10% of") {
		t.Errorf("rate comparison: model %s at %d, rule %q", at.Model, at.Level, at.RateRule)
	}
	for _, r := range at.Rounds {
		for _, a := range r.Arms {
			if a.ServiceCPUSeconds <= 0 || a.RSSBytes == 0 || a.FDs == 0 || a.Threads == 0 {
				t.Errorf("start %d round %d %s: CPU %gs, RSS %d, FDs %d, threads %d: want every one read", r.Start, r.Index, a.Arm, a.ServiceCPUSeconds, a.RSSBytes, a.FDs, a.Threads)
			}
		}
	}
	v := at.Verdict
	if v == nil || len(v.Overloaded) > 0 || len(v.Ranking) != 2 || len(v.CPUPairs) != 1 {
		t.Fatalf("verdict at the rate %+v: want both arms carrying it, ranked, and one CPU pair", v)
	}
	leaks := map[string]bool{}
	for _, c := range []*results.Comparison{level, at} {
		for _, g := range c.Verdict.Leaks {
			if g.Leak {
				leaks[g.Arm+" "+g.Resource] = true
			}
		}
	}
	if !leaks["leaky-string rss"] || !leaks["leaky-string fds"] {
		t.Errorf("leaks found %v; want leaky-string's RSS and FDs:\n%s", leaks, strings.Join(append(wording.Leaks(level.Verdict.Leaks), wording.Leaks(at.Verdict.Leaks)...), "\n"))
	}
	for k := range leaks {
		if strings.HasPrefix(k, "leaky-string+tight") {
			t.Errorf("the arm that leaks nothing is called a leak: %s", k)
		}
	}
}
