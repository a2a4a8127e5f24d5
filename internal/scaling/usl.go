// Package scaling fits Gunther's Universal Scalability Law to one stack's
// figures over core counts,
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1)),
//
// and answers what sizing asks of it, each with a 95% interval: the
// peak N* = √((1−σ)/κ), the capacity at a count not measured, where two
// stacks' curves cross, and the cores a load needs.
//
// # The fit
//
// Written as N/X = (1 + σ(N−1) + κN(N−1)) / λ, the law is linear in
// a = 1/λ, b = σ/λ and c = κ/λ: z = N/X = a + b(N−1) + cN(N−1). The fit
// is the weighted least squares of every figure's z on (1, N−1, N(N−1)),
// the weights 1/ẑ² iterated to the fitted curve: a figure's noise is a
// share of it, so the residuals weighed are relative ones, as a fit of
// log X would weigh them. Every start's figure at every count is one
// observation: each (stack, cores) arm is a process of its own, so even
// the figures of one start are independent draws.
//
// # The intervals
//
// They come from the scatter of the figures about the fitted curve
// (Basis Residual): s² = Σ (relative residual)² / (n − 3), the
// parameters' covariance s²(XᵀWX)⁻¹, and Student's t at n − 3 degrees of
// freedom. What is linear in (a, b, c) at a given N has an exact t
// interval: N/X(N), so the capacity at N; the gap between two stacks'
// N/X at N, so their crossing (the counts where the gap is not
// significantly different from zero); the load a stack carries at N, so
// the cores a load needs (the counts where the capacity interval reaches
// it). Ratios get Fieller's interval: σ = b/a, κ = c/a and N*² = (a−b)/c.
// Fieller's set is open-ended where its denominator is not significantly
// different from zero: N*'s interval is "at least L" when κ's interval
// reaches zero, because the curve has not bent enough over the counts
// measured to bound its peak. That is an answer, not a failure.
//
// What they mean: if the law holds and each figure scatters by the same
// share independently, 95% of such intervals hold the true value. The
// scatter between fresh starts is in them, since every figure is a start
// of its own. A curve the law does not describe is not (the residuals
// then grow, and so do the intervals, but a bias stays), nor is another
// machine's difference from this one. A start that moves all its
// figures alike (the machine slower that start, every arm with it) is
// not modelled apart: its share of the residual widens the intervals of
// σ, κ, N* and the capacities extrapolated (covered more often than 95%:
// 99.5% in the test with 3% per start and 1.5% per figure), while λ,
// which such a start moves whole, is covered less (about 90% there).
//
// Where two starts or more were measured at four counts or more, an F
// test sets the means at each count against the curve and the starts
// against one another (Fit.LackOfFit): a small p says the law does not
// describe the curve's shape, though the figures stay within it.
//
// With four counts and three parameters one start leaves one residual
// degree of freedom: the intervals stand, at t = 12.7, and are wide (N*'s
// is then open above unless the curve bends hard). With three counts and
// one start the fit is exact and has no scatter to judge by: its
// parameters come without intervals (Basis Exact), unless the start's
// interleaved rounds give each figure's spread (Basis Rounds): then the
// relative variance of each figure's mean is pooled over the rounds'
// degrees of freedom. Those intervals hold the machine's noise from
// round to round, not a second start's difference: narrower than the
// truth, and marked so.
//
// # Constraints
//
// σ ≥ 0 and κ ≥ 0 are not imposed on the fit. A negative estimate whose
// interval reaches zero is zero within the noise: no peak is predicted,
// and N*'s interval is open above. One whose interval lies below zero,
// or any negative estimate without an interval (no residual to tell
// noise from a real departure), puts the figures outside the law, and
// Fit.Outside says why: σ < 0 is superlinear scaling, κ < 0 a curve that
// gains per core as it grows. No peak, prediction, crossing or size is
// made from a fit outside the law.
package scaling

import (
	"fmt"
	"math"
	"slices"

	"github.com/showdownlab/showdown/internal/stats"
)

// DefaultReach is how far beyond the most cores measured the report
// looks for crossings and sizes: four times the top count, each flagged
// as extrapolated past it.
const DefaultReach = 4

// Point is one figure of a stack: its throughput, or capacity, at Cores
// in one fresh start.
type Point struct {
	Cores int
	// Start names the start the figure came from; figures of one start
	// share it.
	Start  int
	Figure float64
	// Rounds are the start's figures round by round at these cores, when
	// it ran interleaved rounds (Figure is then their mean): their spread
	// is used only where the starts leave no residual (Basis Rounds).
	Rounds []float64
}

