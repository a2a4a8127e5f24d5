package rounds

import (
	"math"
	"slices"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
)

// Slower judges the plan's fail_if slower_than on c: every arm but the
// A/A twin against the baseline arm (plan.Baseline), by the same
// estimator as the verdict's pairs, whether adjacent in the ranking or
// not. Nil when the plan has no slower_than or c no rounds.
func Slower(c *results.Comparison, p *plan.Plan) []results.Slower {
	base := p.Baseline()
	if p.SlowerThan <= 0 || len(c.Rounds) == 0 || !slices.Contains(c.Arms, base) {
		return nil
	}
	twin := ""
	if p.Rounds.AA && len(c.Arms) >= 2 {
		twin = c.Arms[len(c.Arms)-1]
	}
	open := c.Model == "open"
	metric, pick := "throughput", func(a results.ArmRound) float64 { return a.Throughput }
	if open {
		metric, pick = "p99 latency", func(a results.ArmRound) float64 { return a.P99Ms }
	}
	figs, _ := collect(c, pick)
	cmp := stats.NewRoundComparison(figs)
	var out []results.Slower
	for _, arm := range c.Arms {
		if arm == base || arm == twin || figs[arm].geoMean() <= 0 || figs[base].geoMean() <= 0 {
			continue
		}
		// How many times slower arm is: less throughput, or more latency.
		r := cmp.Ratio(base, arm)
		if open {
			r = cmp.Ratio(arm, base)
		}
		out = append(out, JudgeSlower(results.Slower{Baseline: base, Arm: arm, Metric: metric,
			Threshold: float64(p.SlowerThan), Ratio: r.Ratio, Low: r.Low, High: r.High}))
	}
	return out
}

// JudgeSlower sets s's outcome from its interval: beyond the threshold
// only when the whole interval is (the run fails then, and only then);
// not within the precision when it reaches past the threshold but not
// wholly (or there is no interval); else faster, no significant
// difference, or slower within the threshold.
func JudgeSlower(s results.Slower) results.Slower {
	limit := 1 + s.Threshold
	s.Crossed = false
	switch {
	case math.IsNaN(s.Low) || math.IsNaN(s.High) || s.High <= 0:
		s.Outcome = results.SlowerUnsure
	case s.Low > limit:
		s.Outcome, s.Crossed = results.SlowerBeyond, true
	case s.High > limit:
		s.Outcome = results.SlowerUnsure
	case s.High < 1:
		s.Outcome = results.SlowerFaster
	case s.Low <= 1:
		s.Outcome = results.SlowerSame
	default:
		s.Outcome = results.SlowerWithin
	}
	return s
}
