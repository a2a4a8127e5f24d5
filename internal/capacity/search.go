// Package capacity is the way of measuring that finds the highest rate
// (or the most users) at which each stack meets an objective: its runner
// (Run: fresh starts of warm arms, searched together, each start's edge
// held in sustained runs) and its arithmetic (the search's steps, each
// probe's judgement, the capacity estimated from the starts with its
// interval, and the ranking of capacities). A question about how the
// search steps, when it stops, or what is reported is answered here.
package capacity

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/showdownlab/showdown/internal/human"
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
	// LowestShare is the share of a start's first probe below which its
	// search probes nothing: a service failing there has no capacity
	// worth the name, and a search that got there was misled.
	LowestShare = 0.01
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
// and the result is a lower bound. A probe judged the generator's by its
// lateness alone (Probe.Late) is such a ceiling only while no lower rate
// was as late (LatenessFall): lateness that does not fall when the rate
// falls is the host's, and the probe counts by the objective alone
// (Probe.Met). The search probes nothing below LowestShare of its first
// rate and at most maxProbes rates. On the users scale the same holds of
// whole numbers of users: the search also ends when the failing number
// is one above the passing one.
type Search struct {
	sc                 Scale
	resolution, growth float64
	maxProbes          int
	// next is the rate to probe next; lowest the lowest it probes.
	next, lowest float64
	// pass is the highest passing rate, fail the lowest failing one
	// (the service's), ceiling the lowest generator-limited one by the
	// generator's CPU; 0: none.
	pass, fail, ceiling float64
	failWhy, ceilWhy    string
	// seen is every probe's rate and lateness; late the probes judged
	// the generator's by their lateness, until a lower rate as late says
	// it was the host's (then hostLate counts them).
	seen     []lateness
	late     []lateness
	hostLate int
	// passes are the passing rates counted.
	passes []float64
	// rejudged are the earlier late probes the last RecordProbe found
	// the host's, as they now count.
	rejudged []results.Probe
	probes   int
	// stop says why the search ended without a bracket; "" otherwise.
	stop string
}

// lateness is a probe's rate and send lateness p99, and for a late one
// why it missed the objective.
type lateness struct {
	rate, ms float64
	why      string
}

// NewSearch is a search on sc from start, bracketing by growth to
// resolution in at most maxProbes probes, none below LowestShare of
// start.
func NewSearch(sc Scale, start, resolution, growth float64, maxProbes int) *Search {
	if sc.whole {
		start = math.Round(start)
	}
	start = math.Min(math.Max(start, sc.min), sc.max)
	lowest := math.Max(sc.min, start*LowestShare)
	if sc.whole {
		lowest = math.Ceil(lowest)
	}
	return &Search{sc: sc, next: start, lowest: lowest, resolution: resolution, growth: growth, maxProbes: maxProbes}
}

// top is the lowest rate known not to pass: a failing rate or the
// generator's ceiling, whichever is lower (0: none).
func (s *Search) top() float64 {
	c, _ := s.ceil()
	switch {
	case s.fail == 0:
		return c
	case c == 0:
		return s.fail
	}
	return math.Min(s.fail, c)
}

// ceil is the generator's ceiling, by its CPU or by a lateness not yet
// found the host's, and why (0: none).
func (s *Search) ceil() (float64, string) {
	c, why := s.ceiling, s.ceilWhy
	for _, l := range s.late {
		if c == 0 || l.rate < c {
			c, why = l.rate, l.why
		}
	}
	return c, why
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
	s.count(rate, pass, generatorLimited, why)
	s.seen = append(s.seen, lateness{rate: rate})
	s.step()
}

// count takes one outcome into the bracket. Once a late probe's
// lateness is found the host's, its outcome may land on the wrong side
// of the bracket (a pass at or above a failing rate, a failure at or
// below a passing one, the host's noise): the failure counts, and the
// pass is the highest below it.
func (s *Search) count(rate float64, pass, generatorLimited bool, why string) {
	switch {
	case generatorLimited:
		if s.ceiling == 0 || rate < s.ceiling {
			s.ceiling, s.ceilWhy = rate, why
		}
	case pass:
		if s.fail > 0 && rate >= s.fail {
			return
		}
		s.passes = append(s.passes, rate)
		s.pass = math.Max(s.pass, rate)
	default:
		if s.fail == 0 || rate < s.fail {
			s.fail, s.failWhy = rate, why
		}
		if rate <= s.pass {
			s.pass = 0
			for _, p := range s.passes {
				if p < rate {
					s.pass = math.Max(s.pass, p)
				}
			}
		}
	}
}

