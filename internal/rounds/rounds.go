package rounds

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
)

// RoundOrder is the order of round r (1 for the first) of n arms, given
// the last round's: a fresh random order in odd rounds, the reverse of
// the last in even ones. Each pair of rounds then measures every arm
// twice, symmetrically about the pair's middle, so a machine whose speed
// drifts linearly (a neighbour ramping up or down) costs each arm the
// same within the pair, where two random orders would have favoured one
// arm by chance. The first order of each pair stays random (Abedi and
// Brecht's randomized interleaving); the mirror is the ABBA design of
// crossover trials.
func RoundOrder(last []int, n, r int, rng *rand.Rand) []int {
	if r%2 == 0 && len(last) == n {
		rev := make([]int, n)
		for i, v := range last {
			rev[n-1-i] = v
		}
		return rev
	}
	return rng.Perm(n)
}

// RoundsWanted is how many rounds a start should have, by the cheapest
// plan (stats.RoundRatio.Plan) that would bring every adjacent pair
// within the plan's precision, given the variances the rounds so far
// show and what a start and a round cost here: rounds are cheap but
// only starts narrow t and average the starts' own differences, so a
// start whose rounds are noisy stops after the share of rounds the plan
// gives it, and the next start begins. A pair no plan within trials_max
// can resolve asks for no rounds beyond the minimum; without a verdict
// yet it is unbounded (the budget and precision decide).
func RoundsWanted(c *results.Comparison, p *plan.Plan, startCost, roundCost time.Duration) int {
	v := Judge(c, p)
	if v == nil || len(v.Pairs) == 0 {
		return math.MaxInt
	}
	want := plan.MinRounds
	for _, pr := range decisive(c, v) {
		rr := stats.RoundRatio{BetweenSD: pr.BetweenSD, WithinSD: pr.WithinSD, DFPerStart: pr.DFPerStart}
		if _, n, ok := rr.Plan(c.Precision, startCost.Seconds(), roundCost.Seconds(), plan.MinRounds, p.MaxStarts()); ok {
			want = max(want, n)
		}
	}
	return want
}

// StartPrecise reports whether, on start's rounds alone, every adjacent
// pair's interval is within ±halfWidth.
func StartPrecise(c *results.Comparison, start int, halfWidth float64) bool {
	one := *c
	one.Rounds = nil
	for _, r := range c.Rounds {
		if r.Start == start {
			one.Rounds = append(one.Rounds, r)
		}
	}
	v := JudgeWith(&one, halfWidth, "")
	if v == nil || len(decisive(c, v)) == 0 {
		return false
	}
	for _, pr := range decisive(c, v) {
		if !(pr.HalfWidth <= halfWidth) {
			return false
		}
	}
	return true
}

// Bought records in v what a time budget bought: the widest adjacent
// pair's half-width, and about what budget would bring every pair
// within precision by the variances measured (stats.Budget, with a
// start's setup and a round at the costs measured), searched from a
// quarter more than budget up to sixteen times it (-1: none found
// there). The search never answers the budget itself: that budget was
// spent and did not reach the precision, whatever the variances say a
// better split of it would have done.
func Bought(v *results.Verdict, budget time.Duration, precision float64, setup, round time.Duration, maxStarts int) {
	v.BudgetSeconds = budget.Seconds()
	var pairs []stats.RoundRatio
	for _, pr := range v.Pairs {
		if w := max(pr.HalfWidth, pr.RoundsFloor); w > v.Bought {
			v.Bought = w
		}
		pairs = append(pairs, stats.RoundRatio{BetweenSD: pr.BetweenSD, WithinSD: pr.WithinSD, DFPerStart: pr.DFPerStart})
	}
	if v.Bought <= precision || setup <= 0 || round <= 0 || len(pairs) == 0 {
		return
	}
	for secs := 1.25 * budget.Seconds(); secs <= 16*budget.Seconds(); secs *= 1.25 {
		if _, _, hw, ok := stats.Budget(pairs, secs, setup.Seconds(), round.Seconds(), plan.MinRounds, maxStarts); ok && hw <= precision {
			v.NeedSeconds = secs
			return
		}
	}
	v.NeedSeconds = -1 // no design within maxStarts starts and sixteen times the budget
}

// Overran records, on a verdict whose plan has a budget, a run that took
// longer than it (took) and how much of that the starts' setups took
// (starting, checking and warming every arm): the budget shares out the
// rounds' time and cannot cut a plan below its starts.
func Overran(v *results.Verdict, budget, took time.Duration, setups []time.Duration) {
	if budget <= 0 || took <= budget {
		return
	}
	v.TookSeconds = took.Seconds()
	var all time.Duration
	for _, s := range setups {
		all += s
	}
	v.SetupsSeconds = all.Seconds()
	v.OverranStarts = len(setups)
}
