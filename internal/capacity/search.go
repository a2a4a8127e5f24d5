// Package capacity is the arithmetic of a capacity search at an
// objective: the search's steps, each probe's judgement, the capacity
// estimated from the starts' brackets with its interval, and the ranking
// of capacities. It runs nothing.
package capacity

import (
	"fmt"
	"math"
	"sort"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
)

// Bounds of the capacity search's rates, whatever a service does.
const (
	// MinProbeRate is the lowest rate probed: a service failing the
	// objective there has no capacity worth the name.
	MinProbeRate = 1.0
	// MaxProbeRate is the highest rate probed: beyond it the search
	// stops with a lower bound.
	MaxProbeRate = 2e6
	// BracketGrowth is the factor a search with no estimate brackets by
	// (doubling and halving); RefineGrowth the one a later start uses
	// from the previous start's estimate.
	BracketGrowth = 2.0
	RefineGrowth  = 1.25
	// MaxProbeUsers is the most closed-model users probed: beyond it the
	// search stops with a lower bound.
	MaxProbeUsers = 100_000
)

// Scale is what a search varies: the open model's arrival rate, or the
// closed model's users, whole numbers from one up.
type Scale struct {
	unit, noun string
	min, max   float64
	whole      bool
}

var (
	rateScale  = Scale{unit: results.UnitRate, noun: "rate", min: MinProbeRate, max: MaxProbeRate}
	usersScale = Scale{unit: results.UnitUsers, noun: "number of users", min: 1, max: MaxProbeUsers, whole: true}
)

// ScaleOf is the scale of a capacity in unit.
func ScaleOf(unit string) Scale {
	if unit == results.UnitUsers {
		return usersScale
	}
	return rateScale
}

// format writes v in the scale's unit: "312.5 req/s", "40 users".
func (sc Scale) format(v float64) string {
	if sc.whole {
		return fmt.Sprintf("%.0f %s", v, sc.unit)
	}
	return fmt.Sprintf("%.1f %s", v, sc.unit)
}

// up is the next load above pass, by growth; down the next below top.
// Whole loads move by at least one.
func (sc Scale) up(pass, growth float64) float64 {
	if sc.whole {
		return math.Max(pass+1, math.Round(pass*growth))
	}
	return pass * growth
}

func (sc Scale) down(top, growth float64) float64 {
	if sc.whole {
		return math.Min(top-1, math.Round(top/growth))
	}
	return top / growth
}

// mid is the bisection's next load between pass and top.
func (sc Scale) mid(pass, top float64) float64 {
	if sc.whole {
		return math.Floor((pass + top) / 2)
	}
	return (pass + top) / 2
}

// Search is one arm's capacity search in one start: bracket the
// objective's edge by growing or shrinking the rate by a factor until one
// rate passes and one fails, then bisect until the lowest failing rate
// is within resolution of the highest passing one. A generator-limited
// probe is a ceiling the search cannot see past: it bisects below it,
// and the result is a lower bound. On the users scale the same holds of
// whole numbers of users: the search also ends when the failing number
// is one above the passing one.
type Search struct {
	sc                 Scale
	resolution, growth float64
	maxProbes          int
	// next is the rate to probe next.
	next float64
	// pass is the highest passing rate, fail the lowest failing one
	// (the service's), ceiling the lowest generator-limited one; 0: none.
	pass, fail, ceiling float64
	failWhy, ceilWhy    string
	probes              int
	// stop says why the search ended without a bracket; "" otherwise.
	stop string
}

func NewSearch(sc Scale, start, resolution, growth float64, maxProbes int) *Search {
	if sc.whole {
		start = math.Round(start)
	}
	return &Search{sc: sc, next: math.Min(math.Max(start, sc.min), sc.max), resolution: resolution, growth: growth, maxProbes: maxProbes}
}

// top is the lowest rate known not to pass: a failing rate or the
// generator's ceiling, whichever is lower (0: none).
func (s *Search) top() float64 {
	switch {
	case s.fail == 0:
		return s.ceiling
	case s.ceiling == 0:
		return s.fail
	}
	return math.Min(s.fail, s.ceiling)
}

// Done reports whether the search is over: bracketed to the resolution,
// or stopped.
func (s *Search) Done() bool {
	return s.stop != "" || s.reached()
}

// reached reports whether the search bracketed the edge to its
// resolution.
func (s *Search) reached() bool {
	t := s.top()
	return s.pass > 0 && t > 0 && ((t-s.pass)/s.pass <= s.resolution || s.sc.whole && t-s.pass <= 1)
}

