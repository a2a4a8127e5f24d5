package results

import (
	"fmt"
	"math"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
)

// Capacity is one arm's capacity at a plan's objective (slo) on one
// workload: the highest open-model arrival rate at which the objective
// holds at steady state, or (Unit "users") the most closed-model users
// with the plan's think time, found by bracketing then bisecting. Every
// probe is kept, so the latency-load curve is drawn from the same runs.
type Capacity struct {
	Workload string `json:"workload"`
	// Arm is the implementation id (with its core count when the plan
	// has cores: "go-stdlib@2").
	Arm string `json:"arm"`
	// Implementation is the arm's implementation id without its cores.
	Implementation string `json:"implementation"`
	// Cores is how many CPUs the service had (0: the plan's placement).
	Cores int `json:"cores,omitempty"`
	// CPUs is how much CPU the capacity was measured on: the service's
	// CPUs (Cores, or the placement's service CPUs), or its CPU quota
	// when lower; 0 when the service was not pinned.
	CPUs float64 `json:"cpus,omitempty"`
	// Objective is the plan's slo as it reads ("p99 <= 10ms, errors <= 0.1%").
	Objective string `json:"objective"`
	// Unit is what Rate, Low, High, Failed, the brackets and the
	// probes' Rate count: "req/s" (requests a second, every step of the
	// scenario's iterations; empty in runs recorded before the closed
	// model's search) or "users".
	Unit string `json:"unit,omitempty"`
	// StepsPerArrival is the scenario's steps: in the open model the
	// iterations arrive at Rate / StepsPerArrival a second, each sending
	// that many requests (0 in runs recorded before it, where the rate
	// was of iterations).
	StepsPerArrival int `json:"steps_per_arrival,omitempty"`
	// Rate is the capacity (in Unit) and Low/High its interval: with
	// every start confirmed (HeldPerStart), the mean and 95% interval over
	// starts of the rates that held in a sustained run (Bracket.Held); in
	// runs recorded before it, the search's estimate from the brackets.
	Rate float64 `json:"rate"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// SearchRate, SearchLow and SearchHigh are the search's own estimate
	// from the starts' brackets, kept beside a held Rate (0 in runs
	// recorded before every start was confirmed, whose Rate is it).
	SearchRate float64 `json:"search_rate,omitempty"`
	SearchLow  float64 `json:"search_low,omitempty"`
	SearchHigh float64 `json:"search_high,omitempty"`
	// LowerBound marks a capacity the generator, not the service,
	// limited: the true capacity is at least Low; Reason says why (and,
	// with Rate 0, why there is no capacity).
	LowerBound bool   `json:"lower_bound,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Failed is the lowest load that failed the objective, and FailedWhy
	// what failed there ("p99 14.2 ms > 10 ms", "errors 0.4% > 0.1%",
	// "generator late: p99 1.3 ms > 1 ms").
	Failed    float64 `json:"failed,omitempty"`
	FailedWhy string  `json:"failed_why,omitempty"`
	// RSSBytes is the service's resident memory at the highest passing
	// probe, for sizing.
	RSSBytes int64 `json:"rss_bytes,omitempty"`
	// Brackets are each start's final bracket, from which Rate, Low and
	// High are derived (lab: the capacity interval).
	Brackets []Bracket `json:"brackets,omitempty"`
	// Held is, in runs recorded before every start was confirmed, the
	// rate the last start's confirmation held for HeldSeconds, at the
	// interval's lower end (or the lowest rate every start held, when
	// higher) or stepped back from it; 0 when none held or none was run
	// (and in later runs, whose brackets hold it per start).
	// Confirmations are the confirmation runs of every start (each
	// Probe's Start says whose), the failed ones first.
	Held        float64 `json:"held,omitempty"`
	HeldSeconds float64 `json:"held_seconds,omitempty"`
	// HeldRuns is how many runs of HeldSeconds in a row held at Held
	// (capacity.ConfirmHolds); 0 in runs recorded before it, where one did.
	HeldRuns      int     `json:"held_runs,omitempty"`
	Confirmations []Probe `json:"confirmations,omitempty"`
	// Warnings are doubts about this capacity (a probe shorter than its
	// percentile's rule, a failed invariant after the search).
	Warnings []string `json:"warnings,omitempty"`
	// Violations are the workload's invariants that failed in the audit
	// after a start's searches (every arm of the workload shares them:
	// they wrote to one database in turn).
	Violations []Violation `json:"violations,omitempty"`
	// Probes in the order they ran, over every start.
	Probes []Probe `json:"probes"`
	// Floor is this host's own p99 floor, measured before the search;
	// nil when not measured (and in runs recorded before it). AboveFloor
	// reports that it takes more than a third of the objective's tightest
	// limit (capacity.AboveFloor): a capacity there is a statement about
	// the host; ResolvableMs is then the tightest limit this host
	// resolves (capacity.Resolvable).
	Floor        *HostFloor `json:"host_floor,omitempty"`
	AboveFloor   bool       `json:"above_floor,omitempty"`
	ResolvableMs float64    `json:"resolvable_ms,omitempty"`
	// Answer is which of the four answers the search gave (capacity.Estimate);
	// empty in runs recorded before it (Answered derives it).
	Answer Answer `json:"answer,omitempty"`
}

