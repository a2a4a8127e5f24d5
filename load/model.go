package load

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Defaults of the engine's options.
const (
	// DefaultTimeout bounds one request, from write to the last body byte.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxInflight bounds concurrent requests (and connections) in
	// the open model.
	DefaultMaxInflight = 1000
	// DefaultLateAfter is how far behind its intended time a send may start
	// before it counts as late.
	DefaultLateAfter = 10 * time.Millisecond
	// DefaultMaxReasons caps distinct error reasons per label; further
	// reasons are counted as "other".
	DefaultMaxReasons = 100
	// DefaultPaceSlack is how late after its due time the open model's
	// pacer may send a request to save a wake-up (PaceSlack): 50 µs.
	DefaultPaceSlack = 50 * time.Microsecond
	// DefaultSpin is how long the closed model's loop engine looks for
	// awaited responses before it sleeps (Spin): 20 µs.
	DefaultSpin = 20 * time.Microsecond
	// DefaultCoalesce is how long the closed model's loop engine sleeps
	// on its timer alone, with ten responses awaited or more, to read
	// them in one batch (Coalesce): 50 µs, within the bounds Coalesce
	// gives.
	DefaultCoalesce = 50 * time.Microsecond
)

// Model is how load arrives: an OpenModel or a ClosedModel.
type Model interface {
	// Validate returns every problem with the model at once.
	Validate() []error
	isModel()
}

// OpenModel starts iterations on a fixed timeline, Rate per second, for
// Duration, whether or not earlier ones have completed. Latency is measured
// from each iteration's intended start, so a stalled target cannot hide its
// stall (coordinated omission).
type OpenModel struct {
	// Rate is the target arrival rate, iterations per second.
	Rate float64
	// Duration is how long arrivals are scheduled (after warm-up); with
	// Stages it is their sum (0 or that sum).
	Duration time.Duration
	// Arrivals spaces the arrivals: Even ("" too) or Poisson.
	Arrivals Arrivals
	// Seed seeds Poisson arrivals: the same seed, the same gaps.
	Seed uint64
	// Connections is the pool of keep-alive connections the arrivals are
	// spread over: each arrival takes the connection that has been idle
	// longest, a new one is opened until the pool has Connections and
	// beyond it only when every connection is busy (up to MaxInflight),
	// so the target sees as many connections as a proxy or a pool of
	// clients keeps open. 0: the most recently idle connection, so as
	// few connections as the rate needs.
	Connections int
	// Stages change the rate over time after the warm-up (which runs at
	// Rate): each moves in a straight line to its Target.
	Stages []Stage
}

// ClosedModel runs Users virtual users, each looping over the scenario on
// its own keep-alive connection.
type ClosedModel struct {
	// Users is the number of virtual users.
	Users int
	// RampUp spreads the users' starts evenly over this time.
	RampUp time.Duration
	// Duration stops the users after this time (after warm-up); 0 with
	// Iterations set runs until each user has done its iterations.
	Duration time.Duration
	// Iterations per user; 0 means no limit (Duration must be set).
	Iterations int
	// ThinkTime is the pause after each step.
	ThinkTime time.Duration
}

func (OpenModel) isModel()   {}
func (ClosedModel) isModel() {}

var (
	_ Model = OpenModel{}
	_ Model = ClosedModel{}
)

// Validate returns every problem with m.
func (m OpenModel) Validate() []error {
	var errs []error
	switch {
	case len(m.Stages) == 0 && m.Rate <= 0:
		errs = append(errs, errors.New("rate: must be > 0"))
	case m.Rate < 0:
		errs = append(errs, errors.New("rate: must not be negative"))
	}
	if len(m.Stages) == 0 && m.Duration <= 0 {
		errs = append(errs, errors.New("duration: must be > 0 in the open model"))
	}
	if len(m.Stages) > 0 {
		if m.Duration != 0 && m.Duration != m.Length() {
			errs = append(errs, fmt.Errorf("duration: the stages last %v; leave duration out or make it %v", m.Length(), m.Length()))
		}
		peak := m.Rate
		for i, st := range m.Stages {
			if st.Duration <= 0 || st.Target < 0 {
				errs = append(errs, fmt.Errorf("stage %d: want a duration > 0 and a rate >= 0, got %v and %g", i+1, st.Duration, st.Target))
			}
			peak = max(peak, st.Target)
		}
		if peak <= 0 {
			errs = append(errs, errors.New("stages: every rate is 0, so nothing would be sent"))
		}
	}
	if _, err := ParseArrivals(string(m.Arrivals)); err != nil {
		errs = append(errs, err)
	}
	if m.Connections < 0 {
		errs = append(errs, errors.New("connections: must not be negative"))
	}
	return errs
}