// Interval is a 95% interval: High is +Inf where it is open above, Low
// −Inf where it is open below, and both are NaN where there is none.
type Interval struct{ Low, High float64 }

// noInterval is the interval of a figure that has none.
var noInterval = Interval{math.NaN(), math.NaN()}

// Known reports whether there is an interval at all.
func (iv Interval) Known() bool { return !math.IsNaN(iv.Low) && !math.IsNaN(iv.High) }

// Open reports whether the interval has no upper end.
func (iv Interval) Open() bool { return math.IsInf(iv.High, 1) }

// Contains reports whether v lies within a known interval.
func (iv Interval) Contains(v float64) bool { return iv.Known() && iv.Low <= v && v <= iv.High }

// Basis says where a fit's intervals come from.
type Basis string

// The bases of a fit's intervals (the package comment says what each
// means).
const (
	// Residual: the scatter of every figure about the fitted curve.
	Residual Basis = "residual"
	// Rounds: no residual left; the spread of each figure's rounds, which
	// leaves out a second start's difference.
	Rounds Basis = "rounds"
	// Exact: no residual and no rounds; no interval.
	Exact Basis = "exact"
)

// Fit is the law fitted to one stack's figures.
type Fit struct {
	Name string
	// Counts are the core counts measured, ascending; Starts the starts
	// and Figures the figures fitted.
	Counts  []int
	Starts  int
	Figures int
	// DF is the degrees of freedom of the intervals' t (the residual's,
	// or the rounds' under Basis Rounds; 0 under Exact).
	DF    int
	Basis Basis
	// Scatter is the standard deviation of one figure about the curve,
	// relative (0.03 is 3%): the residual's, or the rounds' under Basis
	// Rounds; 0 under Exact.
	Scatter float64
	// Lambda is the throughput of one core, Sigma the contention and
	// Kappa the coherency cost, each with its interval.
	Lambda, Sigma, Kappa       float64
	LambdaCI, SigmaCI, KappaCI Interval
	// Peak is the count N* where the curve tops out (NaN: none, as κ ≤ 0
	// or σ ≥ 1), and PeakCI its interval (Fieller's; open above when κ
	// is not significantly above zero).
	Peak   float64
	PeakCI Interval
	// LackOfFit is the p-value of the test that the law describes the
	// means at each count as well as the starts agree with one another
	// (an F test of the residual's lack of fit against its pure error;
	// NaN without two starts at a count or a fourth count): a small one
	// says the curve's shape is in doubt, though the intervals hold the
	// scatter it leaves.
	LackOfFit float64
	// Outside, when set, says why the figures fall outside the law; the
	// parameters are then what the figures solve to, and nothing is
	// predicted from them.
	Outside string

	ref   float64       // the figures' scale: z is N × ref / X
	theta [3]float64    // a, b, c on that scale
	cov   [3][3]float64 // their covariance (0 under Exact)
	t     float64       // the intervals' t quantile (NaN under Exact)
}

// design is the row of the linear form at n: (1, n−1, n(n−1)).
func design(n float64) [3]float64 { return [3]float64{1, n - 1, n * (n - 1)} }