// Bracket is one start's search as it ended: the highest rate that
// passed and the lowest that failed (0: none).
type Bracket struct {
	Start int     `json:"start"`
	Pass  float64 `json:"pass"`
	Fail  float64 `json:"fail"`
	// GeneratorLimited reports that Fail is where the generator, not
	// the service, failed: Pass is then a lower bound.
	GeneratorLimited bool `json:"generator_limited,omitempty"`
	// Why is what failed at Fail.
	Why string `json:"why,omitempty"`
	// Stopped says why the search ended short of its resolution
	// (max_probes, the highest rate passed); empty when it reached it.
	Stopped string `json:"stopped,omitempty"`
	Probes  int    `json:"probes"`
	// Confirmed reports that this start's confirmation ran: from Pass,
	// stepping down, until a rate met the objective in HeldRuns runs of
	// HeldSeconds in a row. Held is that rate (0: none held). Runs
	// recorded before every start was confirmed have none.
	Confirmed   bool    `json:"confirmed,omitempty"`
	Held        float64 `json:"held,omitempty"`
	HeldSeconds float64 `json:"held_seconds,omitempty"`
	HeldRuns    int     `json:"held_runs,omitempty"`
	// HeldFailed is the lowest rate above Held that failed a sustained
	// run in this start: the confirmation steps down from Pass, then
	// bisects between the rate that held and the one above that did not
	// (capacity.Refine), so [Held, HeldFailed] is the sustained edge's
	// bracket. 0: Pass itself held, or no rate did.
	HeldFailed float64 `json:"held_failed,omitempty"`
}

// HeldPerStart reports that c was confirmed start by start (a bracket
// says its start's confirmation ran), so that its Rate, Low and High are
// the held rates' (capacity.Estimate); runs recorded before confirmed
// only their last start, and none of their brackets says so.
func (c *Capacity) HeldPerStart() bool {
	for _, b := range c.Brackets {
		if b.Confirmed {
			return true
		}
	}
	return false
}

// HeldHalfWidth is the widest a held interval may be, as a share of its
// capacity either side, and still be used as it stands (Unsettled): at
// ±25% a sizing from its lower end asks for a third more than the
// capacity.
const HeldHalfWidth = 0.25

// Unsettled reports that c's held interval is too wide to use as it
// stands, so that another start would narrow it: fewer than two starts
// held, or the interval reaches zero, or it is wider than HeldHalfWidth
// of the capacity either side. A capacity that is a lower bound, has
// none, or was not confirmed per start never is: another start does not
// change what it says.
func (c *Capacity) Unsettled() bool {
	if !c.HeldPerStart() || c.Rate <= 0 || c.LowerBound {
		return false
	}
	n := 0
	for _, b := range c.Brackets {
		if b.Held > 0 {
			n++
		}
	}
	return n < 2 || c.Low <= 0 || (c.High-c.Low)/2 > HeldHalfWidth*c.Rate
}

// LowestHeld is the lowest rate a start's confirmation held (0: none).
func (c *Capacity) LowestHeld() float64 {
	low := 0.0
	for _, b := range c.Brackets {
		if b.Held > 0 && (low == 0 || b.Held < low) {
			low = b.Held
		}
	}
	return low
}

// Units is c's Unit, "req/s" when the run recorded none.
func (c *Capacity) Units() string {
	if c.Unit == "" {
		return UnitRate
	}
	return c.Unit
}

// The units of a capacity.
const (
	UnitRate  = "req/s"
	UnitUsers = "users"
)

func count(v float64) string { return fmt.Sprintf("%.0f", math.Round(v)) }

// CapacityVerdict ranks the arms of one workload by capacity at the
// objective, with every adjacent pair's ratio and its interval (Metric
// "capacity": more is better).
type CapacityVerdict struct {
	Workload  string `json:"workload"`
	Objective string `json:"objective"`
	Verdict
	// LowerBounds say which capacities, and so which ratios, are only
	// lower bounds, and why.
	LowerBounds []string `json:"lower_bounds,omitempty"`
	// AddedStarts counts the starts run past the plan's trials because
	// a held interval was too wide to use (Capacity.Unsettled), and
	// Added says, for each, which capacities were and how.
	AddedStarts int      `json:"added_starts,omitempty"`
	Added       []string `json:"added,omitempty"`
}