// Validate returns every problem with m.
func (m ClosedModel) Validate() []error {
	var errs []error
	if m.Users <= 0 {
		errs = append(errs, errors.New("users: must be > 0"))
	}
	if m.RampUp < 0 || m.ThinkTime < 0 || m.Duration < 0 || m.Iterations < 0 {
		errs = append(errs, errors.New("ramp-up, think-time, duration and iterations must not be negative"))
	}
	if m.Duration == 0 && m.Iterations == 0 {
		errs = append(errs, errors.New("duration or iterations: the closed model needs one of them"))
	}
	return errs
}

// ParseRate parses a rate: "5000" (per second), "5000/s", "300/1m",
// "10/500ms". It returns iterations per second.
func ParseRate(s string) (float64, error) {
	num, per, hasPer := strings.Cut(strings.TrimSpace(s), "/")
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("rate %q: want a positive number, optionally /unit, e.g. 5000, 5000/s, 300/1m", s)
	}
	if !hasPer {
		return n, nil
	}
	switch per {
	case "s":
		per = "1s"
	case "m":
		per = "1m"
	case "h":
		per = "1h"
	case "ms":
		per = "1ms"
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("rate %q: bad period %q, want e.g. s, 1m, 500ms", s, per)
	}
	return n / d.Seconds(), nil
}

// WarmupPhase is a warm-up phase whose samples are not counted: Requests
// requests or Duration of time, whichever is set.
type WarmupPhase struct {
	Requests int
	Duration time.Duration
}

// ParseWarmup parses "1000" (requests) or "10s" (time); "" or "0" means none.
func ParseWarmup(s string) (WarmupPhase, error) {
	if s == "" || s == "0" {
		return WarmupPhase{}, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return WarmupPhase{Requests: n}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return WarmupPhase{Duration: d}, nil
	}
	return WarmupPhase{}, fmt.Errorf("warmup %q: want a request count (1000) or a duration (10s)", s)
}

// String renders w as ParseWarmup reads it.
func (w WarmupPhase) String() string {
	switch {
	case w.Requests > 0:
		return strconv.Itoa(w.Requests)
	case w.Duration > 0:
		return w.Duration.String()
	}
	return "0"
}

// Shard is the part of the load one generator runs: Index of Count (1-based).
type Shard struct{ Index, Count int }

// ParseShard parses "i/N".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("shard %q: want i/N with 1 <= i <= N, e.g. 2/4", s)
	}
	return Shard{i, n}, nil
}

