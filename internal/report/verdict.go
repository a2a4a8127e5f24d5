package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
)

// applyComparisons makes the run's interleaved comparisons the headline
// and verdict of their workloads: ratios with intervals in rank order,
// the machine's A/A check beside them.
func applyComparisons(r *results.Run, byWorkload map[string]*Workload, unit string) {
	planUnit := unit
	for _, c := range r.Comparisons {
		wl := byWorkload[c.Workload]
		if wl == nil {
			continue
		}
		unit := planUnit
		if c.AtRate {
			unit = "req/s"
		}
		wl.Comparisons = append(wl.Comparisons, c)
		for _, w := range c.Warnings {
			wl.Warnings = append(wl.Warnings, fmt.Sprintf("at %d %s, rounds: %s", c.Level, unit, w))
		}
		starts := map[int]bool{}
		for _, rd := range c.Rounds {
			starts[rd.Start] = true
		}
		if !c.AtRate || wl.VerdictBasis == "" {
			wl.VerdictBasis = fmt.Sprintf("%d rounds of %g s per implementation, interleaved in a random order, over %d fresh start(s); 95%% interval of each adjacent ratio", roundsOf(c), c.RoundSeconds, len(starts))
		}
		v := c.Verdict
		if v == nil || len(v.Ranking) == 0 {
			wl.Verdicts = append(wl.Verdicts, fmt.Sprintf("at %d %s: no verdict, no round was measured", c.Level, unit))
			continue
		}
		for _, l := range wording.Verdict(v) {
			wl.Verdicts = append(wl.Verdicts, fmt.Sprintf("at %d %s: %s", c.Level, unit, l))
		}
		head := fmt.Sprintf("At %d %s, by %s: %s", c.Level, unit, v.Metric, wording.Ranking(v))
		if c.AtRate {
			continue // the scorecard says it; the headline stays the level's
		}
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

// forestChart draws a verdict's adjacent ratios with their 95% intervals
// on a log axis, 1 marked (a forest plot), the A/A check last; each row's
// hover text is the pair in the verdict's words.
func forestChart(id, title string, v *results.Verdict) (figure, bool) {
	if v == nil || len(v.Pairs) == 0 {
		return figure{}, false
	}
	xl := v.Metric + " ratio, the first over the second (log scale)"
	if v.Metric != "throughput" && v.Metric != "capacity" {
		xl = v.Metric + " ratio, the second over the first (log scale)"
	}
	f := &forest{id: id, title: title, xLabel: xl, width: 560}
	row := func(label string, pr results.PairRatio, tip string) {
		f.rows = append(f.rows, forestRow{label: label, ratio: pr.Ratio, low: pr.Low, high: pr.High, significant: pr.Significant, tip: tip})
	}
	for _, pr := range v.Pairs {
		row(pr.Better+" vs "+pr.Worse, pr, wording.Pair(pr, v.Metric))
	}
	if v.AA != nil {
		row("A/A: "+v.AA.Better+" vs "+v.AA.Worse, *v.AA, "A/A (the machine against itself): "+wording.Pair(*v.AA, v.Metric))
	}
	return figure{title, template.HTML(f.render())}, true
}

// driftChart draws each arm's figure in every round, one panel per
// start with its rounds in order: the machine moves and the arms move
// together with it, and a round that stalled one arm stands out as its
// dip alone.
func driftChart(id string, c *results.Comparison, levelUnit string, colors map[string]string) (figure, bool) {
	if len(c.Rounds) == 0 {
		return figure{}, false
	}
	metric, unit := "throughput", "req/s"
	if c.Model == "open" {
		metric, unit = "p99", "p99 (ms)"
	}
	var starts []int
	for _, r := range c.Rounds {
		if !slices.Contains(starts, r.Start) {
			starts = append(starts, r.Start)
		}
	}
	ch := &chart{id: id, title: fmt.Sprintf("%s at %d %s: %s of each arm in every round, by start", c.Workload, c.Level, levelUnit, metric),
		xLabel: "round of the start", xInt: true, width: 560, wrapLegend: true}
	inLegend := map[string]bool{}
	for _, st := range starts {
		p := panel{yLabel: fmt.Sprintf("start %d: %s", st, unit), height: 150}
		for _, arm := range c.Arms {
			s := series{name: arm, color: colors[arm], marks: true}
			for _, r := range c.Rounds {
				if r.Start != st {
					continue
				}
				for _, a := range r.Arms {
					if a.Arm != arm {
						continue
					}
					y := a.Throughput
					if c.Model == "open" {
						y = a.P99Ms
					}
					if a.Misbehaved != "" {
						y = math.NaN()
					}
					s.xs = append(s.xs, float64(r.Index))
					s.ys = append(s.ys, y)
					s.tips = append(s.tips, fmt.Sprintf("%s, start %d round %d: %s", arm, r.Start, r.Index, roundTip(a, c.Model)))
				}
			}
			if len(s.xs) == 0 {
				continue
			}
			p.lines = append(p.lines, s)
			if !inLegend[arm] {
				inLegend[arm] = true
				ch.legend = append(ch.legend, legendItem{arm, colors[arm], ""})
			}
		}
		if len(p.lines) > 0 {
			ch.panels = append(ch.panels, p)
		}
	}
	if len(ch.panels) == 0 {
		return figure{}, false
	}
	return figure{ch.title, template.HTML(ch.render())}, true
}

// perArmChart draws one figure per arm, side by side by name: the median
// with its min-max whisker.
func perArmChart(id, title, yLabel string, arms []string, values map[string][]float64, colors map[string]string, tip func(arm string, med, lo, hi float64, n int) string) (figure, bool) {
	ch := &chart{id: id, title: title, xLabel: "implementation", categories: arms, width: 700}
	p := panel{yLabel: yLabel, height: 200}
	for i, arm := range arms {
		vs := slices.Clone(values[arm])
		if len(vs) == 0 {
			continue
		}
		slices.Sort(vs)
		med := vs[len(vs)/2]
		if len(vs)%2 == 0 {
			med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
		}
		p.lines = append(p.lines, series{name: arm, color: colors[arm], marks: true, xs: []float64{float64(i)}, ys: []float64{med},
			lo: []float64{vs[0]}, hi: []float64{vs[len(vs)-1]}, tips: []string{tip(arm, med, vs[0], vs[len(vs)-1], len(vs))}})
	}
	if !anyNonZero(p.lines) {
		return figure{}, false
	}
	ch.panels = []panel{p}
	return figure{title, template.HTML(ch.render())}, true
}

// resourceCharts draw, for a workload measured at one level, what each
// arm spent: CPU per request (from the rounds of an interleaved
// comparison, else from the starts) and peak RSS, side by side.
func resourceCharts(id string, s *Summary, wl *Workload, colors map[string]string) []figure {
	cpu, rss := map[string][]float64{}, map[string][]float64{}
	from := "start"
	for _, c := range wl.Comparisons {
		from = "round"
		for _, r := range c.Rounds {
			for _, a := range r.Arms {
				if a.Misbehaved == "" && a.Samples > 0 && a.ServiceCPU > 0 {
					cpu[a.Arm] = append(cpu[a.Arm], a.ServiceCPU/100*a.Seconds/float64(a.Samples)*1e6)
				}
			}
		}
	}
	for _, c := range wl.Cells {
		for _, lr := range c.cell.Levels {
			if len(wl.Comparisons) == 0 && lr.Total.Throughput > 0 && lr.Service.CPUMean > 0 {
				cpu[c.Implementation] = append(cpu[c.Implementation], lr.Service.CPUMean/100/lr.Total.Throughput*1e6)
			}
			if lr.Service.RSSPeakBytes > 0 {
				rss[c.Implementation] = append(rss[c.Implementation], float64(lr.Service.RSSPeakBytes)/(1<<20))
			}
		}
	}
	var out []figure
	if f, ok := perArmChart(id+"-cpu", fmt.Sprintf("%s: service CPU per request, every %s (median, min–max)", wl.Name, from), "CPU per request (µs)", s.Implementations, cpu, colors,
		func(arm string, med, lo, hi float64, n int) string {
			return fmt.Sprintf("%s: %s µs of CPU per request (median of %d %ss, %s–%s)", arm, num(med), n, from, num(lo), num(hi))
		}); ok {
		out = append(out, f)
	}
	if f, ok := perArmChart(id+"-rss", fmt.Sprintf("%s: service peak RSS, every start (median, min–max)", wl.Name), "peak RSS (MiB)", s.Implementations, rss, colors,
		func(arm string, med, lo, hi float64, n int) string {
			return fmt.Sprintf("%s: peak RSS %s (median of %d starts, %s–%s)", arm, human.Bytes(med*(1<<20)), n, human.Bytes(lo*(1<<20)), human.Bytes(hi*(1<<20)))
		}); ok {
		out = append(out, f)
	}
	return out
}

func roundTip(a results.ArmRound, model string) string {
	s := fmt.Sprintf("%s req/s, p99 %s, service CPU %.0f%%, generator CPU %.0f%%", human.Count(a.Throughput), human.Ms(a.P99Ms), a.ServiceCPU, a.GeneratorCPU)
	if a.Misbehaved != "" {
		s += "; " + a.Misbehaved
	}
	return s
}