// Size is what one arm needs to carry a stated load at the objective.
type Size struct {
	Arm      string  `json:"arm"`
	Workload string  `json:"workload"`
	Rate     float64 `json:"rate"`
	// Cores is rate / capacity × the CPUs the capacity was measured on
	// (fractional below one); 0 when the capacity or its CPUs are unknown.
	Cores float64 `json:"cores"`
	// Instances is how many processes of the measured size carry the
	// rate (ceil(rate / capacity)), and MemoryBytes their RSS at the
	// highest passing probe, each.
	Instances   int   `json:"instances"`
	MemoryBytes int64 `json:"memory_bytes"`
	// LowerBound reports a capacity that is a lower bound: the sizes are
	// then upper bounds.
	LowerBound bool `json:"lower_bound,omitempty"`
}

// SizeFor sizes c's arm for s: from the capacity interval's lower end
// (the conservative side), the cores, instances and memory needed. With
// every start confirmed that is the held interval's, or where it reaches
// zero the lowest rate a start held (a rate that did hold, where the
// interval says nothing); in runs recorded before it, the rate the last
// start's confirmation held. A capacity in users sizes nothing
// (Instances 0): the load is a rate.
func SizeFor(c *Capacity, s plan.Sizing) Size {
	rate := s.RequestsPerSecond()
	out := Size{Arm: c.Arm, Workload: c.Workload, Rate: rate, LowerBound: c.LowerBound}
	capRate := c.Low
	switch {
	case c.HeldPerStart() && c.Rate > 0 && capRate <= 0:
		capRate = c.LowestHeld()
	case c.HeldPerStart():
	case len(c.Confirmations) > 0:
		capRate = c.Held // what held when sustained, or nothing
	}
	if capRate <= 0 || c.Units() != UnitRate {
		return out
	}
	share := rate / capRate
	out.Cores = share * c.CPUs
	out.Instances = int(math.Ceil(share))
	out.MemoryBytes = int64(out.Instances) * c.RSSBytes
	return out
}

// Probe is one run of an arm at one load, judged against the objective:
// an open-model arrival rate, or (in a capacity in users) a number of
// closed-model users.
type Probe struct {
	Start int       `json:"start"`
	At    time.Time `json:"at"`
	// Rate is the offered load in its capacity's Unit (an arrival rate,
	// or users); Achieved what completed per second.
	Rate     float64 `json:"rate"`
	Achieved float64 `json:"achieved"`
	Seconds  float64 `json:"seconds"`
	Samples  int64   `json:"samples"`
	// ErrorRate is the share of requests that failed (0.001 is 0.1%),
	// counting the dropped sends that had waited past the objective's
	// tightest limit when the probe ended.
	ErrorRate float64 `json:"error_rate"`
	// Dropped counts the sends due before the probe ended that never
	// started (every connection busy).
	Dropped int64   `json:"dropped,omitempty"`
	P50Ms   float64 `json:"p50_ms"`
	P99Ms   float64 `json:"p99_ms"`
	P999Ms  float64 `json:"p999_ms"`
	// LatenessP99Ms is the generator's send lateness p99.
	LatenessP99Ms float64 `json:"lateness_p99_ms"`
	// ServiceCPU is the service's CPU (percent of one CPU) and
	// GeneratorCPU the generator's (percent of its CPUs).
	ServiceCPU   float64 `json:"service_cpu"`
	GeneratorCPU float64 `json:"generator_cpu"`
	RSSBytes     int64   `json:"rss_bytes,omitempty"`
	// Pass is whether the objective held; Why names what failed, and
	// GeneratorLimited marks a probe the generator limited. FarOver
	// marks a failure by a factor of FarOverFactor or more (a
	// percentile, or the error rate, that far over its limit): the
	// service overloaded, not one stall.
	Pass             bool   `json:"pass"`
	Why              string `json:"why,omitempty"`
	GeneratorLimited bool   `json:"generator_limited,omitempty"`
	FarOver          bool   `json:"far_over,omitempty"`
	// What else the machine did meanwhile, as ArmRound counts it, and
	// how it disturbed the probe (capacity.Disturbed): such a probe is
	// measured again before it counts, within a budget.
	StealPercent    float64 `json:"steal_percent"`
	OtherServiceCPU float64 `json:"other_service_cpu_percent"`
	Disturbed       string  `json:"disturbed,omitempty"`
	// Late marks a probe judged the generator's by its send lateness
	// alone (its CPU under the bound), and Met whether the objective
	// itself held, whoever's probe it was: the search compares a late
	// probe's lateness with lower rates' before it trusts it.
	Late bool `json:"late,omitempty"`
	Met  bool `json:"met,omitempty"`
}

// FarOverFactor is how far over a limit a probe's failure is the service's
// overload beyond doubt (Probe.FarOver).
const FarOverFactor = 10
