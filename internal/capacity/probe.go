package capacity

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/cpulist"
	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// StartProbe is the closed-model probe whose throughput, halved, is a
// start's first rate when the plan gives none.
const StartProbe = 2 * time.Second

// LatenessShare is the share of the objective's tightest latency limit
// that the generator's send lateness p99 may reach before a probe is
// the generator's: over it, sends were late enough to count in the
// latency.
const LatenessShare = 0.1

// ProbeRule states the probe-length rule with the plan's figures.
func ProbeRule(p *plan.Plan) string {
	q := p.SLO.Highest()
	rule := fmt.Sprintf("%v uncounted, then %.0f samples (%d/(1-%g)), at least %v and at most %v", time.Duration(p.Rounds.Settle),
		plan.SamplesBeyondQuantile/(1-q), plan.SamplesBeyondQuantile, q, time.Duration(p.Capacity.ProbeMin), time.Duration(p.Capacity.ProbeMax))
	if p.Capacity.Model == "closed" {
		rule += fmt.Sprintf(", each user expected to send once per think time plus the tightest limit (%v)", time.Duration(p.Load.ThinkTime)+p.SLO.Tightest())
	}
	return rule
}

// ExpectedRate is the rate a probe at load sends, for its length: the
// rate itself in the open model; in the closed model each user sends at
// least once per think time plus the tightest limit while the objective
// holds (its mean latency is below every limit), so a passing probe
// counts at least the samples its rule asks.
func ExpectedRate(p *plan.Plan, at float64) float64 {
	if p.Capacity.Model != "closed" {
		return at
	}
	return at / (time.Duration(p.Load.ThinkTime) + p.SLO.Tightest()).Seconds()
}

// ProbeLoad is the model of a probe at load for d: in the open model at
// requests a second, iterations of steps requests each arriving at
// at/steps a second (the samples the probe's rule counts, the
// throughput it achieves and the sizing's rates are all requests); in the
// closed model, users with the plan's think time.
func ProbeLoad(p *plan.Plan, at float64, steps int, d time.Duration) load.Model {
	if p.Capacity.Model == "closed" {
		return load.ClosedModel{Users: int(at), Duration: d, ThinkTime: time.Duration(p.Load.ThinkTime)}
	}
	// The probes keep even arrivals over the search's own pool unless
	// the plan names a shape (load.arrivals, load.connections).
	m := load.OpenModel{Rate: at / float64(max(steps, 1)), Duration: d, Connections: p.Load.Connections, Seed: uint64(p.Database.Seed)}
	if p.Load.Arrivals != "" {
		m.Arrivals = p.Load.Spacing()
	}
	return m
}

// RepeatProbe reports whether the search repeats pr before it counts.
// A generator stalled once (descheduled, a GC) is not a ceiling, and one
// stall of the machine or the service in a few seconds is not the
// service's steady state: a probe that failed, but for one far over the
// objective (the service overloaded), is repeated once at once. A
// bisection trusts every failure: unrepeated, one stall ends the search
// below it. Measured on go-stdlib (bench/README.md), one start's search
// ended at 22,000 req/s on a probe whose p99 was 14 ms, where another
// start passed at 41,000.
func RepeatProbe(pr results.Probe) bool {
	return pr.GeneratorLimited || !pr.Pass && !pr.FarOver
}

// DroppedFailed is how many of a probe's dropped sends count as failed.
// A dropped send was due before the probe ended and still waited for one
// of its connections then: the sends due in the last stretch are the
// queue a service near its capacity holds at any moment, which the end
// cuts off, and one that had waited less than the objective's tightest
// limit may well have met it. The schedule ran at rate (arrivals a
// second, in the units dropped counts), so the oldest of them had waited
// about dropped/rate; those beyond rate × limit had waited past the
// limit and count as failed, the rest do not. Without a rate (the closed
// model) every dropped send counts.
func DroppedFailed(dropped int64, rate float64, limit time.Duration) int64 {
	if rate <= 0 || limit <= 0 {
		return dropped
	}
	return max(0, dropped-int64(rate*limit.Seconds()))
}

// The host's own floor, as a probe's judgement and the search use it.
const (
	// FloorFactor and FloorMarginMs: on a host whose own send lateness
	// p99 (results.HostFloor) is f, a probe's lateness p99 is the
	// generator's only over FloorFactor × f + FloorMarginMs (and over
	// LatenessShare of the tightest limit, as on a quiet host). Lateness
	// at the floor is the host's timer wake-ups, whatever the rate.
	FloorFactor   = 2.0
	FloorMarginMs = 0.25
	// FloorShare is the share of the objective's tightest limit past
	// which the host's own p99 floor makes a capacity at that objective
	// a statement about the host; ResolvableFactor × the floor is the
	// objective this host can resolve.
	FloorShare       = 1.0 / 3
	ResolvableFactor = 3.0
	// LatenessFall is how far a late probe's lateness must fall at a
	// lower rate to be the generator's load: a lower rate at least
	// LatenessFall × as late says the lateness is the host's.
	LatenessFall = 0.5
)

