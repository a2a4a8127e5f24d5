package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
)

// ExtrapolationLimit is how far beyond the most cores measured a crossing
// of two stacks' trends is still named (flagged as extrapolated): four
// times the top count.
const ExtrapolationLimit = 4

// ScalingRow is one implementation at one core count of a plan's cores:
// its figure (capacity at the objective, else its highest median
// throughput over the levels), per core, and its scaling efficiency
// against its fewest cores measured.
type ScalingRow struct {
	// Implementation is the id without cores; Arm the arm's ("go-stdlib@2").
	Implementation string `json:"implementation"`
	Arm            string `json:"arm"`
	Cores          int    `json:"cores"`
	// Metric is "capacity" or "throughput".
	Metric string  `json:"metric"`
	Figure float64 `json:"figure"`
	// Level is the load level the throughput was taken at (0 for a capacity).
	Level   int     `json:"level,omitempty"`
	PerCore float64 `json:"per_core"`
	// Efficiency is Figure / (Cores/BaseCores × the figure at BaseCores):
	// 1 is linear scaling. BaseCores is 1 where one core was measured.
	Efficiency float64 `json:"efficiency"`
	BaseCores  int     `json:"base_cores"`
	// EfficiencyLow and EfficiencyHigh are its 95% interval where the
	// figures come from interleaved rounds: the ratio to the base arm
	// round by round (stats.RoundRatioCI95), so the machine's drift
	// cancels.
	EfficiencyLow  float64 `json:"efficiency_low,omitempty"`
	EfficiencyHigh float64 `json:"efficiency_high,omitempty"`
	// Source is where the figure comes from: "capacity", "rounds" (the
	// mean of the arm's interleaved rounds) or "levels" (its highest
	// median throughput over the levels, each measured alone).
	Source string `json:"source"`
	// LowerBound marks a capacity the generator limited.
	LowerBound bool `json:"lower_bound,omitempty"`
	// Unit is "users" for a capacity in users, else empty (req/s).
	Unit string `json:"unit,omitempty"`
}

// Crossing is where one stack's figure passes another's as cores grow:
// between two measured core counts (At interpolated), or beyond the
// measured ones on the trend of the last two (Extrapolated).
type Crossing struct {
	// Passer passes Passed: fewer at Low cores, more at High.
	Passer string `json:"passer"`
	Passed string `json:"passed"`
	Low    int    `json:"low"`
	High   int    `json:"high,omitempty"`
	// At is the estimated core count of the crossing.
	At           float64 `json:"at"`
	Extrapolated bool    `json:"extrapolated,omitempty"`
	// LowerBound marks a crossing that rests on a capacity the generator
	// limited: the true figure may be higher.
	LowerBound bool `json:"lower_bound,omitempty"`
}

// String says the crossing in a sentence.
func (c Crossing) String() string {
	s := fmt.Sprintf("%s passes %s between %d and %d cores (about %s, interpolated)", c.Passer, c.Passed, c.Low, c.High, f1(c.At))
	if c.Extrapolated {
		s = fmt.Sprintf("extrapolated, not measured: on the trend from %d to %d cores, %s would pass %s at about %s cores",
			c.Low, c.High, c.Passer, c.Passed, f1(c.At))
	}
	if c.LowerBound {
		s += "; it rests on a capacity the generator limited (a lower bound)"
	}
	return s
}

// scalingRows are the cores table of one workload of r: every arm with
// cores, in plan order, its figure from its capacity at the objective or
// else from its cells.
func scalingRows(r *results.Run, wl *Workload) []ScalingRow {
	if r == nil || r.Plan == nil || len(r.Plan.Cores) == 0 {
		return nil
	}
	comp := scalingComparison(wl)
	var rows []ScalingRow
	for _, im := range r.Plan.Arms() {
		if im.Cores == 0 {
			continue
		}
		row := ScalingRow{Implementation: im.BaseID(), Arm: im.ID(), Cores: im.Cores}
		if c := capacityOf(r, wl.Name, im.ID()); c != nil {
			row.Metric, row.Source, row.Figure, row.LowerBound = "capacity", "capacity", capacityFigure(c), c.LowerBound
			if c.Units() == results.UnitUsers {
				row.Unit = results.UnitUsers
			}
		} else if m := meanPositive(roundFigures(comp, im.ID())); m > 0 {
			row.Metric, row.Source, row.Figure, row.Level = "throughput", "rounds", m, comp.Level
		} else {
			for _, c := range wl.Cells {
				if c.ID == im.ID() && c.Database == "" && c.Trials > 0 && c.Get("throughput") > row.Figure {
					row.Metric, row.Source, row.Figure, row.Level = "throughput", "levels", c.Get("throughput"), c.Level
				}
			}
		}
		if row.Figure > 0 {
			rows = append(rows, row)
		}
	}
	fillEfficiency(rows)
	fillRoundEfficiency(rows, comp)
	return rows
}