// New fits the law to pts, one stack's figures. It needs figures at
// three core counts or more; a figure must be positive.
func New(name string, pts []Point) (*Fit, error) {
	f := &Fit{Name: name, Peak: math.NaN(), PeakCI: noInterval, LambdaCI: noInterval, SigmaCI: noInterval, KappaCI: noInterval, t: math.NaN()}
	starts := map[int]bool{}
	logRef, atRef := 0.0, 0
	for i, p := range pts {
		if p.Cores < 1 || !(p.Figure > 0) || math.IsInf(p.Figure, 0) {
			return nil, fmt.Errorf("scaling: %s: figure %d (%v at %d cores): want a positive figure at one core or more", name, i+1, p.Figure, p.Cores)
		}
		if !slices.Contains(f.Counts, p.Cores) {
			f.Counts = append(f.Counts, p.Cores)
		}
		starts[p.Start] = true
	}
	slices.Sort(f.Counts)
	if len(f.Counts) < 3 {
		return nil, fmt.Errorf("scaling: %s: figures at %d core count(s); the law's three parameters need three counts or more", name, len(f.Counts))
	}
	f.Starts, f.Figures = len(starts), len(pts)
	// The scale: the geometric mean of the figures at the fewest cores,
	// so that a is about 1 and the normal equations stay well balanced.
	for _, p := range pts {
		if p.Cores == f.Counts[0] {
			logRef += math.Log(p.Figure / float64(p.Cores))
			atRef++
		}
	}
	f.ref = math.Exp(logRef / float64(atRef))

	xs := make([][3]float64, len(pts))
	z := make([]float64, len(pts))
	w := make([]float64, len(pts))
	for i, p := range pts {
		n := float64(p.Cores)
		xs[i], z[i] = design(n), n*f.ref/p.Figure
		w[i] = 1 / (z[i] * z[i])
	}
	var inv [3][3]float64
	for iter := 0; iter < 100; iter++ {
		var m [3][3]float64
		var v [3]float64
		for i := range xs {
			for j := 0; j < 3; j++ {
				v[j] += w[i] * xs[i][j] * z[i]
				for k := 0; k < 3; k++ {
					m[j][k] += w[i] * xs[i][j] * xs[i][k]
				}
			}
		}
		var ok bool
		if inv, ok = invert(m); !ok {
			return nil, fmt.Errorf("scaling: %s: the counts %v do not separate σ from κ", name, f.Counts)
		}
		prev := f.theta
		f.theta = mulVec(inv, v)
		moved := 0.0
		for j := range f.theta {
			moved = math.Max(moved, math.Abs(f.theta[j]-prev[j]))
		}
		// New weights from the fitted curve, unless it reaches zero at a
		// measured count (figures far outside the law): then the last
		// weights stand.
		next := make([]float64, len(xs))
		positive := true
		for i := range xs {
			zh := dot(xs[i], f.theta)
			if zh <= 0 {
				positive = false
				break
			}
			next[i] = 1 / (zh * zh)
		}
		if !positive || moved < 1e-13 {
			break
		}
		w = next
	}

	ssr := 0.0
	res := make([]float64, len(xs))
	for i := range xs {
		zh := dot(xs[i], f.theta)
		res[i] = (z[i] - zh) / zh
		ssr += res[i] * res[i]
	}
	f.LackOfFit = lackOfFit(pts, res, ssr, len(f.Counts))
	var s2 float64
	switch f.DF = len(pts) - 3; {
	case f.DF >= 1:
		f.Basis, s2 = Residual, ssr/float64(f.DF)
	default:
		f.Basis, f.DF = Exact, 0
		if v, df := roundsVariance(pts); df > 0 {
			f.Basis, f.DF, s2 = Rounds, df, v
		}
	}
	if f.Basis != Exact {
		f.t, f.Scatter = stats.T975(f.DF), math.Sqrt(s2)
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				f.cov[j][k] = s2 * inv[j][k]
			}
		}
	}

	a, b, c := f.theta[0], f.theta[1], f.theta[2]
	f.Lambda, f.Sigma, f.Kappa = f.ref/a, b/a, c/a
	// Figures exactly on a line solve to σ or κ of zero give or take a
	// rounding: zero it is.
	if math.Abs(f.Sigma) < negligible {
		f.Sigma, f.theta[1], b = 0, 0, 0
	}
	if math.Abs(f.Kappa) < negligible {
		f.Kappa, f.theta[2], c = 0, 0, 0
	}
	if f.Basis != Exact {
		h := f.t * math.Sqrt(f.cov[0][0])
		f.LambdaCI = Interval{f.ref / (a + h), math.Inf(1)}
		if a-h > 0 {
			f.LambdaCI.High = f.ref / (a - h)
		}
		f.SigmaCI = hull(fieller(b, a, f.cov[1][1], f.cov[0][0], f.cov[0][1], f.t), math.Inf(-1))
		f.KappaCI = hull(fieller(c, a, f.cov[2][2], f.cov[0][0], f.cov[0][2], f.t), math.Inf(-1))
	}
	f.Outside = f.outside()
	if f.Outside != "" {
		return f, nil
	}
	// N*² = (a − b) / c.
	u, v := a-b, c
	if u > 0 && v > 0 {
		f.Peak = math.Sqrt(u / v)
	}
	if f.Basis != Exact {
		vu := f.cov[0][0] - 2*f.cov[0][1] + f.cov[1][1]
		cuv := f.cov[0][2] - f.cov[1][2]
		sq := hull(fieller(u, v, vu, f.cov[2][2], cuv, f.t), 0)
		if sq.Known() {
			f.PeakCI = Interval{math.Sqrt(sq.Low), math.Sqrt(sq.High)}
		}
	}
	return f, nil
}

