package stats

import (
	"math"
	"slices"
	"sort"
)

// DropMADs is how far from the comparison's robust fit, in the arm's own
// robust standard deviations (1.4826 × its median absolute residual, at
// least half the arms' median of those), a round's figure must lie to be
// left out as contaminated.
const DropMADs = 4.5

// RoundComparison judges every pair of a comparison's arms from all the
// arms' rounds at once, where RoundRatioCI95 sees only the pair's own.
//
// The model is two-way within a start and across starts. The log figure
// of arm a in round r of start s is
//
//	y[a][s][r] = m[a] + g[s] + u[a][s] + c[s][r] + e[a][s][r]
//
// where c[s][r] is what the machine did to the whole round (it cancels
// between arms, as pairing by round does), u[a][s] is what start s did
// to arm a (JIT decisions, memory layout) and e[a][s][r] the round's
// noise. Arm a's location in start s, l[a][s], is the least-squares fit
// of m[a]+g[s]+u[a][s] with the round effects c[s][r] removed (with no
// round missing, the mean of its rounds); its variance around m[a]+g[s]
// is τ²[a] = σ²b[a] + σ²w[a]/R, and arms may differ in both parts (JVMs
// are noisier than the rest). A pair's log ratio is the mean over starts
// of l[a][s] - l[b][s], with variance (τ²[a] + τ²[b]) / S.
//
// The rounds' part σ²w[a]/R is estimated per arm from the residuals of
// the least-squares fit within each start (many degrees of freedom). The
// start effects are learnt from the arm × start interaction of the
// locations (the residuals of l after removing arms' and starts' means),
// in two ways:
//
//   - the pool: the interaction's mean square, less the arms' mean
//     rounds' part, is the start effect's variance σ²b common to all arms
//     ((A-1)(S-1) degrees of freedom: 5 for six arms and two starts,
//     t = 2.57, where the pair alone has 1, t = 12.7); the pair's start
//     variance is then σ²w[a]/R + σ²w[b]/R + 2σ̂²b;
//   - per arm: Shukla's unbiased estimator of each row's variance in a
//     two-way table without replication (Heredity 29, 1972), with A arms
//     and S starts τ̂²[a] = A/((A-2)(S-1)) Σs z²[a][s] - Σ z²/((A-1)(A-2)(S-1)),
//     which holds whatever the arms' variances, with about 1.43 degrees
//     of freedom for a pair of six arms and two starts (perArmDF).
//
// A pair takes the pool unless its own arms' τ̂²[a] + τ̂²[b] exceed it;
// then it takes that, with Satterthwaite's degrees of freedom over the
// pool and the excess. Arms with larger start effects than the rest
// (JVMs) thus widen their own pairs instead of hiding in the pool: with
// three arms at 2% and three at 6%, two starts of five rounds, the noisy
// pairs' intervals cover about 94% of the time, the mixed ones 96%, the
// quiet ones 99% (the price of the guard). It is not perfect: one arm
// with start effects five times the others' is covered about 91% of the
// time. Plugging the per-arm estimates into the pool's degrees of
// freedom (Satterthwaite) would bring that to 93% and the noisy pairs to
// 95%, but it takes about two of the pool's five degrees of freedom even
// where the arms are alike (each τ̂² has 1.4), widening every interval by
// a sixth; this estimator does not. No variance is ever taken
// smaller because the pair's two starts happen to agree: the pair's own
// estimate can only widen its interval.
//
// With fewer than three arms in every start there is no interaction to
// learn from, and a pair gets RoundRatioCI95 on its rounds (with the
// contaminated ones left out).
//
// Contaminated rounds (a round where one arm got a fraction of its CPU)
// are found before any of this, per start, from a median polish of the
// arms × rounds table (Tukey): a figure whose residual is beyond DropMADs
// of its arm's robust spread is left out, and the round counted in
// Dropped. The spread is the median absolute residual, which one bad
// round in ten does not move, so a bad round does not widen the
// yardstick that judges it; the other arms in the same round tell the
// machine's share of that round apart from the arm's own. A figure left
// out is a missing cell; the least-squares fit recovers the arm's
// location from its other rounds. Where most arms in a round were
// disturbed, the polish reads the disturbance as the round's and may
// leave out an arm that was not: judging rounds by their own records
// (the service's share of its CPU) comes first, and this catches what
// those records do not show.
type RoundComparison struct {
	arms  []string
	y     map[string][][]float64 // log figures, NaN where missing or dropped
	drop  map[string][][]bool
	loc   map[string][]float64 // l[a][s], NaN where the arm has no round in s
	full  []string             // arms with a location in every start
	tau2  map[string]float64   // Shukla's τ̂²[a], for the arms in full
	wv    map[string]float64   // the rounds' part of τ²[a], σ̂²w[a]/R
	pool  float64              // mean τ̂² over the arms in full
	poolW float64              // mean σ̂²w/R over the arms in full
	cells map[string]int
}

