package report

import (
	"fmt"
	"html/template"
	"math"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
)

// applyComparisons makes the run's interleaved comparisons the headline
// and verdict of their workloads: ratios with intervals in rank order,
// the machine's A/A check beside them.
func applyComparisons(r *results.Run, byWorkload map[string]*Workload, unit string) {
	for _, c := range r.Comparisons {
		wl := byWorkload[c.Workload]
		if wl == nil {
			continue
		}
		wl.Comparisons = append(wl.Comparisons, c)
		for _, w := range c.Warnings {
			wl.Warnings = append(wl.Warnings, fmt.Sprintf("at %d %s, rounds: %s", c.Level, unit, w))
		}
		starts := map[int]bool{}
		for _, rd := range c.Rounds {
			starts[rd.Start] = true
		}
		wl.VerdictBasis = fmt.Sprintf("%d rounds of %g s per implementation, interleaved in a random order, over %d fresh start(s); 95%% interval of each adjacent ratio", roundsOf(c), c.RoundSeconds, len(starts))
		v := c.Verdict
		if v == nil || len(v.Ranking) == 0 {
			wl.Verdicts = append(wl.Verdicts, fmt.Sprintf("at %d %s: no verdict, no round was measured", c.Level, unit))
			continue
		}
		for _, l := range wording.Verdict(v) {
			wl.Verdicts = append(wl.Verdicts, fmt.Sprintf("at %d %s: %s", c.Level, unit, l))
		}
		head := fmt.Sprintf("At %d %s, by %s: %s", c.Level, unit, v.Metric, wording.Ranking(v))
		if wl.VerdictHeadline == "" {
			wl.VerdictHeadline = head
		} else {
			wl.VerdictHeadline += "; " + head
		}
	}
	for _, wl := range byWorkload {
		if wl.VerdictHeadline != "" {
			wl.Headline = wl.VerdictHeadline
		}
	}
}

// roundsOf is how many rounds each arm had, at most.
func roundsOf(c *results.Comparison) int {
	n := map[string]int{}
	most := 0
	for _, r := range c.Rounds {
		for _, a := range r.Arms {
			n[a.Arm]++
			most = max(most, n[a.Arm])
		}
	}
	return most
}

// driftChart draws each arm's figure round by round on one time axis:
// the machine moves, and the arms move together with it.
func driftChart(id string, c *results.Comparison, colors map[string]string) (figure, bool) {
	if len(c.Rounds) == 0 {
		return figure{}, false
	}
	metric, unit := "throughput", "throughput (req/s)"
	if c.Model == "open" {
		metric, unit = "p99", "p99 latency (ms)"
	}
	t0 := c.Rounds[0].Arms[0].At
	for _, r := range c.Rounds {
		for _, a := range r.Arms {
			if !a.At.IsZero() && a.At.Before(t0) {
				t0 = a.At
			}
		}
	}
	ch := &chart{id: id, title: fmt.Sprintf("%s at %d: %s in each round, on one time axis (drift)", c.Workload, c.Level, metric), xLabel: "seconds since the first round"}
	p := panel{yLabel: unit, height: 220}
	for _, arm := range c.Arms {
		s := series{name: arm, color: colors[arm], marks: true}
		for _, r := range c.Rounds {
			for _, a := range r.Arms {
				if a.Arm != arm || a.At.IsZero() {
					continue
				}
				y := a.Throughput
				if c.Model == "open" {
					y = a.P99Ms
				}
				if a.Misbehaved != "" {
					y = math.NaN()
				}
				s.xs = append(s.xs, a.At.Sub(t0).Seconds())
				s.ys = append(s.ys, y)
				s.tips = append(s.tips, fmt.Sprintf("%s, start %d round %d: %s", arm, r.Start, r.Index, roundTip(a, c.Model)))
			}
		}
		if len(s.xs) > 0 {
			p.lines = append(p.lines, s)
			ch.legend = append(ch.legend, legendItem{arm, colors[arm], ""})
		}
	}
	if len(p.lines) == 0 {
		return figure{}, false
	}
	ch.panels = []panel{p}
	return figure{ch.title, template.HTML(ch.render())}, true
}

func roundTip(a results.ArmRound, model string) string {
	s := fmt.Sprintf("%.0f req/s, p99 %.2f ms, service CPU %.0f%%, generator CPU %.0f%%", a.Throughput, a.P99Ms, a.ServiceCPU, a.GeneratorCPU)
	if a.Misbehaved != "" {
		s += "; " + a.Misbehaved
	}
	return s
}
