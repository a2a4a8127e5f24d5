package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// schedule is the open model's timeline and its pool of workers.
//
// Subtleness ahead! Ticket n is due at t0+phase+n*interval. One pacer
// goroutine wakes when the next ticket is due and hands every due ticket to
// an idle worker (the most recently idle first, so few connections stay
// busy). A worker that finishes while tickets are overdue takes the next one
// itself, without a hop through the pacer: under load the pacer sleeps and
// workers chain requests. When all MaxInflight workers are busy, overdue
// tickets wait as a count, not as queued goroutines; their latency still
// counts from their due time, which is what corrects coordinated omission.
type schedule struct {
	mu       sync.Mutex
	t0       time.Time
	phase    float64 // ns
	interval float64 // ns
	total    int64   // tickets due before end
	next     int64
	stopped  bool
	idle     []*openWorker
	workers  int
	busy     int

	measureFrom int64 // first measured ticket
	late        atomic.Int64
	queued      atomic.Int64 // measured tickets that waited for a connection
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

// count counts a started ticket n that started behind its due time, for
// whatever reason (Summary.Late), and whether it waited for a connection.
func (s *schedule) count(n int64, behind time.Duration, queued bool, lateAfter time.Duration) {
	if n < s.measureFrom {
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

func (s *schedule) due(n int64) time.Time {
	return s.t0.Add(time.Duration(s.phase + float64(n)*s.interval))
}

type openWorker struct {
	worker
	wake chan int64
	s    *schedule
	user int
}

func (r *run) open(ctx context.Context, m OpenModel) Summary {
	a := r.a
	r.rec = newRecorder(r.steps, DefaultMaxReasons, 0)
	rate := m.Rate / float64(a.shard.Count)
	warm := a.warmup.Duration
	if a.warmup.Requests > 0 {
		warm = time.Duration(float64(a.warmup.Requests) / m.Rate * float64(time.Second))
	}
	s := &schedule{
		t0:       time.Now(),
		phase:    float64(a.shard.Index-1) * 1e9 / m.Rate,
		interval: 1e9 / rate,
		allIdle:  make(chan struct{}, 1),
	}
	measureStart := s.t0.Add(warm)
	end := measureStart.Add(m.Duration)
	span := float64(end.Sub(s.t0)) - s.phase
	s.total = int64(span / s.interval)
	if float64(s.total)*s.interval < span {
		s.total++
	}
	mspan := float64(measureStart.Sub(s.t0)) - s.phase
	if mspan > 0 {
		s.measureFrom = int64(mspan / s.interval)
		if float64(s.measureFrom)*s.interval < mspan {
			s.measureFrom++
		}
	}
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
		r.ticker(stopTick, m.Duration)
		close(tickDone)
	}()

	var stopFlag atomic.Bool
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
	dropped := int64(0)
	if ctx.Err() == nil {
		dropped = s.total - s.next
	}
	s.mu.Unlock()

	sum := Summary{Model: "open", TargetRate: rate, Late: s.late.Load(), Queued: s.queued.Load(), Dropped: dropped}
	measured := time.Since(measureStart).Seconds()
	if ctx.Err() == nil {
		measured = m.Duration.Seconds()
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
		for s.next < s.total && !s.due(s.next).After(now) {
			var w *openWorker
			if n := len(s.idle); n > 0 {
				w = s.idle[n-1]
				s.idle = s.idle[:n-1]
			} else if s.workers < r.a.maxInflight {
				user++
				w = &openWorker{wake: make(chan int64, 1), s: s, user: user}
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
			w.wake <- s.next
			s.next++
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
		if s.next < s.total {
			if d := s.due(s.next).Sub(now); d > 0 {
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
	for n := range w.wake {
		for {
			due := s.due(n)
			now := time.Now()
			measured := n >= s.measureFrom
			s.count(n, now.Sub(due), !w.blockedSince.IsZero(), r.a.lateAfter)
			r.active.Add(1)
			// Arrival n of shard i is user n*N+i, unique across shards.
			u := r.sc.NewUser(int(n*shards) + r.a.shard.Index)
			w.warm = !measured
			w.iteration(u, 0, due, w.pauseStep)
			r.active.Add(-1)

			s.mu.Lock()
			if !s.stopped && s.next < s.total && !s.due(s.next).After(time.Now()) {
				// An overdue ticket no idle worker took: it waited for
				// this one (since the pacer found all busy, or now).
				n = s.next
				s.next++
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
