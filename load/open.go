package load

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// schedule is the open model's timeline and its pool of workers.
//
// Subtleness ahead! The arrivals' due times come from a profile (the
// warm-up at the first rate, then the rate or its stages) walked by a
// stream (arrivals.go): even gaps, or Poisson's. One pacer goroutine
// wakes when the next ticket is due and hands every due ticket to an
// idle worker (the most recently idle first, so few connections stay
// busy; with a pool, the longest idle, so every connection of the pool
// takes its turn). A worker that finishes while tickets are overdue
// takes the next one itself, without a hop through the pacer: under
// load the pacer sleeps and workers chain requests. When all MaxInflight
// workers are busy, overdue tickets wait as a count, not as queued
// goroutines; their latency still counts from their due time, which is
// what corrects coordinated omission.
type schedule struct {
	mu      sync.Mutex
	t0      time.Time
	prof    *profile
	st      *stream // the goroutine and tick engines' arrivals
	next    int64   // tickets started
	stopped bool
	idle    []*openWorker
	workers int
	busy    int

	// offset and stride place this shard's arrivals among all shards'
	// (arrival k of the whole rate is shard k mod count's), poisson
	// and seed how they are drawn, pool the connections to spread them
	// over (OpenModel.Connections).
	offset, stride float64
	poisson        bool
	seed           uint64
	shard          int
	pool           int

	measureStart time.Time // tickets due from here are measured
	late         atomic.Int64
	queued       atomic.Int64 // measured tickets that waited for a connection
	// blockedSince is when the goroutine engine's pacer found every
	// worker busy with a ticket due (zero: not blocked); under mu.
	blockedSince time.Time
	started      atomic.Int64 // measured tickets started
	allIdle      chan struct{}
}

// sendLateness splits how late a ticket due at due started at sent: the
// generator's own lateness, and whether it waited for a connection. A
// ticket started while every connection had been busy since blockedSince
// (zero: the engine was not blocked) waited for the service: only the
// part before blockedSince is the generator's. The wait is in its
// latency, from the due time, as all of it; it is not send lateness,
// which says how far the generator itself fell behind.
func sendLateness(due, sent, blockedSince time.Time) (late time.Duration, queued bool) {
	if blockedSince.IsZero() {
		return sent.Sub(due), false
	}
	return max(blockedSince.Sub(due), 0), true
}

// measured reports whether a ticket due at due is measured (not warm-up).
func (s *schedule) measured(due time.Time) bool { return !due.Before(s.measureStart) }

// count counts a started ticket due at due that started behind its due
// time, for whatever reason (Summary.Late), and whether it waited for a
// connection.
func (s *schedule) count(due time.Time, behind time.Duration, queued bool, lateAfter time.Duration) {
	if !s.measured(due) {
		return
	}
	s.started.Add(1)
	if behind > lateAfter {
		s.late.Add(1)
	}
	if queued {
		s.queued.Add(1)
	}
}

// streams splits this shard's arrivals into n streams in turn (the loop
// engine's loops): together they are the shard's arrivals.
func (s *schedule) streams(n int) []*stream {
	out := make([]*stream, n)
	for i := range out {
		var rng *rand.Rand
		if s.poisson {
			rng = arrivalSeed(s.seed, s.shard, i+1)
		}
		out[i] = s.prof.stream(s.t0, s.offset+float64(i)*s.stride, s.stride*float64(n), rng)
	}
	return out
}

// poolShare is part i's share of the pool when n parts split it.
func poolShare(pool, n, i int) int {
	share := pool / n
	if i < pool%n {
		share++
	}
	return share
}

// ticket is one arrival handed to a worker: its number and due time.
type ticket struct {
	n   int64
	due time.Time
}

type openWorker struct {
	worker
	wake chan ticket
	s    *schedule
	user int
}

