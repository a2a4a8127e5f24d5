package results

import "fmt"

// HostFloor is the latency this host adds to every request whatever the
// service: the generator's send lateness and a trivial server's latency
// at a trivial rate, measured before a capacity search (package noise
// measures it; a noise.Latency converts to it). Latency is measured from
// the intended send time, so the floor is inside every probe's
// percentiles: it is reported beside them, never subtracted.
type HostFloor struct {
	// Rate is the open-model arrival rate it was measured at, for
	// Seconds.
	Rate    float64 `json:"rate"`
	Seconds float64 `json:"seconds"`
	Samples int64   `json:"samples"`
	// LatenessP99Ms is the generator's send lateness p99 at Rate.
	LatenessP99Ms float64 `json:"lateness_p99_ms"`
	// P50Ms and P99Ms are the trivial server's latency (from the
	// intended send time) at Rate: the host's own p99 floor.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	// ServerCPU is the CPU the trivial server was pinned to (the
	// service's first CPU); -1 when it was not pinned.
	ServerCPU int `json:"server_cpu"`
}

// Ms is the floor in ms: the trivial server's p99, or the generator's
// lateness p99 when that is higher.
func (f *HostFloor) Ms() float64 {
	if f == nil {
		return 0
	}
	return max(f.P99Ms, f.LatenessP99Ms)
}

// Where returns how it was measured, in words: "a trivial server on
// CPU 0 at 200 req/s for 3 s".
func (f *HostFloor) Where() string {
	on := "(unpinned)"
	if f.ServerCPU >= 0 {
		on = fmt.Sprintf("on CPU %d", f.ServerCPU)
	}
	return fmt.Sprintf("a trivial server %s at %.0f req/s for %.0f s", on, f.Rate, f.Seconds)
}

// Answer is how a capacity search ended: one of four answers, each
// decided by probes the capacity keeps.
type Answer string

// The answers of a capacity search. A run recorded before them has none
// (Capacity.Answered derives one from its other fields).
const (
	// AnswerBracket: a rate held and a rate above it failed, the
	// service's edge between them.
	AnswerBracket Answer = "bracket"
	// AnswerGeneratorBound: the generator's own load (its CPU, or a
	// lateness rising with the rate) stopped the search above the
	// highest rate that held: the capacity is a lower bound.
	AnswerGeneratorBound Answer = "generator-bound"
	// AnswerBelowFloor: the objective is below what this host resolves:
	// its own p99 floor takes more than a third of the objective and no
	// rate bracketed the service's edge.
	AnswerBelowFloor Answer = "below-host-floor"
	// AnswerServiceFailed: the service failed the objective at every
	// rate the search tried, down to its lowest.
	AnswerServiceFailed Answer = "service-failed"
)

// Answered is c's answer: the one recorded, or for a run recorded
// before answers, the one its other fields imply.
func (c *Capacity) Answered() Answer {
	switch {
	case c.Answer != "":
		return c.Answer
	case c.LowerBound:
		return AnswerGeneratorBound
	case c.Rate == 0 && (c.Failed > 0 || c.Reason != ""):
		return AnswerServiceFailed
	case c.Rate == 0:
		return ""
	}
	return AnswerBracket
}