// LateLimit is the send lateness p99, in ms, past which a probe at slo
// is the generator's: LatenessShare of the tightest limit, or on a host
// whose own floor is higher, FloorFactor × its lateness plus
// FloorMarginMs, but never more than the tightest limit itself. The
// floor is one short measurement on a noisy host (on the 2-CPU machine
// beside other builds, 0.08 to 80 ms within minutes): lateness past the
// whole limit is left to the search to tell the host's from the
// generator's (lower rates as late). Without a floor (not measured, or
// a run recorded before it) the share alone.
func LateLimit(slo plan.SLO, floor *results.HostFloor) float64 {
	t := ms(slo.Tightest())
	limit := LatenessShare * t
	if floor != nil {
		limit = max(limit, min(FloorFactor*floor.LatenessP99Ms+FloorMarginMs, t))
	}
	return limit
}

// AboveFloor reports whether floor takes more than FloorShare of slo's
// tightest limit: a capacity at slo is then as much the host's as the
// service's.
func AboveFloor(slo plan.SLO, floor *results.HostFloor) bool {
	return floor != nil && slo.Tightest() > 0 && floor.Ms() > FloorShare*ms(slo.Tightest())
}

// Resolvable is the tightest limit this host resolves: ResolvableFactor
// × its floor, rounded up to a tenth of a millisecond.
func Resolvable(floor *results.HostFloor) time.Duration {
	return time.Duration(math.Ceil(ResolvableFactor*floor.Ms()*10)) * 100 * time.Microsecond
}

// JudgeProbe decides whether pr meets slo on a host whose own latency
// floor is floor (nil: not measured). latency(q) is the probe's latency
// percentile q (from the intended send time) and service(q) its service
// time (from the actual send), both in ms. The probe is the generator's
// (GeneratorLimited, and not a pass) when the generator used more than
// results.GeneratorBoundPercent of its CPUs, or when its send lateness
// p99 exceeded LateLimit and the objective was missed while the
// service's own times met every limit: late sends then made the
// latency, not the service (Late). A probe late but within the
// objective passes: its latency, from the intended send, counts the
// lateness, so the service met the objective with it. Until 2026-12-07
// such a probe was the generator's too, and on java-spring (string, p99
// ≤ 10 ms, 2-CPU AMD EPYC) confirmation runs at p99 2.6-3.2 ms, their
// sends 1.0-1.2 ms late, stepped down to below half the edge and no rate
// held. Met says whether the objective itself held, whoever's probe it
// was. Otherwise it fails on any percentile over its limit or an error
// rate over the objective's, every reason named. The floor is never
// subtracted: the latency stays the latency from the intended send time.
func JudgeProbe(pr *results.Probe, slo plan.SLO, floor *results.HostFloor, latency, service func(q float64) float64) {
	var why []string
	serviceMet := true
	for _, pl := range slo.Percentiles {
		limit := ms(time.Duration(pl.Limit))
		if v := latency(pl.Q); v > limit {
			why = append(why, fmt.Sprintf("%s %s > %s", pl.Name(), human.Ms(v), human.Ms(limit)))
			pr.FarOver = pr.FarOver || v >= results.FarOverFactor*limit
		}
		if service(pl.Q) > limit {
			serviceMet = false
		}
	}
	if pr.ErrorRate > float64(slo.Errors) {
		why = append(why, fmt.Sprintf("errors %s > %s", plan.Fraction(pr.ErrorRate), slo.Errors))
		pr.FarOver = pr.FarOver || pr.ErrorRate >= results.FarOverFactor*max(float64(slo.Errors), 0.001)
	}
	pr.Met = len(why) == 0
	lateLimit := LateLimit(slo, floor)
	switch {
	case pr.GeneratorCPU > results.GeneratorBoundPercent:
		pr.GeneratorLimited = true
		why = append([]string{fmt.Sprintf("generator at %.0f%% of its CPUs (over %d%%)", pr.GeneratorCPU, results.GeneratorBoundPercent)}, why...)
	case pr.LatenessP99Ms > lateLimit && serviceMet && !pr.Met:
		pr.GeneratorLimited, pr.Late = true, true
		limit := human.Ms(lateLimit)
		switch {
		case floor == nil || lateLimit <= LatenessShare*ms(slo.Tightest()):
		case lateLimit >= ms(slo.Tightest()):
			limit += fmt.Sprintf(" (the objective's limit, under %g× this host's lateness floor %s)", FloorFactor, human.Ms(floor.LatenessP99Ms))
		default:
			limit += fmt.Sprintf(" (%g× this host's lateness floor %s + %s)", FloorFactor, human.Ms(floor.LatenessP99Ms), human.Ms(FloorMarginMs))
		}
		why = append([]string{fmt.Sprintf("generator late: send lateness p99 %s > %s", human.Ms(pr.LatenessP99Ms), limit)}, why...)
	}
	pr.Pass = len(why) == 0
	pr.Why = strings.Join(why, "; ")
}

