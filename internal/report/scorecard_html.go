package report

import (
	"fmt"
	"html/template"
	"sort"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/results"
)

// htmlScorecard is a scorecard as report.html draws it.
type htmlScorecard struct {
	S      *Scorecard
	Basis  string
	Head   []string
	Rows   [][]htmlScoreCell
	Charts []figure
}

type htmlScoreCell struct {
	Text string
	Best bool
}

// scorecardPage is the report's model of the run's scorecards, with the
// two charts of each: throughput against memory at the level, and CPU
// per request against p99 at the rate, the stacks no other beats on both
// joined as a front.
func scorecardPage(res *Results, s *Summary, colors map[string]string) []htmlScorecard {
	var out []htmlScorecard
	for i, sc := range s.Scorecards {
		hs := htmlScorecard{S: sc, Basis: ScorecardBasis(sc, s.LevelUnit), Head: []string{"Stack"}}
		for _, c := range ScorecardColumns {
			hs.Head = append(hs.Head, c[1])
		}
		for _, r := range sc.Rows {
			row := []htmlScoreCell{{Text: r.Stack}}
			for _, c := range ScorecardColumns {
				row = append(row, htmlScoreCell{Text: r.Cell(c[0]), Best: r.Best[c[0]]})
			}
			hs.Rows = append(hs.Rows, row)
		}
		level, at := comparisonsOf(res.Run, sc)
		if level != nil {
			pts := map[string][2]float64{}
			for _, f := range level.Verdict.Arms {
				if f.RSSBytes > 0 && f.Throughput > 0 {
					pts[f.Arm] = [2]float64{float64(f.RSSBytes) / (1 << 20), f.Throughput}
				}
			}
			if f, ok := scatter(fmt.Sprintf("sc%d-mem", i), fmt.Sprintf("%s: throughput at %d %s against RSS (the front: no other stack has both more throughput and less memory)", sc.Workload, sc.Level, s.LevelUnit),
				"RSS at the level, MiB", "throughput, req/s", pts, false, true, colors); ok {
				hs.Charts = append(hs.Charts, f)
			}
		}
		if at != nil {
			pts := map[string][2]float64{}
			for _, f := range at.Verdict.Arms {
				if _, over := at.Verdict.Overloaded[f.Arm]; !over && f.CPUPerRequest > 0 && f.P99Ms > 0 {
					pts[f.Arm] = [2]float64{f.CPUPerRequest, f.P99Ms}
				}
			}
			if f, ok := scatter(fmt.Sprintf("sc%d-cpu", i), fmt.Sprintf("%s at %s req/s: p99 against CPU per request (the front: no other stack has both a lower p99 and less CPU)", sc.Workload, human.Count(float64(sc.Rate))),
				"CPU per request, µs", "p99, ms", pts, false, false, colors); ok {
				hs.Charts = append(hs.Charts, f)
			}
		}
		out = append(out, hs)
	}
	return out
}

// comparisonsOf are the comparisons a scorecard comes from: at its level
// and at its rate (nil where the run has none).
func comparisonsOf(r *results.Run, sc *Scorecard) (level, at *results.Comparison) {
	for _, c := range r.Comparisons {
		switch {
		case c.Verdict == nil || c.Workload != sc.Workload:
		case c.AtRate && c.Level == sc.Rate && at == nil:
			at = c
		case !c.AtRate && c.Level == sc.Level && level == nil:
			level = c
		}
	}
	return level, at
}

// front is the points no other beats on both axes: x less is better, y
// more is better when yMore, else less; sorted by x.
func front(pts map[string][2]float64, yMore bool) []string {
	better := func(a, b [2]float64) bool { // a dominates b
		yb := a[1] >= b[1]
		if !yMore {
			yb = a[1] <= b[1]
		}
		return a[0] <= b[0] && yb && a != b
	}
	var out []string
	for name, p := range pts {
		dominated := false
		for other, q := range pts {
			if other != name && better(q, p) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, name)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if pts[out[i]][0] != pts[out[j]][0] {
			return pts[out[i]][0] < pts[out[j]][0]
		}
		return out[i] < out[j]
	})
	return out
}

// scatter draws one point per stack, and the front as a dashed line.
func scatter(id, title, xLabel, yLabel string, pts map[string][2]float64, xLog, yMore bool, colors map[string]string) (figure, bool) {
	if len(pts) < 2 {
		return figure{}, false
	}
	ch := &chart{id: id, title: title, xLabel: xLabel, xLog: xLog, xFmt: num, width: 560, wrapLegend: true}
	p := panel{yLabel: yLabel, height: 220, yLog: !yMore}
	names := make([]string, 0, len(pts))
	for n := range pts {
		names = append(names, n)
	}
	sort.Strings(names)
	fr := front(pts, yMore)
	var fx, fy []float64
	for _, n := range fr {
		fx, fy = append(fx, pts[n][0]), append(fy, pts[n][1])
	}
	p.lines = append(p.lines, series{name: "front", color: "#888", style: "dash", xs: fx, ys: fy})
	if len(fr) > 1 {
		ch.legend = append(ch.legend, legendItem{"front", "#888", "dash"})
	}
	for _, n := range names {
		ch.legend = append(ch.legend, legendItem{n, colors[n], ""})
		pt := pts[n]
		p.lines = append(p.lines, series{name: n, color: colors[n], marks: true, xs: []float64{pt[0]}, ys: []float64{pt[1]},
			tips: []string{fmt.Sprintf("%s: %s %s, %s %s", n, num(pt[0]), xLabel, num(pt[1]), yLabel)}})
	}
	ch.panels = []panel{p}
	return figure{ch.title, template.HTML(ch.render())}, true
}