func (r *run) open(ctx context.Context, m OpenModel) Summary {
	a := r.a
	r.rec = newRecorder(r.steps, DefaultMaxReasons, 0)
	rate := m.Rate
	if len(m.Stages) > 0 && rate <= 0 {
		rate = m.Stages[0].Target
	}
	warm := a.warmup.Duration
	if a.warmup.Requests > 0 && rate > 0 {
		warm = time.Duration(float64(a.warmup.Requests) / rate * float64(time.Second))
	}
	s := &schedule{
		t0:      time.Now(),
		offset:  float64(a.shard.Index - 1),
		stride:  float64(a.shard.Count),
		poisson: m.Arrivals == Poisson,
		seed:    m.Seed,
		shard:   a.shard.Index,
		pool:    min(m.Connections, a.maxInflight),
		allIdle: make(chan struct{}, 1),
	}
	s.prof = newProfile(m, warm)
	r.rec.offered = func(from, to time.Time) float64 {
		return s.prof.expected(float64(from.Sub(s.t0)), float64(to.Sub(s.t0))) / s.stride
	}
	var rng *rand.Rand
	if s.poisson {
		rng = arrivalSeed(s.seed, s.shard, 0)
	}
	s.st = s.prof.stream(s.t0, s.offset, s.stride, rng)
	measureStart := s.t0.Add(warm)
	s.measureStart = measureStart
	length := m.Length()
	end := measureStart.Add(length)
	if warm == 0 {
		r.rec.begin(s.t0)
	} else {
		r.rec.autoStart = measureStart
		wt := time.AfterFunc(warm, func() { r.rec.begin(measureStart) })
		defer wt.Stop()
	}

	stopTick := make(chan struct{})
	tickDone := make(chan struct{})
	go func() {
		r.ticker(stopTick, length)
		close(tickDone)
	}()

	var stopFlag atomic.Bool
	dropped, loopsRan := int64(0), 0
	if te := r.tickEngine(s); te != nil {
		// On a goroutine of its own: it locks its thread (lockPrecise).
		done := make(chan struct{})
		go func() {
			defer close(done)
			te.run(ctx, end)
		}()
		<-done
	} else if loops := r.openLoops(s, end, &stopFlag); loops != nil {
		// The loop engine (loop_linux.go): each loop ends with its last
		// response, or at once when ctx is done.
		loopsRan = len(loops)
		g := startLoops(loops)
		cancelled := context.AfterFunc(ctx, func() {
			r.abortedFlag.Store(true)
			g.wake()
		})
		g.wait()
		cancelled()
		s.next = 0
		for _, l := range loops {
			s.next += l.taken
		}
		if ctx.Err() == nil {
			for _, l := range loops {
				dropped += l.st.left()
			}
		}
	} else {
		r.pace(ctx, s, end)
	}

	// Let requests in flight finish (they are bounded by the timeout),
	// unless interrupted.
	s.mu.Lock()
	s.stopped = true
	busy := s.busy
	s.mu.Unlock()
	if busy > 0 {
		select {
		case <-s.allIdle:
		case <-ctx.Done():
			r.abortedFlag.Store(true)
			r.abortConns()
			<-s.allIdle
		}
	}
	close(stopTick)
	<-tickDone
	r.rec.flush(time.Now(), r.active.Load())
	s.mu.Lock()
	for _, w := range s.idle {
		close(w.wake)
		r.dropConn(w.c)
	}
	if ctx.Err() == nil && loopsRan == 0 {
		dropped = s.st.left()
	}
	s.mu.Unlock()

	sum := Summary{Model: "open", TargetRate: rate / s.stride, Late: s.late.Load(), Queued: s.queued.Load(), Dropped: dropped,
		Shape: m.Shape(), ConnectionsOpened: r.opened.Load()}
	if len(m.Stages) > 0 {
		sum.TargetRate = s.prof.expected(float64(measureStart.Sub(s.t0)), float64(end.Sub(s.t0))) / s.stride / length.Seconds()
	}
	measured := time.Since(measureStart).Seconds()
	if ctx.Err() == nil {
		measured = length.Seconds()
	}
	if measured > 0 {
		sum.AchievedRate = float64(s.started.Load()) / measured
	}
	return sum
}

