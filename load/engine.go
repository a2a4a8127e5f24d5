package load

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Attacker runs a Scenario under a Model and measures it. Build one with
// NewAttacker; it may run several attacks, one at a time.
type Attacker struct {
	timeout       time.Duration
	maxInflight   int
	warmup        WarmupPhase
	shard         Shard
	progress      func(Progress)
	lateAfter     time.Duration
	optionsRecord map[string]string
	limits        Limits
	paceSlack     time.Duration
	spin          time.Duration
	coalesce      time.Duration

	// noTick disables the tick and loop engines (tests compare them with
	// the goroutine engine).
	noTick bool

	// dialBackoff is how long a closed-model user waits after failing to
	// connect, so a dead target does not turn users into a busy loop.
	dialBackoff time.Duration
}

// NewAttacker returns an Attacker with the Default* settings changed by opts.
func NewAttacker(opts ...Option) *Attacker {
	a := &Attacker{
		timeout:     DefaultTimeout,
		maxInflight: DefaultMaxInflight,
		shard:       Shard{1, 1},
		lateAfter:   DefaultLateAfter,
		paceSlack:   DefaultPaceSlack,
		spin:        DefaultSpin,
		coalesce:    DefaultCoalesce,
		dialBackoff: 100 * time.Millisecond,
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

// StatusChecker is an optional interface of a User: ChecksStatus reports
// whether the user's Check asserts the status of step itself. Otherwise the
// engine counts any non-2xx status as an error ("status 503").
type StatusChecker interface {
	ChecksStatus(step int) bool
}

// Attack runs sc under m until the model ends or ctx is cancelled, and
// returns what was measured (also when interrupted: Summary.Interrupted).
func (a *Attacker) Attack(ctx context.Context, sc Scenario, m Model) (*Result, error) {
	if errs := m.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if a.maxInflight <= 0 {
		return nil, errors.New("max-inflight: must be > 0")
	}
	if a.paceSlack < 0 {
		return nil, errors.New("pace slack: must not be negative")
	}
	if a.spin < 0 {
		return nil, errors.New("spin: must not be negative")
	}
	if a.coalesce < 0 {
		return nil, errors.New("coalesce: must not be negative")
	}
	if errs := a.limits.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if a.shard.Count < 1 {
		a.shard = Shard{1, 1}
	}
	steps := sc.Steps()
	if len(steps) == 0 {
		return nil, errors.New("scenario has no steps")
	}
	run := &run{a: a, sc: sc, steps: steps}
	var sum Summary
	switch m := m.(type) {
	case OpenModel:
		sum = run.open(ctx, m)
	case ClosedModel:
		sum = run.closed(ctx, m)
	default:
		return nil, fmt.Errorf("unknown model %T", m)
	}
	sum.Version = 1
	// CPU is counted from the end of warm-up, like the samples.
	sum.CPUSeconds = (processCPU() - run.rec.cpu0).Seconds()
	if run.rec.measuring {
		sum.SpinSeconds = time.Duration(run.rec.spin.Load() - run.rec.spin0).Seconds()
	}
	sum.CPUs = runtime.GOMAXPROCS(0)
	sum.Interrupted = ctx.Err() != nil
	sum.Options = a.optionsRecord
	sum.LateAfterMs = float64(a.lateAfter) / 1e6
	if s := a.shard.String(); s != "" {
		sum.Shards = []string{s}
	}
	res := run.rec.result(sum)
	res.Summary.Warnings = warnings(&res.Summary)
	return res, nil
}

// warnings states when the generator, not the target, probably limited the
// measurement.
func warnings(s *Summary) []string {
	var w []string
	if s.DurationSeconds > 0 && s.CPUs > 0 {
		// The loops' spinning for responses (Spin) is CPU the generator
		// gives up as soon as there is work: not load.
		util := s.BusyCPUSeconds() / (s.DurationSeconds * float64(s.CPUs))
		if util > 0.9 {
			spin := ""
			if s.SpinSeconds > 0 {
				spin = fmt.Sprintf(", besides %.0f%% spinning for responses", 100*s.SpinSeconds/(s.DurationSeconds*float64(s.CPUs)))
			}
			w = append(w, fmt.Sprintf("the generator used %.0f%% of its %d CPU(s)%s: it may have been the bottleneck, not the target", 100*util, s.CPUs, spin))
		}
	}
	started := s.AchievedRate * s.DurationSeconds
	if s.Late > 0 && started > 0 && float64(s.Late)/started > 0.01 {
		w = append(w, fmt.Sprintf("%d sends (%.1f%%) started late: the target or the generator could not keep the schedule (try a larger --max-inflight, or check the generator's CPU)", s.Late, 100*float64(s.Late)/started))
	}
	if s.Dropped > 0 {
		w = append(w, fmt.Sprintf("%d scheduled sends were dropped (never started before the end)", s.Dropped))
	}
	return w
}

// run is one attack in progress.
type run struct {
	a     *Attacker
	sc    Scenario
	steps []string
	rec   *recorder

	active atomic.Int64 // requests in flight or users active
	// opened counts the connections the open model opened.
	opened atomic.Int64

	connMu sync.Mutex
	conns  map[*conn]struct{}

	abortedFlag atomic.Bool
}

func (r *run) newConn() *conn {
	r.opened.Add(1)
	c := newConn(r.a.timeout, r.a.limits)
	r.connMu.Lock()
	if r.conns == nil {
		r.conns = map[*conn]struct{}{}
	}
	r.conns[c] = struct{}{}
	r.connMu.Unlock()
	return c
}

func (r *run) dropConn(c *conn) {
	c.close()
	r.connMu.Lock()
	delete(r.conns, c)
	r.connMu.Unlock()
}

// abortConns makes every request in flight fail now (on interrupt).
func (r *run) abortConns() {
	r.connMu.Lock()
	for c := range r.conns {
		c.abort()
	}
	r.connMu.Unlock()
}

// ticker flushes intervals once a second from the start of measurement,
// and reports progress (also during warm-up), until stop is closed. total
// is the planned measured duration (0 if unknown).
func (r *run) ticker(stop <-chan struct{}, total time.Duration) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	began := r.rec.began
	var start time.Time
	ticks := 0
	for {
		select {
		case <-stop:
			return
		case <-began:
			// Restart the ticks at the start of measurement, so interval k
			// covers second k of the measured run.
			began = nil
			start = r.rec.startTime()
			t.Reset(max(time.Until(start.Add(time.Second)), time.Millisecond))
			continue
		case now := <-t.C:
			if began != nil {
				if r.a.progress != nil {
					r.a.progress(Progress{Warmup: true, Active: r.active.Load()})
				}
				continue
			}
			ticks++
			// A machine that stalled past the next second boundary must
			// not stop the run: Reset panics on a non-positive interval.
			t.Reset(max(time.Until(start.Add(time.Duration(ticks+1)*time.Second)), time.Millisecond))
			iv := r.rec.flush(now, r.active.Load())
			if r.a.progress != nil && iv != nil {
				p := Progress{Elapsed: now.Sub(start), Active: iv.Active, IntervalP50: time.Duration(iv.P50 * 1e6)}
				if total > 0 {
					p.Remaining = max(0, total-p.Elapsed)
				}
				if iv.Seconds > 0 {
					p.Rate = float64(iv.Requests) / iv.Seconds
				}
				p.Requests, p.Errors = r.rec.totals()
				p.P99 = r.rec.p99()
				r.a.progress(p)
			}
		}
	}
}

// worker is the per-connection state that runs iterations.
type worker struct {
	r    *run
	c    *conn
	req  Request
	resp Response
	// warm marks an open-model iteration scheduled during warm-up.
	warm bool
	// blockedSince, for an open-model iteration that waited for a free
	// worker, is when the wait began (sendLateness); zero otherwise. The
	// pacer sets it under the schedule's lock before it hands the ticket
	// over.
	blockedSince time.Time
}

func (w *worker) record(step int, lat, svc, late time.Duration, sent, recv, status int, reason string) {
	if !w.warm {
		w.r.rec.record(step, lat, svc, late, sent, recv, status, reason)
	}
}

// iteration runs one pass over the steps for user u. due is the intended
// start of the first step (the open model's schedule) or zero. It reports
// whether the iteration failed to connect.
func (w *worker) iteration(u User, iter int, due time.Time, pause func(time.Duration) bool) (dialFail bool) {
	sc, _ := u.(StatusChecker)
	pauser, _ := w.r.sc.(Pauser)
	think := time.Duration(0)
	for step := range w.r.steps {
		w.req.Reset()
		if err := u.Request(iter, step, &w.req); err != nil {
			w.record(step, 0, 0, noLateness, 0, 0, 0, "request: "+err.Error())
			return false
		}
		var x exchange
		err := w.c.do(&w.req, &w.resp, &x)
		done := time.Now()
		start, late := x.sent, noLateness
		if step == 0 && !due.IsZero() {
			start = due
			late, _ = sendLateness(due, x.sent, w.blockedSince)
		}
		lat, svc := done.Sub(start), done.Sub(x.sent)
		if err != nil {
			if w.r.aborted() {
				return false
			}
			w.record(step, lat, svc, late, x.sentN, x.recvN, 0, transportReason(err))
			return x.dialFail
		}
		reason := ""
		if (sc == nil || !sc.ChecksStatus(step)) && (x.status < 200 || x.status > 299) {
			reason = "status " + itoa(x.status)
		}
		if cerr := u.Check(iter, step, &w.resp); cerr != nil && reason == "" {
			var ce *CheckError
			if errors.As(cerr, &ce) {
				reason = ce.Reason
			} else {
				reason = cerr.Error()
			}
		}
		w.record(step, lat, svc, late, x.sentN, x.recvN, x.status, reason)
		if reason != "" {
			return false
		}
		if pauser != nil {
			think = pauser.Pause(step)
		}
		if pause != nil && !pause(think) {
			return false
		}
	}
	return false
}

func (r *run) aborted() bool { return r.abortedFlag.Load() }
