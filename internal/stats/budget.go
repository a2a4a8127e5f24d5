package stats

import "math"

// HalfWidthAt is the half-width (0.03 is ±3%) that starts × rounds would
// give with the variances estimated so far, by the arithmetic of Need:
// t·sqrt((BetweenSD² + WithinSD²/rounds)/starts), with the degrees of
// freedom the estimator would have (DFPerStart for every start beyond
// the first). NaN under two starts or one round.
func (r RoundRatio) HalfWidthAt(starts, rounds int) float64 {
	if starts < 2 || rounds < 1 {
		return math.NaN()
	}
	vb, vw := r.BetweenSD*r.BetweenSD, r.WithinSD*r.WithinSD
	return math.Expm1(r.tAt(starts) * math.Sqrt((vb+vw/float64(rounds))/float64(starts)))
}

// Budget is what a time budget buys: the starts and rounds per start, of
// those that fit in seconds (starts × (startCost + rounds × roundCost),
// rounds at least minRounds, starts from 2 to maxStarts), that make the
// worst of pairs' half-widths the narrowest, and that half-width. Every
// round measures every arm, so one design serves all pairs and the worst
// one decides it. ok is false when not even two starts of minRounds fit.
func Budget(pairs []RoundRatio, seconds, startCost, roundCost float64, minRounds, maxStarts int) (starts, rounds int, halfWidth float64, ok bool) {
	halfWidth = math.Inf(1)
	for s := 2; s <= maxStarts; s++ {
		n := int(math.Floor((seconds/float64(s) - startCost) / roundCost))
		if n < minRounds {
			break
		}
		worst := 0.0
		for _, p := range pairs {
			worst = math.Max(worst, p.HalfWidthAt(s, n))
		}
		if worst < halfWidth {
			starts, rounds, halfWidth, ok = s, n, worst, true
		}
	}
	return starts, rounds, halfWidth, ok
}