// RecordProbe takes a judged probe (JudgeProbe) and sets the next rate.
// A late probe (Probe.Late) is a ceiling of the generator's only while
// nothing says its lateness was the host's (hostsLate): a lower rate as
// late, or a higher rate that passed. Then it counts as the failure it
// is (JudgeProbe makes late only a probe that missed the objective): pr
// is judged again in place (its Why saying why its lateness was the
// host's), and a late probe recorded before is taken again as a failure
// (Rejudged).
func (s *Search) RecordProbe(pr *results.Probe) {
	s.probes++
	s.rejudged = s.rejudged[:0]
	if pr.Late {
		if note, ok := s.hostsLate(pr.Rate, pr.LatenessP99Ms); ok {
			s.hostLate++
			pr.Why = withNote(objectiveWhy(*pr), note)
			pr.GeneratorLimited, pr.Late = false, false
		} else {
			s.late = append(s.late, lateness{rate: pr.Rate, ms: pr.LatenessP99Ms, why: pr.Why})
		}
	}
	s.seen = append(s.seen, lateness{rate: pr.Rate, ms: pr.LatenessP99Ms})
	if !pr.Late {
		s.count(pr.Rate, pr.Pass, pr.GeneratorLimited, pr.Why)
	}
	// Each late probe found the host's may raise the highest pass,
	// which may find another: until none changes.
	for changed := true; changed; {
		changed = false
		var kept []lateness
		for _, l := range s.late {
			if note, ok := s.hostsLate(l.rate, l.ms); ok {
				s.hostLate++
				why := withNote(objectiveWhy(results.Probe{Late: true, Why: l.why}), note)
				s.count(l.rate, false, false, why)
				s.rejudged = append(s.rejudged, results.Probe{Rate: l.rate, Why: why})
				changed = true
				continue
			}
			kept = append(kept, l)
		}
		s.late = kept
	}
	s.step()
}

// hostsLate says why a probe at rate, ms late at the p99, was late
// through no load of the generator's, if anything says so: a lower rate
// at least LatenessFall × as late (the lateness did not fall with the
// rate), or a higher rate that passed (the generator carried more).
func (s *Search) hostsLate(rate, ms float64) (string, bool) {
	for _, q := range s.seen {
		if q.rate < rate && q.ms >= LatenessFall*ms {
			return fmt.Sprintf("send lateness p99 %s, and %s at %s: the host's, not the generator's", human.Ms(ms), human.Ms(q.ms), s.sc.format(q.rate)), true
		}
	}
	if s.pass > rate {
		return fmt.Sprintf("send lateness p99 %s, but %s passed: the host's, not the generator's", human.Ms(ms), s.sc.format(s.pass)), true
	}
	return "", false
}

// withNote is a late probe's failure (its Why) with a note on why its
// lateness was the host's.
func withNote(why, note string) string {
	return why + " (" + note + ")"
}

// Rejudged are the earlier late probes that the last RecordProbe found
// late through the host, not the generator, as they now count (Rate,
// Why: failures); the caller's records of them are out of date.
func (s *Search) Rejudged() []results.Probe { return s.rejudged }

// HostLate counts the late probes whose lateness the search found the
// host's.
func (s *Search) HostLate() int { return s.hostLate }

// step sets the next rate, or stops the search.
func (s *Search) step() {
	t := s.top()
	switch {
	case s.Done():
		return
	case s.pass == 0:
		s.next = s.sc.down(t, s.growth)
		if s.next < s.lowest && t > s.lowest {
			s.next = s.lowest
		}
	case t == 0:
		s.next = s.sc.up(s.pass, s.growth)
	default:
		s.next = s.sc.mid(s.pass, t)
	}
	switch {
	case s.next < s.lowest:
		s.stop = fmt.Sprintf("failed the objective at every %s down to %s, the search's lowest (%g%% of its first probe)", s.sc.noun, s.sc.format(t), 100*LowestShare)
	case s.next > s.sc.max:
		s.stop = fmt.Sprintf("passed at %.0f %s, the search's highest %s", s.pass, s.sc.unit, s.sc.noun)
	case s.probes >= s.maxProbes:
		s.stop = fmt.Sprintf("stopped after %d probes (capacity.max_probes)", s.probes)
	}
}