// objectiveWhy is what of a late probe's Why is the objective's: what
// follows the generator's reason.
func objectiveWhy(pr results.Probe) string {
	if !pr.Late {
		return pr.Why
	}
	if _, rest, ok := strings.Cut(pr.Why, "; "); ok {
		return rest
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// ServiceCPUs is how much CPU the service has: the placement's service
// CPUs, or the CPU quota when lower; 0 when neither is set.
func ServiceCPUs(p *plan.Plan) float64 {
	n := 0.0
	if cs := p.Placement.ServiceCPUs; cs != "" {
		if l, err := cpulist.Parse(cs); err == nil {
			n = float64(len(l))
		}
	}
	if q := p.Limits.CPU; q > 0 && (n == 0 || q < n) {
		n = q
	}
	return n
}

// The limits past which a probe's own record says the machine disturbed
// it, as interleave's for rounds: steal time in percent of all CPUs,
// other processes on the service's CPUs in percent of one CPU, and a
// generator late while under GeneratorHalf of its CPUs (late sends then
// came from the machine, not from the generator's own load).
const (
	StealMax      = 5.0
	OtherCPUMax   = 25.0
	GeneratorHalf = 50.0
	// MaxDisturbedRepeats bounds how many disturbed probes one arm's
	// search measures again in one start.
	MaxDisturbedRepeats = 3
	// ConfirmSteps bounds the confirmation runs of one capacity, each
	// further below the last: the k-th step back is k × ConfirmStep (or
	// the plan's resolution, when larger), so six runs reach below half
	// the first rate. A capacity found in 2 s probes can miss its
	// objective over 30 s on a host that stalls now and then (one stall
	// near the knee takes long to drain; bench/README.md, "Where the constants come from"), and the confirmation's
	// answer is the rate that does.
	ConfirmSteps = 6
	ConfirmStep  = 0.05
	// ConfirmHolds is how many confirmation runs in a row a rate must
	// hold. One is not enough: a rate whose one 30 s run held can fail
	// most further runs (bench/README.md, "Where the constants come from").
	ConfirmHolds = 2
	// ConfirmRefine bounds the bisections after a step back held: the
	// steps grow (5%, 10%, 15% of the edge), so the rate that held can
	// lie a step below what a sustained run meets, and a short probe's
	// edge lies some 10-15% above that on a 2-CPU host (bench/README.md,
	// "How long a probe must be"). Two halve a 5% step to 1.25%.
	ConfirmRefine = 2
)

// Refine is the rate a confirmation tries next between held, the
// highest rate that held in sustained runs, and failed, the lowest above
// it that did not: their midpoint, while they are further apart than
// resolution (ok false: close enough, or nothing to bisect); a capacity
// in users bisects whole users.
func Refine(held, failed float64, unit string, resolution float64) (float64, bool) {
	if held <= 0 || failed <= held || (failed-held)/held <= resolution {
		return 0, false
	}
	mid := (held + failed) / 2
	if unit == results.UnitUsers {
		mid = math.Floor(mid)
		if mid <= held {
			return 0, false
		}
	}
	return mid, true
}

// Disturbed says how the machine disturbed pr, from its own record; ""
// when nothing says so.
func Disturbed(pr results.Probe) string {
	switch {
	case pr.StealPercent > StealMax:
		return fmt.Sprintf("the hypervisor stole %.0f%% of the machine's CPU time", pr.StealPercent)
	case pr.OtherServiceCPU > OtherCPUMax:
		return fmt.Sprintf("other processes took %.0f%% of a CPU on the service's CPUs", pr.OtherServiceCPU)
	case pr.GeneratorLimited && pr.LatenessP99Ms > 0 && pr.GeneratorCPU < GeneratorHalf:
		return fmt.Sprintf("the generator was late while %.0f%% busy", pr.GeneratorCPU)
	}
	return ""
}

// ConfirmRates are the rates a start's confirmation tries, in order:
// from, that start's own search edge (its bracket's passing rate), then
// each step back larger than the last (ConfirmSteps), ConfirmSteps rates
// in all, none at or below zero; a capacity in users steps in whole
// users. It starts at the start's edge, not at the interval over starts:
// with two or three starts that interval's lower end (a t quantile of
// 12.7 with one degree of freedom) can lie far below every start's
// bracket, where a confirmation holds trivially and says nothing.
func ConfirmRates(from float64, unit string, resolution float64) []float64 {
	if from <= 0 {
		return nil
	}
	at := from
	step := max(ConfirmStep, resolution)
	out := make([]float64, 0, ConfirmSteps)
	for i := 0; i < ConfirmSteps && at > 0; i++ {
		out = append(out, at)
		at *= 1 - float64(i+1)*step
		if unit == results.UnitUsers {
			at = math.Floor(at)
		}
	}
	return out
}
