package stats

import "math"

// RoundRatio is the ratio of two arms' throughput measured in interleaved
// rounds: every round measures both arms once, in a random order, and the
// rounds run within fresh starts of both.
//
// The estimator is a one-way random-effects model of the per-round log
// ratio d[s][r] = ln(a[s][r] / b[s][r]) = mu + u[s] + e[s][r], where u[s]
// is what start s contributes (JIT decisions, memory layout of both
// processes: variance BetweenSD²) and e[s][r] is the machine's noise from
// round to round (variance WithinSD²). Pairing within a round cancels
// what moves both arms alike (the machine's drift). Each start's mean
// d̄[s] has variance BetweenSD² + WithinSD²/R, so the grand mean's
// standard error is sd(d̄) / √S with S-1 degrees of freedom (Student's t):
// exact under normal effects whatever the split between the two levels,
// and starts, not rounds, narrow it once the between-start part
// dominates. With a single start there is no between-start estimate: the
// interval comes from the rounds alone (Within), covering the machine's
// noise but not a second start's difference. The ratio is the geometric
// mean of the per-round ratios, starts weighted equally.
//
// Rounds come in mirrored pairs (rounds 1 and 2 of a start, 3 and 4, ...:
// the second measures the arms in the reverse of the first's order), so
// a drift that is linear across a pair costs both arms alike over the
// pair, though it still moves each round's ratio. Round-to-round noise
// then overstates what a start's mean sees: the round errors within a
// pair cancel. WithinSD is therefore estimated from the pairs' means
// where a start has two complete pairs or more: the per-round sd that
// would give the pairs' means their observed spread (√2 × their sd),
// equal to the rounds' own sd when rounds are independent, and smaller
// when a pair's two errors cancel. That is the figure the start's mean,
// the between-start estimate and the plans (Need, Plan) depend on.
// RoundSD keeps the rounds' own spread; a single start's interval uses
// it, with the rounds' degrees of freedom.
type RoundRatio struct {
	// Ratio, Low and High are the estimate and its 95% interval.
	Ratio, Low, High float64
	// Starts and Rounds count the starts and paired rounds used.
	Starts, Rounds int
	// DF is the degrees of freedom of the interval's t quantile.
	DF int
	// BetweenSD and WithinSD estimate the standard deviations of the log
	// ratio between starts and between rounds within a start (from the
	// mirrored pairs where there are enough of them; see above).
	BetweenSD, WithinSD float64
	// RoundSD is the sd of the per-round log ratio within a start: the
	// round-to-round noise before pairing.
	RoundSD float64
	// Paired reports that WithinSD comes from the mirrored pairs.
	Paired bool
	// Within reports an interval from one start's rounds alone.
	Within bool
	// Dropped counts the pair's rounds left out because one arm's figure
	// in it was contaminated (RoundComparison); Rounds does not count them.
	Dropped int
	// Arms is how many arms' start effects the interval's variance was
	// learnt from: 2 where the pair's own rounds were all it had.
	Arms int
	// EffectiveDF is the interval's degrees of freedom before DF rounds
	// them down (Satterthwaite's in a RoundComparison; DF otherwise), and
	// DFPerStart what every start beyond the first adds to them (Need and
	// Plan; 0 reads as 1, the pair alone).
	EffectiveDF, DFPerStart float64
}

// tAt is the t quantile an interval from s starts would use.
func (r RoundRatio) tAt(s int) float64 {
	if r.DFPerStart > 0 {
		return tQuantile975f(r.DFPerStart * float64(s-1))
	}
	return tQuantile975(s - 1)
}

// HalfWidth is half the interval's width relative to the ratio (0.03 is
// ±3%); NaN without an interval.
func (r RoundRatio) HalfWidth() float64 {
	if r.DF < 1 || r.Ratio == 0 {
		return math.NaN()
	}
	return (r.High - r.Low) / 2 / r.Ratio
}

// RoundsFloor is the half-width the interval would have were the starts'
// means to differ by no more than the rounds' noise makes them differ
// (WithinSD²/R for R rounds a start, with the interval's own t): a
// start's mean can vary no less than that, and WithinSD is learnt from
// many rounds where the start means' spread has S-1 degrees of freedom.
// Two starts whose means agree by chance give an interval far narrower
// than the rounds allow (measured: bench/README.md, "Where the constants come from"); the interval
// stays as it is (exact over every run, under normal effects), but
// Precise judges against the larger of the two. NaN with fewer than two
// starts.
func (r RoundRatio) RoundsFloor() float64 {
	if r.Starts < 2 || r.Rounds < r.Starts || r.DF < 1 {
		return math.NaN()
	}
	// √(σw²/R / S) with R = Rounds/S rounds a start is σw/√Rounds.
	return math.Expm1(tQuantile975f(r.EffectiveDF) * r.WithinSD / math.Sqrt(float64(r.Rounds)))
}

// Precise reports whether the interval is within ±halfWidth and so is
// its RoundsFloor: a run that stops adding starts once its pairs are
// precise must not stop because two starts happened to agree (what the
// rounds say of a start's mean is what Need and Plan already assume).
func (r RoundRatio) Precise(halfWidth float64) bool {
	if r.DF < 1 || !(r.HalfWidth() <= halfWidth) {
		return false
	}
	f := r.RoundsFloor()
	return math.IsNaN(f) || f <= halfWidth
}

// Significant reports whether the interval excludes 1: the two arms
// differ at the 5% level.
func (r RoundRatio) Significant() bool {
	return r.DF >= 1 && (r.Low > 1 || r.High < 1)
}