// Bracket is the search's outcome in start.
func (s *Search) Bracket(start int) results.Bracket {
	b := results.Bracket{Start: start, Pass: s.pass, Fail: s.top(), Probes: s.probes, Why: s.failWhy}
	if c, why := s.ceil(); c > 0 && (s.fail == 0 || c < s.fail) {
		b.GeneratorLimited, b.Why = true, why
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
//
// It sets c's Answer, one of four: a bracket; a lower bound, the
// generator's load having limited it; the objective below this host's
// floor (a start that passed at no rate, on a host whose own floor takes
// more than FloorShare of the objective, c.AboveFloor, and failed there
// on latency, not on errors alone); or the service's failure at every
// rate. A capacity with no brackets has none.
//
// With every start confirmed (c.HeldPerStart) the capacity is what held
// instead (estimateHeld), the search's estimate kept beside it.
func Estimate(c *results.Capacity) {
	estimateSearch(c)
	if c.HeldPerStart() {
		estimateHeld(c)
	}
}

// estimateSearch is Estimate from the brackets' edges alone.
func estimateSearch(c *results.Capacity) {
	c.SearchRate, c.SearchLow, c.SearchHigh = 0, 0, 0
	c.Rate, c.Low, c.High, c.LowerBound, c.Reason, c.Failed, c.FailedWhy, c.Answer = 0, 0, 0, false, "", 0, "", ""
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
	failedEverywhere, failedOn := "", ""
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
				failedOn = b.Why
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
		// bound means nothing. On a host whose own floor takes much of
		// the objective, a failure on latency is the host's as much as
		// the service's.
		c.LowerBound, c.Reason, c.Answer = false, failedEverywhere, results.AnswerServiceFailed
		if c.AboveFloor && !strings.HasPrefix(failedOn, "errors ") {
			c.Answer = results.AnswerBelowFloor
		}
		return
	case c.LowerBound && math.IsInf(lowest, 1):
		// Every start was the generator's: no figure at all.
		c.Answer = results.AnswerGeneratorBound
		return
	case c.LowerBound:
		c.Rate, c.Low, c.Answer = lowest, lowest, results.AnswerGeneratorBound
		return
	}
	c.Answer = results.AnswerBracket
	iv := stats.CI95(mids)
	h := stats.Mean(halves)
	c.Rate = iv.Mean
	c.Low, c.High = math.Max(iv.Low-h, 0), iv.High+h
}

// estimateHeld makes c's capacity the rates its starts held in sustained
// runs (results.Bracket.Held), the search's estimate kept as SearchRate,
// SearchLow and SearchHigh:
//
//   - The capacity is the mean of the held rates over the starts that
//     held, its interval their 95% t interval (clipped at zero); with one
//     start, that start's rate alone, an interval of no width
//     (results.Capacity.Unsettled says it is too few).
//   - A lower bound (the generator limited the search) is the lowest rate
//     a start held, still a lower bound.
//   - A capacity no start held has none (Rate 0), with the reason.
//
// The held rates are not widened by the confirmation's steps: a held
// rate is one the service met the objective at, sustained, which is the
// claim; the rate between it and the step above is not.
func estimateHeld(c *results.Capacity) {
	if c.Rate <= 0 && c.Low <= 0 {
		return // no search estimate: nothing confirmed counts
	}
	c.SearchRate, c.SearchLow, c.SearchHigh = c.Rate, c.Low, c.High
	var held []float64
	var none []string
	for _, b := range c.Brackets {
		switch {
		case !b.Confirmed:
		case b.Held > 0:
			held = append(held, b.Held)
		default:
			none = append(none, fmt.Sprintf("start %d", b.Start))
		}
	}
	switch {
	case len(held) == 0:
		sc := ScaleOf(c.Units())
		c.Rate, c.Low, c.High, c.LowerBound = 0, 0, 0, false
		c.Reason = fmt.Sprintf("no start held a %s in %d sustained runs in a row, at its search's edge or in %d steps below it (%s)", sc.noun, ConfirmHolds, ConfirmSteps-1, strings.Join(none, ", "))
	case c.LowerBound:
		c.Rate, c.Low, c.High = slices.Min(held), slices.Min(held), 0
	default:
		iv := stats.CI95(held)
		c.Rate, c.Low, c.High = iv.Mean, math.Max(iv.Low, 0), iv.High
	}
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
// start: of the rates held when both were confirmed in every start
// (heldRatio), else of the brackets' midpoints.
func capacityRatio(a, b *results.Capacity) results.PairRatio {
	pr := results.PairRatio{Better: a.Arm, Worse: b.Arm, Ratio: a.Rate / b.Rate}
	if a.HeldPerStart() && b.HeldPerStart() {
		return heldRatio(pr, a, b)
	}
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

// heldRatio fills pr from the rates a and b held in the same starts: the
// log ratio's 95% t interval over those starts; with one such start its
// ratio alone (OneStart), with none the capacities' ratio.
func heldRatio(pr results.PairRatio, a, b *results.Capacity) results.PairRatio {
	hb := map[int]float64{}
	for _, y := range b.Brackets {
		if y.Held > 0 {
			hb[y.Start] = y.Held
		}
	}
	var logs []float64
	for _, x := range a.Brackets {
		if y, ok := hb[x.Start]; ok && x.Held > 0 {
			logs = append(logs, math.Log(x.Held/y))
		}
	}
	pr.Starts = len(logs)
	switch len(logs) {
	case 0, 1:
		if len(logs) == 1 {
			pr.Ratio = math.Exp(logs[0])
		}
		pr.Low, pr.High, pr.OneStart = pr.Ratio, pr.Ratio, true
	default:
		iv := stats.CI95(logs)
		pr.Ratio, pr.Low, pr.High = math.Exp(iv.Mean), math.Exp(iv.Low), math.Exp(iv.High)
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