// negligible is how far from zero σ or κ may come from rounding alone.
const negligible = 1e-9

// outside says why the fit falls outside the law, or "".
func (f *Fit) outside() string {
	why := func(name string, v float64, iv Interval, what string) string {
		if v >= 0 {
			return ""
		}
		switch {
		case !iv.Known():
			return fmt.Sprintf("%s = %.3g < 0 (%s), and one figure per count leaves no residual to tell noise from a real departure", name, v, what)
		case iv.High < 0:
			return fmt.Sprintf("%s = %.3g [%.3g, %.3g], below 0 (%s)", name, v, iv.Low, iv.High, what)
		}
		return ""
	}
	if s := why("σ", f.Sigma, f.SigmaCI, "superlinear: each core adds more than the one before"); s != "" {
		return s
	}
	if s := why("κ", f.Kappa, f.KappaCI, "the curve gains per core as the count grows; the law's curve can only bend down"); s != "" {
		return s
	}
	for _, n := range f.Counts {
		if dot(design(float64(n)), f.theta) <= 0 {
			return fmt.Sprintf("the fitted curve has no finite value at %d cores", n)
		}
	}
	return ""
}

// lackOfFit is the p-value of the F test of the residual's lack of fit
// (the means at each count about the curve, counts − 3 df) against its
// pure error (the figures at each count about their mean, figures −
// counts df); NaN where either has no degrees of freedom. Within one
// count every figure has the same weight, so the relative residuals
// split exactly.
func lackOfFit(pts []Point, res []float64, ssr float64, counts int) float64 {
	dfLack, dfPure := counts-3, len(pts)-counts
	if dfLack < 1 || dfPure < 1 {
		return math.NaN()
	}
	sum, k := map[int]float64{}, map[int]float64{}
	for i, p := range pts {
		sum[p.Cores] += res[i]
		k[p.Cores]++
	}
	pure := 0.0
	for i, p := range pts {
		d := res[i] - sum[p.Cores]/k[p.Cores]
		pure += d * d
	}
	if pure <= 0 {
		return math.NaN()
	}
	return stats.FP((ssr-pure)/float64(dfLack)/(pure/float64(dfPure)), dfLack, dfPure)
}

// roundsVariance pools the relative variance of each figure's mean from
// its rounds, and the degrees of freedom it has (0: no rounds).
func roundsVariance(pts []Point) (float64, int) {
	sum, df := 0.0, 0
	for _, p := range pts {
		r := len(p.Rounds)
		if r < 2 {
			continue
		}
		m, sd := stats.Mean(p.Rounds), stats.StdDev(p.Rounds)
		if !(m > 0) {
			continue
		}
		cv := sd / m
		sum += float64(r-1) * cv * cv / float64(r)
		df += r - 1
	}
	if df == 0 {
		return 0, 0
	}
	return sum / float64(df), df
}

// Beyond reports whether n lies past the most cores measured.
func (f *Fit) Beyond(n float64) bool { return n > float64(f.Counts[len(f.Counts)-1]) }

// Max is the most cores measured.
func (f *Fit) Max() int { return f.Counts[len(f.Counts)-1] }

// zAt is N/X at n (in req/s⁻¹ × cores) and its variance.
func (f *Fit) zAt(n float64) (z, v float64) {
	x := design(n)
	z = dot(x, f.theta) / f.ref
	for j := 0; j < 3; j++ {
		for k := 0; k < 3; k++ {
			v += x[j] * f.cov[j][k] * x[k]
		}
	}
	return z, v / (f.ref * f.ref)
}

// At is the capacity the curve predicts at n cores and its interval
// (none under Basis Exact, open above where N/X's interval reaches 0).
// It is NaN for a fit outside the law, or where the curve has no finite
// value.
func (f *Fit) At(n float64) (float64, Interval) {
	z, v := f.zAt(n)
	if f.Outside != "" || z <= 0 {
		return math.NaN(), noInterval
	}
	if math.IsNaN(f.t) {
		return n / z, noInterval
	}
	h := f.t * math.Sqrt(v)
	iv := Interval{n / (z + h), math.Inf(1)}
	if z-h > 0 {
		iv.High = n / (z - h)
	}
	return n / z, iv
}