// scalingComparison is the workload's closed-model comparison at its
// highest level (where the arms are most likely saturated), or nil.
func scalingComparison(wl *Workload) *results.Comparison {
	var out *results.Comparison
	for _, c := range wl.Comparisons {
		if c.Model != "open" && len(c.Rounds) > 0 && (out == nil || c.Level > out.Level) {
			out = c
		}
	}
	return out
}

// roundFigures are arm's throughput in every round of c, by start in
// the order they ran: [start][round], 0 where the arm was not measured or
// misbehaved (RoundRatioCI95 leaves such rounds out).
func roundFigures(c *results.Comparison, arm string) [][]float64 {
	if c == nil {
		return nil
	}
	var out [][]float64
	index := map[int]int{}
	for _, r := range c.Rounds {
		i, ok := index[r.Start]
		if !ok {
			i = len(out)
			index[r.Start] = i
			out = append(out, nil)
		}
		v := 0.0
		for _, a := range r.Arms {
			if a.Arm == arm && a.Misbehaved == "" {
				v = a.Throughput
			}
		}
		out[i] = append(out[i], v)
	}
	return out
}

// meanPositive is the mean of the positive values of fs.
func meanPositive(fs [][]float64) float64 {
	sum, n := 0.0, 0
	for _, s := range fs {
		for _, v := range s {
			if v > 0 {
				sum += v
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// fillRoundEfficiency replaces the efficiency of rows measured in the
// rounds of comp with the paired ratio to their base arm, round by round,
// and its 95% interval.
func fillRoundEfficiency(rows []ScalingRow, comp *results.Comparison) {
	base := map[string]ScalingRow{}
	for _, r := range rows {
		if r.Source != "rounds" {
			continue
		}
		if b, ok := base[r.Implementation]; !ok || r.Cores < b.Cores {
			base[r.Implementation] = r
		}
	}
	for i := range rows {
		r := &rows[i]
		b, ok := base[r.Implementation]
		if r.Source != "rounds" || !ok || b.Arm == r.Arm || b.Cores != r.BaseCores {
			continue
		}
		rr := stats.RoundRatioCI95(roundFigures(comp, r.Arm), roundFigures(comp, b.Arm))
		if !(rr.Ratio > 0) {
			continue
		}
		k := float64(b.Cores) / float64(r.Cores)
		r.Efficiency = rr.Ratio * k
		if rr.DF >= 1 {
			r.EfficiencyLow, r.EfficiencyHigh = rr.Low*k, rr.High*k
		}
	}
}

// capacityFigure is what a capacity claims: its estimate, or for a
// lower bound the rate it is at least (results.Capacity.Describe).
func capacityFigure(c *results.Capacity) float64 {
	if c.LowerBound && c.Low > 0 {
		return c.Low
	}
	return c.Rate
}

// capacityOf is the capacity of arm on workload, or nil.
func capacityOf(r *results.Run, workload, arm string) *results.Capacity {
	for _, c := range r.Capacities {
		if c.Workload == workload && c.Arm == arm && c.Rate > 0 {
			return c
		}
	}
	return nil
}

// fillEfficiency sets each row's figure per core and its efficiency
// against the same implementation's fewest cores.
func fillEfficiency(rows []ScalingRow) {
	base := map[string]ScalingRow{}
	for _, r := range rows {
		if b, ok := base[r.Implementation]; !ok || r.Cores < b.Cores {
			base[r.Implementation] = r
		}
	}
	for i := range rows {
		r := &rows[i]
		b := base[r.Implementation]
		r.PerCore = r.Figure / float64(r.Cores)
		r.BaseCores = b.Cores
		r.Efficiency = scalingEfficiency(r.Figure, r.Cores, b.Figure, b.Cores)
	}
}

// scalingEfficiency is fig at cores against linear scaling from base at
// baseCores: fig / (cores/baseCores × base).
func scalingEfficiency(fig float64, cores int, base float64, baseCores int) float64 {
	if base <= 0 || cores <= 0 || baseCores <= 0 {
		return math.NaN()
	}
	return fig / (float64(cores) / float64(baseCores) * base)
}

// crossings finds, for every pair of implementations, where one's figure
// passes the other's as cores grow: between measured counts by linear
// interpolation, and past the top count on the trend of the last two
// measured (up to ExtrapolationLimit times the top count), flagged.
func crossings(rows []ScalingRow) []Crossing {
	var ids []string
	fig := map[string]map[int]float64{}
	bound := map[string]map[int]bool{}
	for _, r := range rows {
		if r.LowerBound {
			if bound[r.Implementation] == nil {
				bound[r.Implementation] = map[int]bool{}
			}
			bound[r.Implementation][r.Cores] = true
		}
		if fig[r.Implementation] == nil {
			fig[r.Implementation] = map[int]float64{}
			ids = append(ids, r.Implementation)
		}
		fig[r.Implementation][r.Cores] = r.Figure
	}
	var out []Crossing
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			var cs []int
			for n := range fig[a] {
				if _, ok := fig[b][n]; ok {
					cs = append(cs, n)
				}
			}
			sort.Ints(cs)
			for _, c := range crossingsOf(a, b, cs, fig[a], fig[b]) {
				c.LowerBound = bound[a][c.Low] || bound[a][c.High] || bound[b][c.Low] || bound[b][c.High]
				out = append(out, c)
			}
		}
	}
	return out
}

// crossingsOf are the crossings of a and b over the core counts cs both
// were measured at.
func crossingsOf(a, b string, cs []int, fa, fb map[int]float64) []Crossing {
	var out []Crossing
	pass := func(lo, hi int, at, dHi float64, extra bool) {
		c := Crossing{Passer: a, Passed: b, Low: lo, High: hi, At: at, Extrapolated: extra}
		if dHi < 0 {
			c.Passer, c.Passed = b, a
		}
		out = append(out, c)
	}
	for k := 0; k+1 < len(cs); k++ {
		lo, hi := cs[k], cs[k+1]
		d0, d1 := fa[lo]-fb[lo], fa[hi]-fb[hi]
		if d0*d1 < 0 {
			pass(lo, hi, float64(lo)+float64(hi-lo)*d0/(d0-d1), d1, false)
		}
	}
	if n := len(cs); n >= 2 {
		lo, hi := cs[n-2], cs[n-1]
		d0, d1 := fa[lo]-fb[lo], fa[hi]-fb[hi]
		slope := (d1 - d0) / float64(hi-lo) // how the gap changes per core
		if d1 != 0 && slope != 0 && d1*slope < 0 {
			at := float64(hi) - d1/slope
			if at <= float64(ExtrapolationLimit*hi) {
				pass(lo, hi, at, -d1, true)
			}
		}
	}
	return out
}

// scalingText is the table's figure for a row: "64,000 req/s", "≥ 64,000
// req/s" for a lower bound, "410 users" for a capacity in users.
func scalingFigure(r ScalingRow) string {
	s := human.Count(r.Figure) + "/s"
	if r.Unit == results.UnitUsers {
		s = human.Count(r.Figure) + " users"
	}
	if r.LowerBound {
		s = "≥ " + s
	}
	return s
}

// efficiencyText is a row's efficiency as a percentage, with its
// interval where it has one, or "—".
func efficiencyText(r ScalingRow) string {
	if math.IsNaN(r.Efficiency) {
		return "—"
	}
	s := fmt.Sprintf("%.0f%%", 100*r.Efficiency)
	if r.EfficiencyHigh > 0 {
		s += fmt.Sprintf(" [%.0f%%, %.0f%%]", 100*r.EfficiencyLow, 100*r.EfficiencyHigh)
	}
	return s
}

// scalingHead are the cores table's columns.
var scalingHead = []string{"Implementation", "Cores", "Figure", "Per core", "Scaling efficiency"}

// scalingCells are one row's cells, as the Markdown and HTML tables show.
func scalingCells(r ScalingRow) []string {
	what := r.Metric
	switch r.Source {
	case "rounds":
		what = fmt.Sprintf("throughput at %d, mean of its rounds", r.Level)
	case "levels":
		what = fmt.Sprintf("throughput at %d", r.Level)
	}
	eff := efficiencyText(r)
	if r.BaseCores != 1 && eff != "—" {
		eff += fmt.Sprintf(" (against %d cores)", r.BaseCores)
	}
	return []string{r.Implementation, fmt.Sprint(r.Cores), scalingFigure(r) + " (" + what + ")", scalingFigure(ScalingRow{Figure: r.PerCore, LowerBound: r.LowerBound, Unit: r.Unit}), eff}
}

// writeScaling writes a workload's cores table and crossings (Markdown).
func writeScaling(w io.Writer, wl *Workload) {
	if len(wl.Scaling) == 0 {
		return
	}
	fmt.Fprintf(w, "Scaling with cores (each core count an arm of its own, measured in turn with the others):\n\n| %s |\n|---|--:|--:|--:|--:|\n", joinCells(scalingHead))
	for _, r := range wl.Scaling {
		fmt.Fprintf(w, "| %s |\n", joinCells(scalingCells(r)))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Scaling efficiency is the figure at n cores / (n × the figure at one core); 100%% is linear. From interleaved rounds it is the ratio to the one-core arm round by round, with its 95%% interval.\n\n")
	for _, c := range wl.Crossings {
		fmt.Fprintf(w, "- %s\n", c)
	}
	if len(wl.Crossings) > 0 {
		fmt.Fprintln(w)
	}
	writeScalingFit(w, wl)
}

// writeScalingFit writes the law's lines below the cores table (Markdown).
func writeScalingFit(w io.Writer, wl *Workload) {
	if len(wl.ScalingFit) == 0 {
		return
	}
	fmt.Fprintf(w, "%s\n\n", fitHead)
	for _, l := range wl.ScalingFit {
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintln(w)
}

func joinCells(cells []string) string {
	out := ""
	for i, c := range cells {
		if i > 0 {
			out += " | "
		}
		out += c
	}
	return out
}

// scalingChart draws each implementation's figure against its cores,
// with a dashed line for linear scaling from its fewest cores.
func scalingChart(id string, wl *Workload, colors map[string]string) (figure, bool) {
	if len(wl.Scaling) == 0 {
		return figure{}, false
	}
	what := wl.Scaling[0].Metric
	ch := &chart{id: id, title: fmt.Sprintf("%s: %s against cores", wl.Name, what), xLabel: "service CPUs (cores, log scale)", xLog: true, width: 560}
	unit := "req/s"
	if wl.Scaling[0].Unit == results.UnitUsers {
		unit = results.UnitUsers
	}
	p := panel{yLabel: what + " (" + unit + ")", height: 200, yFmt: num}
	var counts []int
	var ids []string
	for _, r := range wl.Scaling {
		if !slices.Contains(counts, r.Cores) {
			counts = append(counts, r.Cores)
		}
		if !slices.Contains(ids, r.Implementation) {
			ids = append(ids, r.Implementation)
		}
	}
	sort.Ints(counts)
	for _, n := range counts {
		ch.xTicks = append(ch.xTicks, tick{float64(n), fmt.Sprint(n)})
	}
	for _, im := range ids {
		color := colors[im]
		if color == "" {
			color = colors[armOf(wl.Scaling, im)]
		}
		s := series{name: im, color: color, marks: true}
		lin := series{name: im + ", linear from its fewest cores", color: color, style: "dash"}
		for _, r := range wl.Scaling {
			if r.Implementation != im {
				continue
			}
			s.xs, s.ys = append(s.xs, float64(r.Cores)), append(s.ys, r.Figure)
			s.tips = append(s.tips, fmt.Sprintf("%s at %d cores: %s, %s per core, efficiency %s", im, r.Cores, scalingFigure(r), human.Count(r.PerCore), efficiencyText(r)))
			if base := r.Figure / r.Efficiency; !math.IsNaN(r.Efficiency) && r.Efficiency > 0 {
				lin.xs, lin.ys = append(lin.xs, float64(r.Cores)), append(lin.ys, base)
			}
		}
		p.lines = append(p.lines, s, lin)
		ch.legend = append(ch.legend, legendItem{im, color, ""})
	}
	ch.legend = append(ch.legend, legendItem{"linear scaling", "#888", "dash"})
	ch.panels = []panel{p}
	return figure{ch.title, template.HTML(ch.render())}, true
}

// armOf is the first arm id of implementation im in rows.
func armOf(rows []ScalingRow, im string) string {
	for _, r := range rows {
		if r.Implementation == im {
			return r.Arm
		}
	}
	return ""
}
