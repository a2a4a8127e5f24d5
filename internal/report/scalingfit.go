package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/scaling"
)

// fitHead introduces the lines of scalingFit, below the cores table.
const fitHead = "Fitted to the Universal Scalability Law, X(N) = λN / (1 + σ(N−1) + κN(N−1)): every start's figure at every count is one observation; the intervals are 95%, from the figures' scatter about the curve, and hold the difference between fresh starts (internal/scaling says how). N* = √((1−σ)/κ) is where the curve tops out."

// scalingFit fits the law to each implementation's figures in the cores
// table of wl and says, one line each: its parameters, peak and the
// capacity predicted at twice the most cores measured; where two fitted
// curves cross (up to scaling.DefaultReach times the most cores); and,
// for the plan's sizing load, the cores each needs at the objective.
func scalingFit(r *results.Run, wl *Workload) []string {
	if len(wl.Scaling) == 0 {
		return nil
	}
	var ids []string
	pts := map[string][]scaling.Point{}
	bound := map[string]bool{}
	comp := scalingComparison(wl)
	for _, row := range wl.Scaling {
		if !slices.Contains(ids, row.Implementation) {
			ids = append(ids, row.Implementation)
		}
		pts[row.Implementation] = append(pts[row.Implementation], fitPoints(r, wl, comp, row)...)
		bound[row.Implementation] = bound[row.Implementation] || row.LowerBound
	}
	var out []string
	var fits []*scaling.Fit
	top := 0
	for _, id := range ids {
		f, err := scaling.New(id, pts[id])
		if err != nil {
			out = append(out, fmt.Sprintf("%s: not fitted: %v", id, err))
			continue
		}
		line := fitLine(f)
		if bound[id] {
			line += " It rests on a capacity the generator limited (a lower bound): the true curve may bend less."
		}
		out = append(out, line)
		if f.Outside == "" {
			fits = append(fits, f)
			top = max(top, f.Max())
		}
	}
	for i, a := range fits {
		for _, b := range fits[i+1:] {
			lo := float64(min(a.Counts[0], b.Counts[0]))
			out = append(out, crossLine(scaling.Cross(a, b, lo, float64(scaling.DefaultReach*top)), top))
		}
	}
	if p := r.Plan; p != nil && p.Sizing != nil && wl.Scaling[0].Metric == "capacity" && wl.Scaling[0].Unit == "" {
		rate := p.Sizing.RequestsPerSecond()
		for _, f := range fits {
			out = append(out, needLine(f, f.CoresFor(rate, float64(scaling.DefaultReach*top)), p.Sizing.String()))
		}
	}
	return out
}

// fitPoints are one row's figures, one per start: each start's capacity
// (the rate it held when every start was confirmed, else its bracket's
// middle: as the capacity's interval takes it), the mean
// of each start's rounds (with the rounds), or each trial's throughput
// at the row's level; the row's own figure where there is nothing finer.
func fitPoints(r *results.Run, wl *Workload, comp *results.Comparison, row ScalingRow) []scaling.Point {
	var out []scaling.Point
	switch row.Source {
	case "capacity":
		if c := capacityOf(r, wl.Name, row.Arm); c != nil && !c.LowerBound {
			for _, b := range c.Brackets {
				if c.HeldPerStart() {
					if b.Held > 0 {
						out = append(out, scaling.Point{Cores: row.Cores, Start: b.Start, Figure: b.Held})
					}
					continue
				}
				if b.Pass > 0 && b.Fail > 0 && !b.GeneratorLimited {
					out = append(out, scaling.Point{Cores: row.Cores, Start: b.Start, Figure: (b.Pass + b.Fail) / 2})
				}
			}
		}
	case "rounds":
		for s, rounds := range roundFigures(comp, row.Arm) {
			var pos []float64
			for _, v := range rounds {
				if v > 0 {
					pos = append(pos, v)
				}
			}
			if m := meanPositive([][]float64{pos}); m > 0 {
				out = append(out, scaling.Point{Cores: row.Cores, Start: s + 1, Figure: m, Rounds: pos})
			}
		}
	case "levels":
		for _, c := range wl.Cells {
			if c.ID == row.Arm && c.Database == "" && c.Level == row.Level {
				for i, v := range c.Values["throughput"].Trials {
					if v > 0 {
						out = append(out, scaling.Point{Cores: row.Cores, Start: i + 1, Figure: v})
					}
				}
			}
		}
	}
	if len(out) == 0 {
		out = append(out, scaling.Point{Cores: row.Cores, Start: 1, Figure: row.Figure})
	}
	return out
}

