package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

func (r *run) closed(ctx context.Context, m ClosedModel) Summary {
	a := r.a
	r.rec = newRecorder(r.steps, DefaultMaxReasons, a.warmup.Requests)
	t0 := time.Now()
	stop := make(chan struct{}) // closed when users must stop
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }

	// Measurement starts now, after a timed warm-up, or with the sample
	// that ends a counted one (the recorder decides); the controller then
	// ends it after the duration.
	switch {
	case a.warmup.Duration > 0:
		wt := time.AfterFunc(a.warmup.Duration, func() { r.rec.begin(time.Now()) })
		defer wt.Stop()
	case a.warmup.Requests <= 0:
		r.rec.begin(t0)
	}
	go func() {
		select {
		case <-r.rec.began:
		case <-stop:
			return
		}
		if m.Duration > 0 {
			select {
			case <-time.After(time.Until(r.rec.startTime().Add(m.Duration))):
				halt()
			case <-stop:
			}
		}
	}()

	stopTick := make(chan struct{})
	tickDone := make(chan struct{})
	go func() {
		r.ticker(stopTick, m.Duration)
		close(tickDone)
	}()

	// Users of this shard: global numbers u with (u-1) mod N == i-1, each
	// starting at its ramp-up offset.
	var users []int
	var starts []time.Time
	for u := a.shard.Index; u <= m.Users; u += a.shard.Count {
		offset := time.Duration(0)
		if m.Users > 1 {
			offset = time.Duration(float64(m.RampUp) * float64(u-1) / float64(m.Users))
		}
		users = append(users, u)
		starts = append(starts, t0.Add(offset))
	}
	done := make(chan struct{})
	var stopFlag atomic.Bool
	if loops := r.closedLoops(m, users, starts, &stopFlag); loops != nil {
		// The loop engine (loop_linux.go): its loops see stop through the
		// flag, woken from their waits.
		g := startLoops(loops)
		go func() {
			select {
			case <-stop:
				stopFlag.Store(true)
				g.wake()
			case <-done:
			}
		}()
		go func() { g.wait(); close(done) }()
	} else {
		var wg sync.WaitGroup
		for i, u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.user(m, u, starts[i], stop)
			}()
		}
		go func() { wg.Wait(); close(done) }()
	}
	select {
	case <-done:
	case <-ctx.Done():
		r.abortedFlag.Store(true)
		halt()
		r.abortConns()
		<-done
	}
	halt()
	close(stopTick)
	<-tickDone
	r.rec.flush(time.Now(), r.active.Load())
	return r.closedSummary(a, m)
}

func (r *run) closedSummary(a *Attacker, m ClosedModel) Summary {
	users := 0
	for u := a.shard.Index; u <= m.Users; u += a.shard.Count {
		users++
	}
	sum := Summary{Model: "closed", Users: users}
	if ms := r.rec.startTime(); !ms.IsZero() {
		reqs, _ := r.rec.totals()
		if secs := time.Since(ms).Seconds(); secs > 0 {
			sum.AchievedRate = float64(reqs) / secs
		}
	}
	return sum
}

// user runs virtual user u from at until stop or its iterations are done.
func (r *run) user(m ClosedModel, u int, at time.Time, stop <-chan struct{}) {
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-stop:
		return
	}
	r.active.Add(1)
	defer r.active.Add(-1)
	w := &worker{r: r, c: r.newConn()}
	defer r.dropConn(w.c)
	vu := r.sc.NewUser(u)
	sleep := func(d time.Duration) bool {
		if d <= 0 {
			select {
			case <-stop:
				return false
			default:
				return true
			}
		}
		timer.Reset(d)
		select {
		case <-timer.C:
			return true
		case <-stop:
			return false
		}
	}
	pause := func(d time.Duration) bool { return sleep(d + m.ThinkTime) }
	for iter := 0; m.Iterations == 0 || iter < m.Iterations; iter++ {
		select {
		case <-stop:
			return
		default:
		}
		if w.iteration(vu, iter, time.Time{}, pause) {
			// The target refused the connection: back off a little so a
			// dead target does not turn users into a busy loop.
			if !sleep(r.a.dialBackoff) {
				return
			}
		}
	}
}