// NewRoundComparison fits the comparison's model to figs, every arm's
// figure in round r of start s (figs[arm][s][r]; rounds pair by index
// within a start, 0 where the arm has none: a round the caller judged
// disturbed from its own records is passed as 0). Any slice type of
// [][]float64 serves as the figures.
func NewRoundComparison[F ~[][]float64](figs map[string]F) *RoundComparison {
	c := &RoundComparison{y: map[string][][]float64{}, drop: map[string][][]bool{},
		loc: map[string][]float64{}, wv: map[string]float64{}, tau2: map[string]float64{}, cells: map[string]int{}}
	starts := 0
	for a, f := range figs {
		c.arms = append(c.arms, a)
		starts = max(starts, len(f))
	}
	sort.Strings(c.arms)
	rounds := make([]int, starts)
	for _, f := range figs {
		for s := range f {
			rounds[s] = max(rounds[s], len(f[s]))
		}
	}
	for _, a := range c.arms {
		ys, ds := make([][]float64, starts), make([][]bool, starts)
		for s := range starts {
			ys[s], ds[s] = make([]float64, rounds[s]), make([]bool, rounds[s])
			for r := range rounds[s] {
				ys[s][r] = math.NaN()
				if s < len(figs[a]) && r < len(figs[a][s]) && figs[a][s][r] > 0 {
					ys[s][r] = math.Log(figs[a][s][r])
				}
			}
		}
		c.y[a], c.drop[a] = ys, ds
	}
	c.dropContaminated(starts)
	for a := range c.y {
		c.loc[a] = make([]float64, starts)
	}
	// Per arm, the residuals' sum of squares and count, then the rounds'
	// part of a start's variance, σ̂²w/R.
	wss, wn, within := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for s := range starts {
		loc, res := fitAdditive(c.arms, c.y, s, false)
		for i, a := range c.arms {
			c.loc[a][s] = loc[i]
			for _, v := range res[i] {
				if !math.IsNaN(v) {
					wss[a] += v * v
					wn[a]++
				}
			}
		}
	}
	for _, a := range c.arms {
		for s := range starts {
			if !math.IsNaN(c.loc[a][s]) {
				c.cells[a]++
			}
		}
		if c.cells[a] == starts && starts > 0 {
			c.full = append(c.full, a)
		}
		if n := wn[a]; n > 0 {
			// Residuals of an A × R additive fit keep (A-1)(R-1)/(AR) of
			// the noise's variance; the location averages n/starts rounds.
			A, R := float64(len(c.arms)), n/float64(starts)
			if A > 1 && R > 1 {
				within[a] = wss[a] / (n * (A - 1) * (R - 1) / (A * R)) / R
			}
		}
	}
	A, S := len(c.full), starts
	if A < 3 || S < 2 {
		return c
	}
	// The arm × start interaction of the locations.
	am, sm, gm := make([]float64, A), make([]float64, S), 0.0
	for i, a := range c.full {
		for s := range S {
			am[i] += c.loc[a][s] / float64(S)
			sm[s] += c.loc[a][s] / float64(A)
			gm += c.loc[a][s] / float64(A*S)
		}
	}
	q, ss := make([]float64, A), 0.0
	for i, a := range c.full {
		for s := range S {
			z := c.loc[a][s] - am[i] - sm[s] + gm
			q[i] += z * z
			ss += z * z
		}
	}
	fa, fs := float64(A), float64(S)
	for i, a := range c.full {
		c.tau2[a] = fa/((fa-2)*(fs-1))*q[i] - ss/((fa-1)*(fa-2)*(fs-1))
		c.wv[a] = within[a]
		c.pool += c.tau2[a] / fa
		c.poolW += within[a] / fa
	}
	return c
}