// Crossing is where one stack's curve passes another's as cores grow.
type Crossing struct {
	// Passer carries less than Passed below At and more above it.
	Passer, Passed string
	At             float64
	// CI is the counts where the two curves are within each other's
	// noise around At; LowOpen and HighOpen report that it runs to the
	// end of the range searched (none when either fit has no interval).
	CI                Interval
	LowOpen, HighOpen bool
}

// Crossings are where two fits' curves cross in [Lo, Hi].
type Crossings struct {
	A, B   string
	Lo, Hi float64
	Found  []Crossing
	// Close, with nothing found, is the range where the curves are
	// within each other's noise, so that a crossing there cannot be
	// excluded (none: the curves are apart over all of [Lo, Hi]).
	Close Interval
}

// crossSteps is how finely Cross scans [lo, hi] for the interval's ends.
const crossSteps = 4096

// Cross finds where a's and b's curves cross between lo and hi cores:
// the roots of the gap N/X_a − N/X_b, each with the counts around it
// where the gap is not significantly different from zero (Student's t
// at the Welch-Satterthwaite degrees of freedom of the two fits). Both
// fits must be within the law.
func Cross(a, b *Fit, lo, hi float64) Crossings {
	out := Crossings{A: a.Name, B: b.Name, Lo: lo, Hi: hi, Close: noInterval}
	if a.Outside != "" || b.Outside != "" || !(hi > lo) {
		return out
	}
	d := func(n float64) float64 { za, _ := a.zAt(n); zb, _ := b.zAt(n); return za - zb }
	withInterval := !math.IsNaN(a.t) && !math.IsNaN(b.t)
	near := func(n float64) bool {
		za, va := a.zAt(n)
		zb, vb := b.zAt(n)
		v := va + vb
		den := va*va/float64(a.DF) + vb*vb/float64(b.DF)
		df := a.DF + b.DF
		if den > 0 {
			df = max(1, int(math.Floor(v*v/den)))
		}
		return math.Abs(za-zb) <= stats.T975(df)*math.Sqrt(v)
	}
	// The gap is Δc n² + (Δb − Δc) n + (Δa − Δb) on the common scale.
	var q [3]float64
	for j := range q {
		q[j] = a.theta[j]/a.ref - b.theta[j]/b.ref
	}
	step := (hi - lo) / crossSteps
	for _, r := range quadRoots(q[2], q[1]-q[2], q[0]-q[1]) {
		if r < lo || r > hi {
			continue
		}
		c := Crossing{Passer: a.Name, Passed: b.Name, At: r, CI: noInterval}
		// Past the root the passer has the smaller N/X.
		if d(math.Min(r+step, hi)) > d(math.Max(r-step, lo)) {
			c.Passer, c.Passed = b.Name, a.Name
		}
		if withInterval {
			l, h := r, r
			for l-step >= lo && near(l-step) {
				l -= step
			}
			for h+step <= hi && near(h+step) {
				h += step
			}
			c.CI = Interval{l, h}
			c.LowOpen, c.HighOpen = l-step < lo, h+step > hi
		}
		out.Found = append(out.Found, c)
	}
	if len(out.Found) == 0 && withInterval {
		for i := 0; i <= crossSteps; i++ {
			n := lo + float64(i)*step
			if near(n) {
				if !out.Close.Known() {
					out.Close.Low = n
				}
				out.Close.High = n
			}
		}
	}
	return out
}

// Need is the cores a stack needs to carry a load at the objective the
// figures were measured at.
type Need struct {
	Rate float64
	// Cores is where the curve reaches Rate (NaN: not within Reach); below
	// one core it is the share of one core's capacity, as a CPU quota.
	Cores float64
	// Band is from where the capacity's interval first reaches Rate (its
	// upper end: the hopeful side) to where its lower end does (the
	// conservative side); High is +Inf where that is not within Reach.
	Band  Interval
	Reach float64
	// Top is the most the curve carries within Reach (at its peak where
	// the peak is within it), for a rate it does not reach.
	Top float64
}

// needSteps is how finely CoresFor scans the counts per core.
const needSteps = 64