// Record takes the outcome of the probe at rate and sets the next rate.
func (s *Search) Record(rate float64, pass, generatorLimited bool, why string) {
	s.probes++
	switch {
	case generatorLimited:
		if s.ceiling == 0 || rate < s.ceiling {
			s.ceiling, s.ceilWhy = rate, why
		}
	case pass:
		s.pass = math.Max(s.pass, rate)
	default:
		if s.fail == 0 || rate < s.fail {
			s.fail, s.failWhy = rate, why
		}
	}
	t := s.top()
	switch {
	case s.Done():
		return
	case s.pass == 0:
		s.next = s.sc.down(t, s.growth)
	case t == 0:
		s.next = s.sc.up(s.pass, s.growth)
	default:
		s.next = s.sc.mid(s.pass, t)
	}
	switch {
	case s.next < s.sc.min:
		s.stop = fmt.Sprintf("failed the objective at every %s down to %s", s.sc.noun, s.sc.format(t))
	case s.next > s.sc.max:
		s.stop = fmt.Sprintf("passed at %.0f %s, the search's highest %s", s.pass, s.sc.unit, s.sc.noun)
	case s.probes >= s.maxProbes:
		s.stop = fmt.Sprintf("stopped after %d probes (capacity.max_probes)", s.probes)
	}
}

// Bracket is the search's outcome in start.
func (s *Search) Bracket(start int) results.Bracket {
	b := results.Bracket{Start: start, Pass: s.pass, Fail: s.top(), Probes: s.probes, Why: s.failWhy}
	if s.ceiling > 0 && (s.fail == 0 || s.ceiling < s.fail) {
		b.GeneratorLimited, b.Why = true, s.ceilWhy
	}
	if !s.reached() {
		b.Stopped = s.stop
	}
	return b
}

// Estimate derives c's capacity and interval from its starts' brackets:
//
//   - Each start whose search bracketed the service's edge gives a
//     midpoint m = (pass+fail)/2 and a half-width h = (fail-pass)/2.
//   - The capacity is the mean of the midpoints over starts; its interval
//     is the 95% t interval of that mean over the starts (the variance
//     between fresh starts), widened on each side by the mean half-width
//     (the bisection's own uncertainty). With one start it is that
//     start's bracket [pass, fail].
//   - A start whose edge the generator hid (a generator-limited probe
//     below any failing rate), or whose search passed at every rate it
//     tried, makes the capacity a lower bound: the lowest of the starts'
//     highest passing rates, with the reason.
//   - A start whose every probe the generator limited says nothing of the
//     service: it is left out, and makes the capacity a lower bound (with
//     no figure when every start was so).
//   - A start that passed at no rate it tried gives no capacity (Rate 0),
//     with the failing rate and why.
func Estimate(c *results.Capacity) {
	c.Rate, c.Low, c.High, c.LowerBound, c.Reason, c.Failed, c.FailedWhy = 0, 0, 0, false, "", 0, ""
	// The RSS at the highest passing probe, for sizing.
	best := 0.0
	for _, pr := range c.Probes {
		if pr.Pass && pr.Rate >= best && pr.RSSBytes > 0 {
			best, c.RSSBytes = pr.Rate, pr.RSSBytes
		}
	}
	if len(c.Brackets) == 0 {
		return
	}
	sc := ScaleOf(c.Units())
	var mids, halves []float64
	lowest := math.Inf(1)
	failedEverywhere := ""
	for _, b := range c.Brackets {
		if b.Fail > 0 && !b.GeneratorLimited && (c.Failed == 0 || b.Fail < c.Failed) {
			c.Failed, c.FailedWhy = b.Fail, b.Why
		}
		switch {
		case b.Pass == 0 && b.GeneratorLimited:
			// The generator limited every rate this start tried: it says
			// nothing of the service, and bounds nothing.
			if !c.LowerBound {
				c.LowerBound, c.Reason = true, fmt.Sprintf("start %d: the generator limited every %s it tried, down to %.0f %s (%s)", b.Start, sc.noun, b.Fail, sc.unit, b.Why)
			}
			continue
		case b.Pass == 0:
			if failedEverywhere == "" {
				failedEverywhere = fmt.Sprintf("start %d failed the objective at every %s it tried, down to %s (%s)", b.Start, sc.noun, sc.format(b.Fail), firstOf(b.Why, b.Stopped))
			}
		case b.GeneratorLimited:
			if !c.LowerBound || c.Reason == "" {
				c.LowerBound, c.Reason = true, b.Why
			}
		case b.Fail == 0:
			if !c.LowerBound || c.Reason == "" {
				c.LowerBound, c.Reason = true, b.Stopped
			}
		default:
			mids = append(mids, (b.Pass+b.Fail)/2)
			halves = append(halves, (b.Fail-b.Pass)/2)
		}
		lowest = math.Min(lowest, b.Pass)
	}
	switch {
	case failedEverywhere != "":
		// A start found no passing rate at all: no capacity, and a lower
		// bound means nothing.
		c.LowerBound, c.Reason = false, failedEverywhere
		return
	case c.LowerBound && math.IsInf(lowest, 1):
		// Every start was the generator's: no figure at all.
		return
	case c.LowerBound:
		c.Rate, c.Low = lowest, lowest
		return
	}
	iv := stats.CI95(mids)
	h := stats.Mean(halves)
	c.Rate = iv.Mean
	c.Low, c.High = math.Max(iv.Low-h, 0), iv.High+h
}