// dropContaminated marks, per start, the figures beyond DropMADs of
// their arm's robust spread from a median polish, and removes them.
func (c *RoundComparison) dropContaminated(starts int) {
	res := map[string][][]float64{}
	absRes := map[string][]float64{}
	for s := range starts {
		_, r := fitAdditive(c.arms, c.y, s, true)
		for i, a := range c.arms {
			res[a] = append(res[a], r[i])
			for _, v := range r[i] {
				// The polish leaves some residuals exactly 0 (a row's or a
				// column's median); they say nothing of the spread.
				if !math.IsNaN(v) && math.Abs(v) > 1e-9 {
					absRes[a] = append(absRes[a], math.Abs(v))
				}
			}
		}
	}
	scales := map[string]float64{}
	var all []float64
	for _, a := range c.arms {
		if len(absRes[a]) >= 4 {
			scales[a] = 1.4826 * Median(absRes[a])
			all = append(all, scales[a])
		}
	}
	// An arm whose rounds happen to agree closely is judged by no less
	// than half the arms' typical spread: a spread from ten residuals
	// or so can come out small by chance.
	floor := Median(all) / 2
	for _, a := range c.arms {
		scale, ok := scales[a]
		scale = math.Max(scale, floor)
		if !ok || scale <= 0 {
			continue
		}
		for s := range starts {
			for r, v := range res[a][s] {
				if math.Abs(v) > DropMADs*scale {
					c.drop[a][s][r] = true
					c.y[a][s][r] = math.NaN()
				}
			}
		}
	}
}

// fitAdditive fits y[a][s][r] = l[a] + c[r] over the arms × rounds table
// of start s, by median polish (robust) or least squares, on the cells
// present; it returns each arm's location (NaN for an arm without a
// round) and the residuals (NaN where missing).
func fitAdditive(arms []string, y map[string][][]float64, s int, robust bool) ([]float64, [][]float64) {
	A := len(arms)
	R := 0
	for _, a := range arms {
		R = max(R, len(y[a][s]))
	}
	res := make([][]float64, A)
	loc := make([]float64, A)
	for i, a := range arms {
		res[i] = slices.Clone(y[a][s])
		for len(res[i]) < R {
			res[i] = append(res[i], math.NaN())
		}
	}
	center := Mean
	if robust {
		center = Median
	}
	present := func(xs []float64) []float64 {
		var out []float64
		for _, v := range xs {
			if !math.IsNaN(v) {
				out = append(out, v)
			}
		}
		return out
	}
	col := make([]float64, A)
	for iter := range 200 {
		moved := 0.0
		for i := range A {
			p := present(res[i])
			if len(p) == 0 {
				continue
			}
			m := center(p)
			loc[i] += m
			for r := range R {
				res[i][r] -= m
			}
			moved = math.Max(moved, math.Abs(m))
		}
		for r := range R {
			for i := range A {
				col[i] = res[i][r]
			}
			p := present(col)
			if len(p) == 0 {
				continue
			}
			m := center(p)
			for i := range A {
				res[i][r] -= m
			}
			moved = math.Max(moved, math.Abs(m))
		}
		if moved < 1e-12 || robust && iter >= 9 {
			break
		}
	}
	for i := range A {
		if len(present(res[i])) == 0 {
			loc[i] = math.NaN()
		}
	}
	return loc, res
}

// Arms lists the comparison's arms, sorted.
func (c *RoundComparison) Arms() []string { return c.arms }

// Dropped reports whether round r of start s of arm was left out as
// contaminated.
func (c *RoundComparison) Dropped(arm string, s, r int) bool {
	d := c.drop[arm]
	return s < len(d) && r < len(d[s]) && d[s][r]
}