// pace hands out tickets until end or cancellation. It sleeps on a waker
// (microsecond precision; see waker) where there is one, at most once per
// PaceSlack.
func (r *run) pace(ctx context.Context, s *schedule, end time.Time) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	wk := newWaker(ctx)
	if wk != nil {
		defer wk.close()
	}
	user := 0
	for {
		s.mu.Lock()
		now := time.Now()
		if ctx.Err() != nil {
			s.stopped = true
			s.mu.Unlock()
			return
		}
		blocked := false
		for s.st.dueBy(now) {
			var w *openWorker
			if n := len(s.idle); n > 0 && s.workers >= s.pool {
				if s.pool > 0 {
					// A pool: the longest idle, so each takes its turn.
					w = s.idle[0]
					s.idle = s.idle[1:]
				} else {
					w = s.idle[n-1]
					s.idle = s.idle[:n-1]
				}
			} else if s.workers < r.a.maxInflight {
				user++
				w = &openWorker{wake: make(chan ticket, 1), s: s, user: user}
				w.r, w.c = r, r.newConn()
				s.workers++
				go w.loop()
			} else {
				blocked = true
				if s.blockedSince.IsZero() {
					s.blockedSince = now
				}
				break // all busy: workers take overdue tickets as they finish
			}
			s.busy++
			w.blockedSince = s.blockedSince
			w.wake <- ticket{s.next, s.st.due}
			s.next++
			s.st.advance()
		}
		if !blocked {
			s.blockedSince = time.Time{}
		}
		if !now.Before(end) {
			// Every ticket is due before end; those not started now are
			// dropped.
			s.stopped = true
			s.mu.Unlock()
			return
		}
		wait := time.Millisecond
		if s.st.ok {
			if d := s.st.due.Sub(now); d > 0 {
				wait = d
			}
		} else {
			wait = end.Sub(now)
		}
		s.mu.Unlock()
		// At most one wake per PaceSlack: what comes due meanwhile is sent
		// together at the next.
		wait = max(wait, r.a.paceSlack)
		if wk != nil {
			wk.sleepUntil(now.Add(wait))
			continue
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
	}
}

func (w *openWorker) loop() {
	s, r := w.s, w.r
	shards := int64(r.a.shard.Count)
	for t := range w.wake {
		for {
			n, due := t.n, t.due
			now := time.Now()
			measured := s.measured(due)
			s.count(due, now.Sub(due), !w.blockedSince.IsZero(), r.a.lateAfter)
			r.active.Add(1)
			// Arrival n of shard i is user n*N+i, unique across shards.
			u := r.sc.NewUser(int(n*shards) + r.a.shard.Index)
			w.warm = !measured
			w.iteration(u, 0, due, w.pauseStep)
			r.active.Add(-1)

			s.mu.Lock()
			if !s.stopped && s.st.dueBy(time.Now()) {
				// An overdue ticket no idle worker took: it waited for
				// this one (since the pacer found all busy, or now).
				t = ticket{s.next, s.st.due}
				s.next++
				s.st.advance()
				w.blockedSince = s.blockedSince
				if w.blockedSince.IsZero() {
					w.blockedSince = time.Now()
				}
				s.mu.Unlock()
				continue
			}
			s.idle = append(s.idle, w)
			s.busy--
			if s.busy == 0 && s.stopped {
				select {
				case s.allIdle <- struct{}{}:
				default:
				}
			}
			s.mu.Unlock()
			break
		}
	}
}

// pauseStep honours a scenario's per-step pauses in the open model.
func (w *openWorker) pauseStep(d time.Duration) bool {
	if d > 0 {
		time.Sleep(d)
	}
	return !w.r.aborted()
}