// CoresFor is the cores f's stack needs to carry rate, searched up to
// reach cores.
func (f *Fit) CoresFor(rate, reach float64) Need {
	out := Need{Rate: rate, Cores: math.NaN(), Band: noInterval, Reach: reach}
	if f.Outside != "" || !(rate > 0) {
		return out
	}
	x1, iv1 := f.At(1)
	share := func(x float64) float64 { return rate / x }
	hopeful, careful := math.NaN(), math.NaN()
	if x1 >= rate {
		out.Cores = share(x1)
	}
	if iv1.Known() {
		if iv1.High >= rate {
			hopeful = share(iv1.High)
		}
		if iv1.Low >= rate {
			careful = share(iv1.Low)
		}
	}
	for i := 0; i <= int((reach-1)*needSteps); i++ {
		n := 1 + float64(i)/needSteps
		x, iv := f.At(n)
		if math.IsNaN(x) {
			continue
		}
		out.Top = math.Max(out.Top, x)
		if math.IsNaN(out.Cores) && x >= rate {
			out.Cores = n
		}
		if iv.Known() {
			if math.IsNaN(hopeful) && iv.High >= rate {
				hopeful = n
			}
			if math.IsNaN(careful) && iv.Low >= rate {
				careful = n
			}
		}
	}
	if iv1.Known() {
		out.Band = Interval{hopeful, careful}
		if math.IsNaN(careful) {
			out.Band.High = math.Inf(1)
		}
		if math.IsNaN(hopeful) {
			out.Band = noInterval // not even the hopeful side reaches it
		}
	}
	return out
}

// fieller is the 95% confidence set of u/v, for estimates u and v with
// variances vu and vv and covariance cuv, at quantile t: the r where
// u − r v is not significantly different from zero. One interval where v
// is significantly different from zero; else two rays, or the whole line.
func fieller(u, v, vu, vv, cuv, t float64) []Interval {
	a := v*v - t*t*vv
	b := -2 * (u*v - t*t*cuv)
	c := u*u - t*t*vu
	disc := b*b - 4*a*c
	if a > 0 {
		if disc < 0 { // not at the estimate itself; rounding at worst
			disc = 0
		}
		r1, r2 := (-b-math.Sqrt(disc))/(2*a), (-b+math.Sqrt(disc))/(2*a)
		return []Interval{{r1, r2}}
	}
	if a == 0 || disc <= 0 {
		return []Interval{{math.Inf(-1), math.Inf(1)}}
	}
	r1, r2 := (-b-math.Sqrt(disc))/(2*a), (-b+math.Sqrt(disc))/(2*a)
	r1, r2 = math.Min(r1, r2), math.Max(r1, r2)
	return []Interval{{math.Inf(-1), r1}, {r2, math.Inf(1)}}
}

// hull is the smallest interval holding the parts of set at or above
// from (none when no part is).
func hull(set []Interval, from float64) Interval {
	out := noInterval
	for _, iv := range set {
		if iv.High < from {
			continue
		}
		iv.Low = math.Max(iv.Low, from)
		if !out.Known() {
			out = iv
			continue
		}
		out.Low, out.High = math.Min(out.Low, iv.Low), math.Max(out.High, iv.High)
	}
	return out
}

// quadRoots are the real roots of a x² + b x + c (a linear equation
// where a is zero against the others), ascending.
func quadRoots(a, b, c float64) []float64 {
	if math.Abs(a) <= 1e-12*(math.Abs(b)+math.Abs(c)) {
		if b == 0 {
			return nil
		}
		return []float64{-c / b}
	}
	disc := b*b - 4*a*c
	if disc < 0 {
		return nil
	}
	s := math.Sqrt(disc)
	r1, r2 := (-b-s)/(2*a), (-b+s)/(2*a)
	if r1 > r2 {
		r1, r2 = r2, r1
	}
	if disc == 0 {
		return []float64{r1}
	}
	return []float64{r1, r2}
}

// invert is m's inverse, and false where m is singular.
func invert(m [3][3]float64) ([3][3]float64, bool) {
	var out [3][3]float64
	det := m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) -
		m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) +
		m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	if det == 0 || math.IsNaN(det) || math.IsInf(det, 0) {
		return out, false
	}
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			// The cofactor of m[j][i] (the adjugate's transpose).
			r0, r1 := (j+1)%3, (j+2)%3
			c0, c1 := (i+1)%3, (i+2)%3
			out[i][j] = (m[r0][c0]*m[r1][c1] - m[r0][c1]*m[r1][c0]) / det
		}
	}
	return out, true
}

func mulVec(m [3][3]float64, v [3]float64) [3]float64 {
	return [3]float64{dot(m[0], v), dot(m[1], v), dot(m[2], v)}
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
