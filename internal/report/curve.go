package report

import (
	"fmt"
	"html/template"
	"math"
	"regexp"
	"sort"
	"strconv"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/results"
)

// CurvePoint is one point of a latency-load curve: an offered rate, what
// completed per second and the latency there (medians over the probes or
// trials at that rate).
type CurvePoint struct {
	Offered  float64 `json:"offered"`
	Achieved float64 `json:"achieved"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	P999Ms   float64 `json:"p99_9_ms"`
	// ErrorRate is the share of requests that failed (0.001 is 0.1%).
	ErrorRate float64 `json:"error_rate"`
	// N is how many probes or trials the point is the median of.
	N int `json:"n"`
}

// Curve is one arm's latency against offered load on a workload, from
// its capacity search's probes or else from an open-model plan's levels.
type Curve struct {
	Arm string `json:"arm"`
	// Source is "probes" (a capacity search) or "levels".
	Source string `json:"source"`
	// Unit is what Offered and Capacity count: "users" for a capacity
	// in users, else empty (req/s).
	Unit   string       `json:"unit,omitempty"`
	Points []CurvePoint `json:"points"`
	// Capacity is the arm's capacity at the objective (0: none), a lower
	// bound where the generator limited it.
	Capacity   float64 `json:"capacity,omitempty"`
	LowerBound bool    `json:"lower_bound,omitempty"`
}

// curves are the latency-load curves of a workload of r, in the order of
// arms: from every capacity's probes where the run searched for
// capacity, else from the cells of an open-model plan with two levels or
// more. Nil when no arm has two points.
func curves(r *results.Run, wl *Workload, arms []string) []Curve {
	var out []Curve
	two := false
	for _, arm := range arms {
		cv := Curve{Arm: arm}
		if c := capacityOf(r, wl.Name, arm); c != nil || capacityProbes(r, wl.Name, arm) != nil {
			cv.Source = "probes"
			cv.Points = probePoints(capacityProbes(r, wl.Name, arm))
			if c != nil {
				cv.Capacity, cv.LowerBound = capacityFigure(c), c.LowerBound
				if c.Units() == results.UnitUsers {
					cv.Unit = results.UnitUsers
				}
			}
		} else if r.Plan != nil && r.Plan.Load.Model == "open" {
			cv.Source = "levels"
			cv.Points = levelPoints(wl, arm)
		} else if pts := ratePoints(r, wl.Name, arm); len(pts) > 0 {
			cv.Source = "rates"
			cv.Points = pts
		}
		if len(cv.Points) == 0 {
			continue
		}
		two = two || len(cv.Points) >= 2
		out = append(out, cv)
	}
	if !two {
		return nil
	}
	return out
}

// ratePoints are arm's figures at each rate a closed plan's at_rate drove
// on workload (the contrasting shape's left out: it is the same rate),
// in rate order; a rate the arm could not carry or was left out of has
// no point.
func ratePoints(r *results.Run, workload, arm string) []CurvePoint {
	var out []CurvePoint
	for _, c := range r.Comparisons {
		if !c.AtRate || c.Contrast || c.Workload != workload || c.Verdict == nil {
			continue
		}
		if _, over := c.Verdict.Overloaded[arm]; over {
			continue
		}
		for _, f := range c.Verdict.Arms {
			if f.Arm == arm && f.Rounds > 0 && f.P99Ms > 0 {
				out = append(out, CurvePoint{Offered: float64(c.Level), Achieved: f.Throughput, P50Ms: f.P50Ms, P99Ms: f.P99Ms, N: f.Rounds})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Offered < out[j].Offered })
	return out
}

// capacityProbes are the probes of arm's capacity search on workload.
func capacityProbes(r *results.Run, workload, arm string) []results.Probe {
	if r == nil {
		return nil
	}
	for _, c := range r.Capacities {
		if c.Workload == workload && c.Arm == arm {
			return c.Probes
		}
	}
	return nil
}

// probePoints are probes grouped by offered rate, each point the medians
// of the probes at its rate, in rate order.
func probePoints(ps []results.Probe) []CurvePoint {
	by := map[float64][]results.Probe{}
	var rates []float64
	for _, p := range ps {
		if p.Rate <= 0 {
			continue
		}
		if _, ok := by[p.Rate]; !ok {
			rates = append(rates, p.Rate)
		}
		by[p.Rate] = append(by[p.Rate], p)
	}
	sort.Float64s(rates)
	var out []CurvePoint
	for _, rate := range rates {
		g := by[rate]
		med := func(f func(results.Probe) float64) float64 {
			vs := make([]float64, len(g))
			for i, p := range g {
				vs[i] = f(p)
			}
			return valueOf(vs).Median
		}
		out = append(out, CurvePoint{Offered: rate, N: len(g),
			Achieved:  med(func(p results.Probe) float64 { return p.Achieved }),
			P50Ms:     med(func(p results.Probe) float64 { return p.P50Ms }),
			P99Ms:     med(func(p results.Probe) float64 { return p.P99Ms }),
			P999Ms:    med(func(p results.Probe) float64 { return p.P999Ms }),
			ErrorRate: med(func(p results.Probe) float64 { return p.ErrorRate })})
	}
	return out
}

// levelPoints are an open-model arm's cells as curve points, one per
// level: medians over trials.
func levelPoints(wl *Workload, arm string) []CurvePoint {
	var out []CurvePoint
	for _, c := range wl.Cells {
		if c.Implementation != arm || c.Trials == 0 {
			continue
		}
		var p999, achieved []float64
		for _, l := range c.cell.Levels {
			p999 = append(p999, l.Total.Latency.P999)
			a := l.AchievedRate
			if a == 0 {
				a = l.Total.Throughput
			}
			achieved = append(achieved, a)
		}
		out = append(out, CurvePoint{Offered: float64(c.Level), N: c.Trials, Achieved: valueOf(achieved).Median,
			P50Ms: c.Get("p50_ms"), P99Ms: c.Get("p99_ms"), P999Ms: valueOf(p999).Median, ErrorRate: c.Get("error_percent") / 100})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Offered < out[j].Offered })
	return out
}

// objectiveRE reads a latency bound of an objective as results.Capacity
// states it: "p99 <= 10ms", "p99.9 <= 50ms".
var objectiveRE = regexp.MustCompile(`p([0-9]+(?:\.[0-9]+)?)\s*(?:<=|<|≤)\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|us|µs)\b`)

// bound is one latency bound of an objective.
type bound struct {
	Percentile string
	Ms         float64
}

// objectiveBounds are the latency bounds an objective states.
func objectiveBounds(objective string) []bound {
	var out []bound
	for _, m := range objectiveRE.FindAllStringSubmatch(objective, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		switch m[3] {
		case "s":
			v *= 1000
		case "us", "µs":
			v /= 1000
		}
		out = append(out, bound{"p" + m[1], v})
	}
	return out
}

// objectiveOf is the objective of a workload's capacities, or "".
func objectiveOf(r *results.Run, workload string) string {
	if r == nil {
		return ""
	}
	for _, c := range r.Capacities {
		if c.Workload == workload && c.Objective != "" {
			return c.Objective
		}
	}
	return ""
}

// curveChart draws the latency-load curves of a workload: p50 (dotted),
// p99 (solid) and p99.9 (dashed) against the offered rate on a log
// latency axis, the objective's bounds as grey lines and each arm's
// capacity as a vertical line in its colour; below, the achieved
// throughput against the offered rate, with offered = achieved in grey.
func curveChart(id, workload string, cs []Curve, objective string, colors map[string]string) figure {
	title := workload + ": latency against offered load"
	if objective != "" {
		title += " (objective " + objective + ")"
	}
	// A capacity in users offers users, not a rate: its x is the
	// closed model's users, and achieved cannot equal it.
	users := len(cs) > 0 && cs[0].Unit == results.UnitUsers
	offered, xLabel := func(x float64) string { return human.Count(x) + "/s" }, "offered rate (req/s)"
	if users {
		offered, xLabel = func(x float64) string { return fmt.Sprintf("%.0f users", x) }, "closed-model users"
	}
	ch := &chart{id: id, title: title, xLabel: xLabel, xFmt: num, wrapLegend: true}
	lat := panel{yLabel: "latency (ms, log)", height: 260, yLog: true, yFmt: num}
	thr := panel{yLabel: "achieved (req/s)", height: 150, yFmt: num}
	lo, hi := math.Inf(1), math.Inf(-1) // the latency range, for the capacity lines
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, c := range cs {
		for _, p := range c.Points {
			for _, v := range []float64{p.P50Ms, p.P99Ms, p.P999Ms} {
				if v > 0 {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
			xlo, xhi = math.Min(xlo, p.Offered), math.Max(xhi, p.Offered)
		}
	}
	bounds := objectiveBounds(objective)
	for _, b := range bounds {
		lo, hi = math.Min(lo, b.Ms), math.Max(hi, b.Ms)
	}
	for _, c := range cs {
		color := colors[c.Arm]
		p50 := series{name: c.Arm + " p50", color: color, style: "dot"}
		p99 := series{name: c.Arm + " p99", color: color, marks: true}
		p999 := series{name: c.Arm + " p99.9", color: color, style: "dash"}
		ach := series{name: c.Arm + " achieved", color: color, marks: true}
		for _, p := range c.Points {
			x := p.Offered
			p50.xs, p50.ys = append(p50.xs, x), append(p50.ys, nanIfZero(p.P50Ms))
			p99.xs, p99.ys = append(p99.xs, x), append(p99.ys, nanIfZero(p.P99Ms))
			p999.xs, p999.ys = append(p999.xs, x), append(p999.ys, nanIfZero(p.P999Ms))
			tip := fmt.Sprintf("%s at %s offered: achieved %s/s, p50 %s, p99 %s, p99.9 %s, errors %.2f%%",
				c.Arm, offered(x), human.Count(p.Achieved), human.Ms(p.P50Ms), human.Ms(p.P99Ms), human.Ms(p.P999Ms), 100*p.ErrorRate)
			if p.N > 1 {
				tip += fmt.Sprintf(" (median of %d)", p.N)
			}
			p99.tips = append(p99.tips, tip)
			ach.xs, ach.ys = append(ach.xs, x), append(ach.ys, p.Achieved)
			ach.tips = append(ach.tips, tip)
		}
		lat.lines = append(lat.lines, p50, p99, p999)
		thr.lines = append(thr.lines, ach)
		name := c.Arm
		if c.Capacity > 0 && !math.IsInf(lo, 0) {
			capLine := series{name: fmt.Sprintf("%s capacity %s", c.Arm, offered(c.Capacity)), color: color, style: "thin",
				xs: []float64{c.Capacity, c.Capacity}, ys: []float64{lo, hi}}
			if c.LowerBound {
				capLine.name += " (a lower bound: the generator limited it)"
			}
			lat.lines = append(lat.lines, capLine)
			name += ": capacity " + scalingFigure(ScalingRow{Figure: c.Capacity, LowerBound: c.LowerBound, Unit: c.Unit})
		}
		ch.legend = append(ch.legend, legendItem{name, color, ""})
	}
	for _, b := range bounds {
		lat.lines = append(lat.lines, series{name: fmt.Sprintf("objective %s ≤ %s", b.Percentile, human.Ms(b.Ms)), color: "#bbb",
			xs: []float64{xlo, xhi}, ys: []float64{b.Ms, b.Ms}})
	}
	if !math.IsInf(xlo, 0) && !users {
		thr.lines = append(thr.lines, series{name: "achieved = offered", color: "#888", style: "thin", xs: []float64{xlo, xhi}, ys: []float64{xlo, xhi}})
	}
	ch.legend = append(ch.legend, legendItem{"p50", "#888", "dot"}, legendItem{"p99", "#888", ""}, legendItem{"p99.9", "#888", "dash"})
	for _, b := range bounds {
		ch.legend = append(ch.legend, legendItem{fmt.Sprintf("objective %s ≤ %s", b.Percentile, human.Ms(b.Ms)), "#bbb", ""})
	}
	ch.panels = []panel{lat, thr}
	return figure{ch.title, template.HTML(ch.render())}
}

func nanIfZero(v float64) float64 {
	if v <= 0 {
		return math.NaN()
	}
	return v
}