// RoundRatioCI95 estimates mean(a)/mean(b) from a[s][r] and b[s][r], the
// two arms' figures in round r of start s (the same round for both). A
// round where either figure is not positive is left out.
func RoundRatioCI95(a, b [][]float64) RoundRatio {
	var means []float64
	var within float64 // sum of squared deviations from each start's mean
	withinDF := 0
	var pairs float64 // the same for the means of each start's complete pairs
	pairsDF := 0
	out := RoundRatio{}
	for s := range min(len(a), len(b)) {
		var d, pm []float64
		for r := range min(len(a[s]), len(b[s])) {
			if a[s][r] > 0 && b[s][r] > 0 {
				d = append(d, math.Log(a[s][r]/b[s][r]))
				if r%2 == 1 && a[s][r-1] > 0 && b[s][r-1] > 0 {
					pm = append(pm, (math.Log(a[s][r-1]/b[s][r-1])+d[len(d)-1])/2)
				}
			}
		}
		if len(d) == 0 {
			continue
		}
		within += sumSquares(d)
		withinDF += len(d) - 1
		if len(pm) >= 2 {
			pairs += sumSquares(pm)
			pairsDF += len(pm) - 1
		}
		means = append(means, Mean(d))
		out.Rounds += len(d)
		out.Starts++
	}
	if out.Starts == 0 {
		return out
	}
	mu := Mean(means)
	out.Ratio, out.Low, out.High = math.Exp(mu), math.Exp(mu), math.Exp(mu)
	if withinDF > 0 {
		out.RoundSD = math.Sqrt(within / float64(withinDF))
	}
	out.WithinSD = out.RoundSD
	if pairsDF > 0 {
		// A pair's mean has variance σ²/2 for independent rounds of
		// variance σ²: report the σ its spread implies.
		out.WithinSD, out.Paired = math.Sqrt(2*pairs/float64(pairsDF)), true
	}
	perStart := float64(out.Rounds) / float64(out.Starts)
	var se float64
	switch {
	case out.Starts >= 2:
		sd := StdDev(means)
		out.DF = out.Starts - 1
		se = sd / math.Sqrt(float64(out.Starts))
		out.BetweenSD = math.Sqrt(math.Max(0, sd*sd-out.WithinSD*out.WithinSD/perStart))
	case withinDF > 0:
		// One start: the rounds' own spread, with its degrees of freedom
		// (the pairs' would have half). Where a pair's errors cancel it
		// overstates the mean's noise, which errs on the safe side.
		out.Within = true
		out.DF = withinDF
		se = out.RoundSD / math.Sqrt(float64(out.Rounds))
	default:
		return out
	}
	h := tQuantile975(out.DF) * se
	out.Low, out.High = math.Exp(mu-h), math.Exp(mu+h)
	out.EffectiveDF = float64(out.DF)
	return out
}

// sumSquares is the sum of the squared deviations of xs from their mean.
func sumSquares(xs []float64) float64 {
	m, ss := Mean(xs), 0.0
	for _, v := range xs {
		ss += (v - m) * (v - m)
	}
	return ss
}

// Need estimates how many starts, and rounds in each, would bring the
// interval within ±halfWidth with the variances estimated so far: the
// fewest starts (at least two) for which some number of rounds up to
// maxRounds suffices. ok is false when maxRounds rounds in up to 50
// starts would not.
func (r RoundRatio) Need(halfWidth float64, maxRounds int) (starts, rounds int, ok bool) {
	h := math.Log1p(halfWidth)
	vb, vw := r.BetweenSD*r.BetweenSD, r.WithinSD*r.WithinSD
	for s := 2; s <= 50; s++ {
		// t·sqrt((vb + vw/R)/S) <= h  <=>  vw/R <= S(h/t)² - vb
		room := float64(s)*math.Pow(h/r.tAt(s), 2) - vb
		if room <= 0 {
			continue
		}
		n := max(2, int(math.Ceil(vw/room)))
		if n <= maxRounds {
			return s, n, true
		}
	}
	return 0, 0, false
}

// Plan is the cheapest way, by Need's arithmetic, to bring the interval
// within ±halfWidth with the variances estimated so far: the starts and
// rounds per start that minimise starts×startCost + starts×rounds×roundCost
// (Kalibera and Jones's optimisation of a two-level experiment, with
// Student's t for the few starts a run affords), rounds at least
// minRounds, starts from 2 to maxStarts. Where the between-start variance
// is small, more rounds in fewer starts are cheap but every start fewer
// widens t (12.7 with two starts, 4.3 with three); where it is large,
// only starts help. ok is false when no plan within maxStarts reaches it.
func (r RoundRatio) Plan(halfWidth, startCost, roundCost float64, minRounds, maxStarts int) (starts, rounds int, ok bool) {
	h := math.Log1p(halfWidth)
	vb, vw := r.BetweenSD*r.BetweenSD, r.WithinSD*r.WithinSD
	best := math.Inf(1)
	for s := 2; s <= maxStarts; s++ {
		room := float64(s)*math.Pow(h/r.tAt(s), 2) - vb
		if room <= 0 {
			continue
		}
		n := max(minRounds, int(math.Ceil(vw/room)))
		if cost := float64(s) * (startCost + float64(n)*roundCost); cost < best {
			best, starts, rounds, ok = cost, s, n, true
		}
	}
	return starts, rounds, ok
}