// fitLine says one fit: its parameters with their intervals, its peak,
// the capacity it predicts at twice the most cores measured, and what
// the intervals rest on; or why the figures fall outside the law.
func fitLine(f *scaling.Fit) string {
	params := fmt.Sprintf("λ %s/s%s, σ %s%s, κ %s%s", human.Count(f.Lambda), rateIv(f.LambdaCI), g3(f.Sigma), numIv(f.SigmaCI, g3), g3(f.Kappa), numIv(f.KappaCI, g3))
	if f.Outside != "" {
		return fmt.Sprintf("%s: outside the law, not forced into it: %s. The figures solve to %s; no peak, prediction, crossing or size is drawn from them.", f.Name, f.Outside, params)
	}
	peak := "no peak (κ ≤ 0)"
	if !math.IsNaN(f.Peak) {
		peak = "peak at N* ≈ " + f1(f.Peak) + " cores"
	}
	if f.PeakCI.Known() {
		if math.IsNaN(f.Peak) {
			peak = "no peak on the estimate (κ ≤ 0 within the noise), N*"
		}
		peak += " " + coresIv(f.PeakCI)
		if f.PeakCI.Open() {
			peak += " (open above: κ is not told from 0 over the counts measured)"
		}
	}
	if !math.IsNaN(f.Peak) && f.Beyond(f.Peak) {
		peak += fmt.Sprintf(", beyond the %d measured", f.Max())
	}
	n := 2 * f.Max()
	x, iv := f.At(float64(n))
	pred := fmt.Sprintf("at %d cores %s/s%s (extrapolated)", n, human.Count(x), rateIv(iv))
	if math.IsNaN(x) {
		pred = fmt.Sprintf("no finite prediction at %d cores", n)
	}
	line := fmt.Sprintf("%s: %s; %s; %s. %s", f.Name, params, peak, pred, basisText(f))
	if f.LackOfFit < 0.05 {
		line += fmt.Sprintf(" The law fits these figures poorly: the means at each count stray from the curve more than the starts differ from one another (lack of fit, p = %.2g); the intervals hold that scatter, but the curve's shape, and so its peak, is in doubt.", f.LackOfFit)
	}
	return line
}

// basisText says what a fit's intervals rest on.
func basisText(f *scaling.Fit) string {
	s := fmt.Sprintf("%s from %s at %d counts", plural(f.Figures, "figure"), plural(f.Starts, "start"), len(f.Counts))
	switch f.Basis {
	case scaling.Residual:
		s += fmt.Sprintf("; scatter %.1f%% per figure, %d residual df", 100*f.Scatter, f.DF)
		if f.DF == 1 {
			s += " (t = 12.7: wide)"
		}
		return s + "."
	case scaling.Rounds:
		return s + fmt.Sprintf(": no residual, so the intervals come from the rounds' spread (%.1f%% per figure, %d df), which leaves out a second start's difference: they are too narrow.", 100*f.Scatter, f.DF)
	}
	return s + ": as many figures as parameters, an exact fit with no scatter to judge by: no interval. Four counts or a second start would give one; rounds within the start, a narrower one that leaves out a second start's difference."
}

// crossLine says where two fitted curves cross, or that they do not.
func crossLine(c scaling.Crossings, top int) string {
	if len(c.Found) == 0 {
		s := fmt.Sprintf("On the fitted curves %s and %s do not cross between %s and %s cores", c.A, c.B, f1(c.Lo), f1(c.Hi))
		if c.Close.Known() {
			s += fmt.Sprintf("; they are within each other's noise from %s to %s cores, so a crossing there is not excluded", f1(c.Close.Low), f1(c.Close.High))
		}
		return s + "."
	}
	s := "On the fitted curves "
	for i, x := range c.Found {
		if i > 0 {
			s += "; then "
		}
		s += fmt.Sprintf("%s passes %s at about %s cores", x.Passer, x.Passed, f1(x.At))
		if x.CI.Known() {
			lo, hi := f1(x.CI.Low), f1(x.CI.High)
			if x.LowOpen {
				lo += " or fewer"
			}
			if x.HighOpen {
				hi = "beyond " + hi
			}
			s += fmt.Sprintf(" [%s, %s]", lo, hi)
		} else {
			s += " (no interval: a fit without one)"
		}
		if x.At > float64(top) {
			s += fmt.Sprintf(", beyond the %d measured", top)
		}
	}
	return s + "."
}

// needLine says the cores f's stack needs for the plan's sizing load.
func needLine(f *scaling.Fit, n scaling.Need, load string) string {
	if each := fmt.Sprintf("%.0f req/s", n.Rate); each != load {
		load += " (" + each + " each)"
	}
	s := fmt.Sprintf("Sizing for %s at the objective: %s ", load, f.Name)
	if math.IsNaN(n.Cores) {
		return s + fmt.Sprintf("does not reach it in one process within %s cores: its curve tops out at %s/s; run several.", f1(n.Reach), human.Count(n.Top))
	}
	s += fmt.Sprintf("needs about %s cores", f1(n.Cores))
	if n.Band.Known() {
		s += " " + coresIv(n.Band)
		if n.Band.Open() {
			s += fmt.Sprintf(" (the conservative side is not reached within %s cores)", f1(n.Reach))
		}
	}
	if f.Beyond(n.Cores) || n.Band.Known() && f.Beyond(n.Band.High) {
		s += fmt.Sprintf(", beyond the %d measured", f.Max())
	}
	return s + "."
}

// rateIv is " [low, high]" of a rate's interval ("" without one).
func rateIv(iv scaling.Interval) string {
	return numIv(iv, func(v float64) string { return human.Count(v) })
}

// numIv is " [low, high]" of an interval, an open end said as such.
func numIv(iv scaling.Interval, f func(float64) string) string {
	if !iv.Known() {
		return ""
	}
	lo, hi := "open", "open"
	if !math.IsInf(iv.Low, -1) {
		lo = f(iv.Low)
	}
	if !iv.Open() {
		hi = f(iv.High)
	}
	return " [" + lo + ", " + hi + "]"
}

// coresIv is "[low, high]" of a count of cores ("at least low" when open
// above).
func coresIv(iv scaling.Interval) string {
	switch {
	case iv.Open() && iv.Low <= 0:
		return "[unbounded]"
	case iv.Open():
		return "[at least " + f1(iv.Low) + "]"
	}
	return "[" + f1(iv.Low) + ", " + f1(iv.High) + "]"
}

// g3 prints σ or κ to three significant digits.
func g3(v float64) string { return fmt.Sprintf("%.3g", v) }

// plural is "1 start", "2 starts".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