// firstOf is the first of its arguments that is not empty.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// Judge ranks the capacities of one workload and gives every
// adjacent pair the ratio of their capacities with an interval, paired
// by start: the log ratio of the starts' midpoints, its 95% t interval
// over the starts, widened by both arms' relative half-brackets (with
// one start, the brackets alone: [pass_a/fail_b, fail_a/pass_b]). Lower
// bounds rank by their bound and their pairs say so.
func Judge(workload, objective string, caps []*results.Capacity) *results.CapacityVerdict {
	v := &results.CapacityVerdict{Workload: workload, Objective: objective, Verdict: results.Verdict{Metric: "capacity"}}
	var ranked []*results.Capacity
	for _, c := range caps {
		if c.Rate > 0 {
			ranked = append(ranked, c)
		}
		for _, p := range c.Probes {
			v.MeasuredSeconds += p.Seconds
		}
		if c.LowerBound && c.Rate > 0 {
			v.LowerBounds = append(v.LowerBounds, fmt.Sprintf("%s's capacity is a lower bound, at least %.0f %s: %s", c.Arm, c.Low, c.Units(), c.Reason))
		}
	}
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].Rate > ranked[j].Rate })
	for _, c := range ranked {
		v.Ranking = append(v.Ranking, c.Arm)
	}
	for i := 0; i+1 < len(ranked); i++ {
		a, b := ranked[i], ranked[i+1]
		pr := capacityRatio(a, b)
		v.Pairs = append(v.Pairs, pr)
		if a.LowerBound || b.LowerBound {
			v.LowerBounds = append(v.LowerBounds, fmt.Sprintf("%s against %s: a capacity is a lower bound, so the ratio is only bounded on that side", a.Arm, b.Arm))
		}
	}
	return v
}

// capacityRatio is a's capacity over b's with its interval, paired by
// start.
func capacityRatio(a, b *results.Capacity) results.PairRatio {
	pr := results.PairRatio{Better: a.Arm, Worse: b.Arm, Ratio: a.Rate / b.Rate}
	ba, bb := map[int]results.Bracket{}, map[int]results.Bracket{}
	for _, x := range a.Brackets {
		ba[x.Start] = x
	}
	for _, x := range b.Brackets {
		bb[x.Start] = x
	}
	var logs, widen []float64
	var lo, hi float64
	for start, x := range ba {
		y, ok := bb[start]
		if !ok || x.Pass <= 0 || y.Pass <= 0 || x.Fail <= 0 || y.Fail <= 0 {
			continue
		}
		mx, my := (x.Pass+x.Fail)/2, (y.Pass+y.Fail)/2
		logs = append(logs, math.Log(mx/my))
		widen = append(widen, math.Log(x.Fail/x.Pass)/2+math.Log(y.Fail/y.Pass)/2)
		lo, hi = x.Pass/y.Fail, x.Fail/y.Pass
	}
	pr.Starts = len(logs)
	switch len(logs) {
	case 0:
		pr.Low, pr.High = pr.Ratio, pr.Ratio
		pr.OneStart = true
	case 1:
		pr.Low, pr.High, pr.OneStart = lo, hi, true
	default:
		iv := stats.CI95(logs)
		w := stats.Mean(widen)
		pr.Ratio = math.Exp(iv.Mean)
		pr.Low, pr.High = math.Exp(iv.Low-w), math.Exp(iv.High+w)
	}
	if pr.Ratio > 0 {
		pr.HalfWidth = (pr.High - pr.Low) / 2 / pr.Ratio
	}
	pr.Significant = pr.Low > 1 || pr.High < 1
	pr.Rounds = pr.Starts
	return pr
}

// Next is the rate (or number of users) to probe next.
func (s *Search) Next() float64 { return s.next }

// Probes counts the probes recorded so far.
func (s *Search) Probes() int { return s.probes }