// String renders s as "i/N".
func (s Shard) String() string {
	if s.Count <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Progress is the state of a running attack, reported once per second.
type Progress struct {
	// Elapsed is the measured time so far (0 during warm-up).
	Elapsed time.Duration
	// Remaining is the time left, when known.
	Remaining time.Duration
	// Warmup reports whether the attack is still warming up.
	Warmup bool
	// Rate is the completed requests per second in the last interval.
	Rate float64
	// Requests and Errors are the totals so far.
	Requests, Errors int64
	// P99 is the 99th percentile latency so far.
	P99 time.Duration
	// IntervalP50 is the last interval's median latency (from the intended
	// send time), for rules that watch the latency second by second.
	IntervalP50 time.Duration
	// Active is the requests in flight (open model) or active users.
	Active int64
}

// Option configures an Attacker.
type Option func(*Attacker)

// Timeout bounds each request (DefaultTimeout).
func Timeout(d time.Duration) Option { return func(a *Attacker) { a.timeout = d } }

// MaxInflight bounds concurrent requests in the open model
// (DefaultMaxInflight).
func MaxInflight(n int) Option { return func(a *Attacker) { a.maxInflight = n } }

// WithWarmup sets a warm-up phase whose samples are not counted.
func WithWarmup(w WarmupPhase) Option { return func(a *Attacker) { a.warmup = w } }

// WithShard makes the attacker run part s of the load: 1/Count of the rate
// or of the users, with disjoint user numbers.
func WithShard(s Shard) Option { return func(a *Attacker) { a.shard = s } }

// OnProgress calls fn once per second while the attack runs.
func OnProgress(fn func(Progress)) Option { return func(a *Attacker) { a.progress = fn } }

// LateAfter sets how far behind schedule a send may start before it counts
// as late (DefaultLateAfter).
func LateAfter(d time.Duration) Option { return func(a *Attacker) { a.lateAfter = d } }

// WithOptionsRecord stores the user-facing options (flags) in the summary,
// so a result says how it was produced.
func WithOptionsRecord(m map[string]string) Option {
	return func(a *Attacker) { a.optionsRecord = m }
}

// WithoutTickEngine runs every attack on the goroutine-per-connection
// engine instead of the tick engine (tick.go: a plain URL in the open
// model) and the loop engine (loop_linux.go: scenarios, and the closed
// model), to compare them or to rule them out when diagnosing.
func WithoutTickEngine() Option { return func(a *Attacker) { a.noTick = true } }

// WithLimits bounds what the engine accepts in a response (header size
// and count, chunk and body size); zero fields keep their Default* values.
func WithLimits(l Limits) Option { return func(a *Attacker) { a.limits = l } }

// PaceSlack sets the open model's trade-off between wake-ups and
// lateness (DefaultPaceSlack): the pacer wakes when the next request is
// due, but at most once per slack, sending at each wake every request
// that has come due. Below 1/slack requests per second each request gets
// its own wake-up, sent within microseconds of its due time; above it a
// wake sends rate*slack requests, late by up to slack (slack/2 on
// average). 0 wakes for every request. A request's latency still runs
// from its due time, so slack is never hidden: it shows in the send
// lateness and in the latency.
func PaceSlack(d time.Duration) Option { return func(a *Attacker) { a.paceSlack = d } }

// Spin sets how long the loop engine, in the closed model, keeps looking
// for awaited responses before it sleeps (DefaultSpin); 0 sleeps at once.
// With many responses awaited the loop coalesces instead (Coalesce).
//
// Subtleness ahead! On loopback a response written to a sleeping
// generator makes the server's CPU wake it (the scheduler's wake-up, an
// interrupt to the generator's CPU): work a remote client never costs the
// server, which the generator would then measure as the server's
// slowness. Against rust-axum, a generator that slept at once when idle
// (as the C floor in bench/floor does) cost the server 7-9 µs per request
// against 6.3 µs for the goroutine engine, whose scheduler spins before
// it sleeps. So does the loop, briefly: at saturation responses come
// microseconds apart, and a slow server costs at most the spin per wake.
// The spinning is the generator's CPU spent by choice while it would
// otherwise sleep (Summary.SpinSeconds); the lab's guards leave it out.
func Spin(d time.Duration) Option { return func(a *Attacker) { a.spin = d } }

// Coalesce sets how long the loop engine, in the closed model, sleeps
// on its timer alone while ten responses or more are awaited, to read
// those that arrived in one batch (DefaultCoalesce), within the bounds
// below; 0 never does.
//
// A loop that waits on its sockets is woken for each response, by the
// server's CPU on loopback (Spin says why that taxes the server), and a
// spinning loop reads them one by one at the price of its spin. A loop
// asleep on its timer costs the server nothing per response and itself
// one wake per batch: against rust-axum's `string`, 50 users, eight
// alternated rounds (bench/floor/vs-lab.sh), 1.38x the C floor's CPU
// per request against the spin's 1.63x, at 1.07x the floor's
// throughput (the spin 1.05x, sleeping at once 0.96x). The loop
// coalesces while at least ten responses are awaited; it sleeps d, at
// least long enough to gather one response (the response time over the
// responses awaited) and at most a tenth of the response time, so a
// response waits on average at most a twentieth of its own time before
// its user goes on. Fewer awaited are waited for as before (Spin), and a
// response's time is the kernel's receive timestamp, never the read's.
func Coalesce(d time.Duration) Option { return func(a *Attacker) { a.coalesce = d } }