// Ratio is the ratio of arm a's figure to arm b's (a/b) with its 95%
// interval, from the whole comparison (see RoundComparison).
func (c *RoundComparison) Ratio(a, b string) RoundRatio {
	// The pair's own rounds, with the contaminated ones left out: its
	// round-to-round spread, the mirrored pairs, and the fallback.
	fa, fb := c.figures(a), c.figures(b)
	out := RoundRatioCI95(fa, fb)
	out.Arms = 2
	for s := range min(len(c.drop[a]), len(c.drop[b])) {
		for r := range min(len(c.drop[a][s]), len(c.drop[b][s])) {
			if c.drop[a][s][r] || c.drop[b][s][r] {
				out.Dropped++
			}
		}
	}
	_, okA := c.tau2[a]
	_, okB := c.tau2[b]
	if !okA || !okB || a == b || out.Starts < 2 {
		return out
	}
	S := len(c.loc[a])
	var d []float64
	for s := range S {
		d = append(d, c.loc[a][s]-c.loc[b][s])
	}
	mu := Mean(d)
	perStart := float64(out.Rounds) / float64(out.Starts)
	// The rounds' part of a start's variance, from the comparison's fit:
	// many more degrees of freedom than the pair's own rounds have.
	w := c.wv[a] + c.wv[b]
	// The pool: every arm's start effect, the rounds' part the pair's own.
	v, df := w+2*math.Max(0, c.pool-c.poolW), float64((len(c.full)-1)*(S-1))
	if own := c.tau2[a] + c.tau2[b]; own > v {
		// The pair's own arms vary more than the pool says: their
		// excess over it enters with the per-arm estimate's degrees of
		// freedom (Satterthwaite over the two parts).
		// The two parts share their data, so the sum has no more
		// degrees of freedom than the pool.
		x, dfa := own-v, perArmDF(len(c.full), S)
		df = math.Min(df, own*own/(v*v/df+x*x/dfa))
		v = own
	}
	se := math.Sqrt(v / float64(S))
	h := tQuantile975f(df) * se
	out.Ratio, out.Low, out.High = math.Exp(mu), math.Exp(mu-h), math.Exp(mu+h)
	out.DF = max(1, int(df))
	out.EffectiveDF = df
	out.DFPerStart = df / float64(S-1)
	out.Arms = len(c.full)
	out.BetweenSD = math.Sqrt(math.Max(0, v-w))
	out.WithinSD, out.Paired = math.Sqrt(w*perStart), false
	return out
}

// figures are arm's figures with the dropped rounds at 0.
func (c *RoundComparison) figures(arm string) [][]float64 {
	y := c.y[arm]
	out := make([][]float64, len(y))
	for s := range y {
		out[s] = make([]float64, len(y[s]))
		for r, v := range y[s] {
			if !math.IsNaN(v) {
				out[s][r] = math.Exp(v)
			}
		}
	}
	return out
}

// perArmDF is the degrees of freedom of Shukla's τ̂²[a] + τ̂²[b] among
// A arms and S starts where the arms' variances are equal. That sum is
// Σ w[c] Σs z²[c][s] with z = (P_A ⊗ P_S) l, P_n = I - J/n the centring
// matrix; with K = P_A diag(w) P_A its mean is (S-1) τ² tr K and its
// variance 2 (S-1) τ⁴ tr K², so a scaled χ² of the same two moments has
// (S-1) (tr K)² / tr K² degrees of freedom (1.43 for six arms and two
// starts, against 2 were the start's common effect known).
func perArmDF(A, S int) float64 {
	fa, fs := float64(A), float64(S)
	c1, c2 := fa/((fa-2)*(fs-1)), 1/((fa-1)*(fa-2)*(fs-1))
	w := make([]float64, A)
	sw := 0.0
	for i := range A {
		w[i] = -2 * c2
		if i < 2 {
			w[i] += c1
		}
		sw += w[i]
	}
	// K[i][j] = w_i δij - (w_i + w_j)/A + Σw/A².
	tr, tr2 := 0.0, 0.0
	for i := range A {
		for j := range A {
			k := -(w[i]+w[j])/fa + sw/(fa*fa)
			if i == j {
				k += w[i]
				tr += k
			}
			tr2 += k * k
		}
	}
	return math.Max(1, (fs-1)*tr*tr/tr2)
}

// tQuantile975f is Student's t 97.5% quantile for real degrees of
// freedom (at least 1), by bisection on the incomplete beta.
func tQuantile975f(df float64) float64 {
	df = math.Max(1, df)
	if df == math.Trunc(df) && df <= 1000 {
		return tQuantile975(int(df))
	}
	lo, hi := 1.9, 13.0
	for range 60 {
		t := (lo + hi) / 2
		// The two-sided tail beyond ±t.
		if regIncBeta(df/2, 0.5, df/(df+t*t)) > 0.05 {
			lo = t
		} else {
			hi = t
		}
	}
	return (lo + hi) / 2
}
