//go:build linux

package load

import (
	"errors"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The loop engine runs any Scenario, in the closed model and (but for a
// plain URL, which the tick engine runs) in the open model, on Linux.
//
// Subtleness ahead! The goroutine engine parks one goroutine per virtual
// user in the runtime's poller: every response costs a poller wake-up, a
// goroutine switch and the scheduler's bookkeeping, about as much CPU as
// the request's own write and read. Here one goroutine per generator CPU
// (runtime.GOMAXPROCS) owns the sockets of its share of the users, raw and
// non-blocking, unknown to the runtime's poller, and an epoll instance of
// its own. It is locked to its OS thread and sleeps in epoll_pwait2, whose
// timeout is in nanoseconds, with the thread's timer slack set to 1 ns, so
// one system call both waits for the next timer (ramp-up, think time,
// pauses) and returns the sockets that have news. Each user is a small
// state machine (iteration, step): when a response is complete the user's
// Check runs and the next step's request is written at once, in the same
// pass over the events. A response is timed by the kernel's receive
// timestamp (SO_TIMESTAMPNS), so a response read late in a long batch of
// events is not timed by when the loop reached it. Timeouts are found by a
// scan of the requests in flight every scanEvery (a tenth of the timeout,
// within 1-50 ms). http:// only, as the goroutine engine;
// WithoutTickEngine runs the goroutine engine instead.
//
// In the open model each loop paces every L-th ticket of the schedule (L
// loops) on its own share of MaxInflight connections: a ticket due takes
// an idle connection and a fresh user and runs its iteration, step after
// step as in the closed model; the loop's wait ends at the next due time
// (never before: requests are not sent early), at most once per PaceSlack
// (a wake sends what has come due since the last send), or at a
// response. With every connection busy, overdue tickets wait as a count,
// and a connection that frees takes the next one at once: their latency
// still runs from their due time.
//
// The loop is one file on purpose, read from the top: its setup, the
// loop and its waits, then a request's life in order (begin, dial,
// write, event, read, complete, finish, the iteration's end), then the
// timeout scan and the timer heap. Every step moves the same lconn and
// user state machine and hands it to the next; split across files, a
// step would sit away from the transitions it depends on.
const (
	maxScanEvery = 50 * time.Millisecond
	minScanEvery = time.Millisecond
	// maxWait bounds one wait, so a loop looks at its flags at least this
	// often even if a wake-up were lost.
	maxWait = time.Second
)

// lconn is one connection of a loop and the user it carries: in the
// closed model always the same user, in the open model the user of the
// ticket in progress.
type lconn struct {
	fd         int
	gen        int32 // which socket of c's an epoll event is about (epoll_event's pad)
	connecting bool
	wantOut    bool
	reused     bool
	retried    bool
	busy       bool // a request in flight
	started    bool // closed model: the user has begun (its ramp-up offset passed)
	done       bool // closed model: the user has ended
	addr       string

	user       int
	u          User
	sc         StatusChecker
	iter, step int
	req        Request
	resp       Response
	wbuf       []byte
	built      bool // wbuf holds a plain URL's request, which never changes
	wrote, got int
	p          *respParser
	sent       time.Time
	arrived    time.Time

	// Open model: the ticket in progress, its due time, and whether it
	// falls in the warm-up (its samples are not counted); queuedFrom is
	// when the loop began to wait for a free connection for it (zero:
	// it found one; sendLateness).
	ticket     int64
	due        time.Time
	warm       bool
	queuedFrom time.Time

	wakeAt time.Time
	hi     int // index in the timer heap, -1 when not in it

	lastURL, lastAddr, lastHost, lastPath string
}

// loop is one event loop of the loop engine: a share of the users, or of
// the open model's tickets.
type loop struct {
	r       *run
	m       ClosedModel
	ep, efd int
	events  []unix.EpollEvent
	byFD    sockets[lconn]
	users   []*lconn // every connection (and user) of the loop
	timers  []*lconn // a binary heap on wakeAt
	rbuf    []byte
	oob     []byte
	msg     rawMsg
	addrs   map[string]syscall.Sockaddr
	busy    int
	live    int // closed model: users not ended
	pauser  Pauser
	scanned time.Time
	every   time.Duration
	stop    *atomic.Bool
	waiter  epollWaiter

	// Open model: the schedule, this loop's tickets (next, next+stride,
	// ...), its share of MaxInflight, its idle connections, and when it
	// last sent a ticket (the slack counts from there).
	// blockedSince is when the loop found every connection of its
	// share busy with a ticket due (zero: not blocked).
	blockedSince time.Time
	open         bool
	s            *schedule
	st           *stream // this loop's share of the arrivals
	pool         int     // its share of the pool (OpenModel.Connections)
	next         int64
	stride       int64
	taken        int64 // tickets started
	maxConns     int
	idle         []*lconn
	lastSend     time.Time
	until        time.Time
	inflight     int // open model: iterations in progress

	// lazy (the open model, one step, no pauses: lazyReads): the loop
	// sleeps on its timer alone (tep: an epoll instance that holds only
	// efd) and reads the responses at its wakes (poll), as the tick
	// engine does: the kernel's receive timestamps keep their times, and
	// a response costs no wake-up of its own. With several steps the next
	// one is written as its predecessor's response arrives. A lazy loop
	// with a ticket due and no idle connection waits on its sockets.
	lazy    bool
	tep     int
	tevents [1]unix.EpollEvent
	polled  time.Time

	// lat is the closed model's recent response time (a moving average
	// over about 16 responses): what Coalesce sleeps a share of.
	lat time.Duration
}

// newLoops returns n loops with their epoll instances, or nil when the
// system lacks epoll or eventfd.
func (r *run) newLoops(n int, stop *atomic.Bool) []*loop {
	every := min(max(r.a.timeout/10, minScanEvery), maxScanEvery)
	if r.a.timeout <= 0 {
		every = maxScanEvery
	}
	pauser, _ := r.sc.(Pauser)
	loops := make([]*loop, 0, n)
	for i := 0; i < n; i++ {
		l := &loop{r: r, events: make([]unix.EpollEvent, 256), rbuf: make([]byte, 64<<10), oob: make([]byte, 128),
			addrs: map[string]syscall.Sockaddr{}, pauser: pauser, every: every, stop: stop, ep: -1, efd: -1, tep: -1}
		var err error
		if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err == nil {
			l.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
			if err == nil {
				ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(l.efd)}
				err = unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.efd, &ev)
			}
			if err == nil {
				l.tep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC)
			}
			if err == nil {
				ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(l.efd)}
				err = unix.EpollCtl(l.tep, unix.EPOLL_CTL_ADD, l.efd, &ev)
			}
		}
		if err != nil {
			l.release()
			for _, o := range loops {
				o.release()
			}
			return nil
		}
		loops = append(loops, l)
	}
	return loops
}

// closedLoops returns the loop engine's loops for the users of this
// shard (users, with their ramp-up starts), one per generator CPU, or nil
// when it cannot run (not asked for, or the system lacks epoll or
// eventfd).
func (r *run) closedLoops(m ClosedModel, users []int, starts []time.Time, stop *atomic.Bool) []*loop {
	if r.a.noTick || len(users) == 0 {
		return nil
	}
	n := min(runtime.GOMAXPROCS(0), len(users))
	loops := r.newLoops(n, stop)
	if loops == nil {
		return nil
	}
	// A plain URL's Check looks at nothing: its bodies are not kept.
	_, plain := r.sc.(*Target)
	keep := !plain
	// Users are dealt to the loops in turn, so each loop gets its share of
	// every part of the ramp-up.
	for i, u := range users {
		l := loops[i%n]
		l.m = m
		c := &lconn{fd: -1, hi: -1, user: u, wakeAt: starts[i], p: newRespParser(r.a.limits, keep)}
		l.users = append(l.users, c)
		l.push(c)
	}
	for _, l := range loops {
		l.live = len(l.users)
	}
	return loops
}

// openLoops returns the loop engine's loops for the open model's
// schedule s until end, one per generator CPU (at most MaxInflight), or
// nil when it cannot run.
func (r *run) openLoops(s *schedule, end time.Time, stop *atomic.Bool) []*loop {
	if r.a.noTick {
		return nil
	}
	n := max(min(runtime.GOMAXPROCS(0), r.a.maxInflight), 1)
	loops := r.newLoops(n, stop)
	lazy := lazyReads(r.sc, len(r.steps))
	streams := s.streams(len(loops))
	for i, l := range loops {
		l.open, l.s, l.until = true, s, end
		l.st, l.pool = streams[i], poolShare(s.pool, len(loops), i)
		l.lazy = lazy
		l.next, l.stride = int64(i), int64(n)
		l.maxConns = r.a.maxInflight / n
		if i < r.a.maxInflight%n {
			l.maxConns++
		}
	}
	return loops
}

// release closes the loop's epoll instance and eventfd.
func (l *loop) release() {
	if l.ep >= 0 {
		syscall.Close(l.ep)
	}
	if l.efd >= 0 {
		syscall.Close(l.efd)
	}
	if l.tep >= 0 {
		syscall.Close(l.tep)
	}
	l.ep, l.efd, l.tep = -1, -1, -1
}

// wake ends the loop's current wait (from any goroutine), so it sees its
// stop flag or the run's abort at once.
func (l *loop) wake() { eventfdWrite(l.efd) }

// run runs the loop until its work is done: in the closed model until
// each user has ended (its iterations done, or the stop flag set), in the
// open model until the schedule's end and the last response; or until
// the run is aborted.
func (l *loop) run() {
	defer lockPrecise()()
	defer func() {
		for _, c := range l.users {
			if c.fd >= 0 {
				syscall.Close(c.fd)
				c.fd = -1
			}
			if c.started && !c.done && !l.open {
				l.r.active.Add(-1)
			}
		}
		if l.open {
			l.r.active.Add(-int64(l.inflight))
		}
		// The epoll instance and the eventfd stay open until every wake
		// is over (loopGroup.wait).
	}()
	r := l.r
	sending := l.open
	for {
		if r.aborted() {
			return
		}
		now := time.Now()
		stopping := l.stop.Load()
		for len(l.timers) > 0 && (stopping || !l.timers[0].wakeAt.After(now)) {
			c := l.pop()
			if stopping {
				l.endIteration(c, false)
				continue
			}
			l.begin(c, now)
		}
		blocked := false
		if sending {
			blocked = l.pace(now)
			sending = now.Before(l.until) && !stopping
		}
		if l.lazy {
			// After the sends, so no due request waits for the reads.
			l.poll()
			if blocked && len(l.idle) > 0 {
				// The reads freed connections for the tickets waiting:
				// send them now, on the next pass (a blocked loop's wait
				// would last until a response that is no longer coming).
				continue
			}
		}
		if l.busy > 0 && now.Sub(l.scanned) >= l.every {
			l.scan(now)
		}
		if (!l.open && l.live == 0) || (l.open && !sending && l.inflight == 0) {
			return
		}
		wait := maxWait
		if len(l.timers) > 0 {
			wait = min(wait, l.timers[0].wakeAt.Sub(now))
		}
		if l.busy > 0 {
			// With responses awaited the wait is short and made raw (see
			// rawWaitMax), so the loop keeps its processor.
			wait = min(wait, l.scanned.Add(l.every).Sub(now), rawWaitMax)
		}
		if sending {
			// The next due time, no sooner than the slack after the last
			// send; with every connection busy, a response ends the wait.
			wake := l.until
			if l.st.ok && !blocked {
				wake = minTime(wake, l.st.due)
			}
			wake = maxTime(wake, l.lastSend.Add(r.a.paceSlack))
			wait = min(wait, wake.Sub(now))
		}
		if x := l.coalesceFor(wait); x > 0 {
			// Closed, many responses awaited: sleep on the timer alone
			// and read what arrived in one batch (Coalesce).
			coalescedWaits.Add(1)
			for old := coalescedLongest.Load(); int64(x) > old && !coalescedLongest.CompareAndSwap(old, int64(x)); old = coalescedLongest.Load() {
			}
			l.sleep(x)
			l.poll()
			continue
		}
		if !l.lazy || blocked {
			// A lazy loop with a ticket due and every connection busy
			// waits on its sockets too: the first response frees a
			// connection for it, where a read at the next poll would
			// hold the ticket up to pollEvery in a queue of the
			// generator's making (and count that as the service's).
			l.handle(l.spinWait(max(wait, 0)))
			continue
		}
		// Lazy: sleep on the timer alone, and look at the sockets every
		// pollEvery while the last responses are awaited, every pollIdle
		// while tickets are sent (a due ticket that finds no idle
		// connection polls at once: poll).
		if l.busy > 0 {
			p := l.polled.Add(pollIdle)
			if !sending {
				p = l.polled.Add(pollEvery)
			}
			wait = min(wait, p.Sub(now))
		}
		if wait > 0 {
			l.sleep(wait)
		}
	}
}

// sleep waits up to d on the loop's timer alone (tep holds only efd, so
// a wake ends it), not on its sockets.
func (l *loop) sleep(d time.Duration) {
	if l.waiter.wait(l.tep, l.tevents[:], d) > 0 {
		var b [8]byte
		rawRead(l.efd, b[:])
	}
}

// coalescedWaits counts the closed model's sleeps on the timer alone
// (Coalesce), for the tests.
var coalescedWaits atomic.Int64

// coalescedLongest is the longest of those sleeps asked for, in ns, for
// the tests: what the rule decided, whatever the machine made of it.
var coalescedLongest atomic.Int64

// coalesceFor is how long the closed model's loop sleeps on its timer
// alone before it reads what arrived (Coalesce), at most wait; 0: it
// waits on its sockets (spinWait). It does while at least
// coalesceMinBusy responses are awaited, whatever their time: a rule
// that asked how many responses a sleep should gather would switch
// with the server's speed, and coalescing itself makes a server faster
// (it no longer wakes the generator), a feedback that could leave a
// server near the threshold in either mode. The sleep is the setting, at least
// long enough to gather one response (lat / busy) and at most a tenth
// of the response time, so a response waits on average at most a
// twentieth of it for its read.
func (l *loop) coalesceFor(wait time.Duration) time.Duration {
	if l.open || l.r.a.coalesce <= 0 || l.busy < coalesceMinBusy || l.lat <= 0 || wait <= 0 {
		return 0
	}
	return min(l.lat/10, max(l.r.a.coalesce, l.lat/time.Duration(l.busy)), wait)
}

// coalesceMinBusy is how many responses must be awaited for the closed
// model's loop to coalesce: with ten, a sleep of a tenth of the response
// time gathers one on average.
const coalesceMinBusy = 10

// threadCPU is the calling thread's CPU time (the loop's: it is locked
// to its thread).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// spinWait waits up to d for events like wait, first spinning up to
// the Spin setting while responses are awaited, in the closed model (see
// Spin for why): in the open
// model the rate, not the server's speed, paces the requests, and a spin
// per request would cost most at low rates.
func (l *loop) spinWait(d time.Duration) int {
	if l.busy == 0 || d <= 0 || l.open || l.r.a.spin == 0 {
		return l.wait(d)
	}
	// The spin counted is the thread's CPU time over it, not the time
	// that passed: on a busy machine the thread may be off its CPU in
	// the middle of a spin, and counting that would leave the guards'
	// busy CPU (CPU minus spin) near zero.
	start, cpu0 := time.Now(), threadCPU()
	for range 1000 {
		if n := l.wait(0); n > 0 {
			l.r.rec.spin.Add(int64(threadCPU() - cpu0))
			return n
		}
		if time.Since(start) >= min(l.r.a.spin, d) {
			break
		}
	}
	l.r.rec.spin.Add(int64(threadCPU() - cpu0))
	return l.wait(d - time.Since(start))
}

// poll reads the responses that have arrived, in batches of events
// until one is not full: in the closed model after a coalesced sleep
// (Coalesce); in lazy mode at every wake of the loop (a due time, at
// most once per PaceSlack, or pollIdle and pollEvery when none comes),
// after its sends, and before a due ticket is left waiting for a
// connection. Each read finds a few responses, never a burst that would
// hold the next sends up.
func (l *loop) poll() {
	if l.busy == 0 {
		return
	}
	l.polled = time.Now()
	for range 64 { // a full batch of events is followed by another, boundedly
		n := l.wait(0)
		l.handle(n)
		if n < len(l.events) {
			return
		}
	}
}

// handle advances the connections of the first n events in l.events.
func (l *loop) handle(n int) {
	for _, ev := range l.events[:n] {
		fd := int(ev.Fd)
		if fd == l.efd {
			var b [8]byte
			rawRead(fd, b[:])
			continue
		}
		if fd >= len(l.byFD) || l.byFD[fd] == nil || l.byFD[fd].gen != ev.Pad {
			continue
		}
		l.event(l.byFD[fd], ev.Events)
	}
}

// pace starts every ticket of the loop that is due at now, on idle
// connections; it reports whether one is left waiting for a connection.
func (l *loop) pace(now time.Time) (blocked bool) {
	s, r := l.s, l.r
	for l.st.ok {
		due := l.st.due
		if due.After(now) {
			l.blockedSince = time.Time{}
			return false
		}
		c := l.conn()
		if c == nil {
			if l.blockedSince.IsZero() {
				l.blockedSince = now
			}
			return true // every connection busy: overdue tickets wait as a count
		}
		n := l.next
		l.next += l.stride
		l.st.advance()
		l.taken++
		measured := s.measured(due)
		s.count(due, now.Sub(due), !l.blockedSince.IsZero(), r.a.lateAfter)
		// Arrival n of shard i is user n*N+i, unique across shards.
		c.ticket, c.due, c.warm, c.queuedFrom = n, due, !measured, l.blockedSince
		id := int(n*int64(r.a.shard.Count)) + r.a.shard.Index
		if rn, ok := r.sc.(UserRenewer); ok && c.u != nil {
			c.u = rn.RenewUser(c.u, id)
		} else {
			c.u = r.sc.NewUser(id)
		}
		c.sc, _ = c.u.(StatusChecker)
		c.iter, c.step = 0, 0
		l.inflight++
		r.active.Add(1)
		l.lastSend = now
		l.begin(c, now)
	}
	return false
}

// conn returns an idle connection of the loop (the most recently idle,
// or with a pool the longest idle once its share of the pool is open), a
// new one, or nil when all of its share of MaxInflight are busy.
func (l *loop) conn() *lconn {
	if l.lazy && l.pool > 0 && len(l.idle) == 0 && len(l.users) >= l.pool {
		// Its pool is busy: read the responses that have come since the
		// last wake before a new connection is opened for a ticket that
		// one of them would free.
		l.poll()
	}
	if n := len(l.idle); n > 0 && len(l.users) >= l.pool {
		if l.pool > 0 {
			c := l.idle[0]
			l.idle = l.idle[1:]
			return c
		}
		c := l.idle[n-1]
		l.idle = l.idle[:n-1]
		return c
	}
	if len(l.users) >= l.maxConns {
		if n := len(l.idle); n > 0 {
			c := l.idle[0]
			l.idle = l.idle[1:]
			return c
		}
		return nil
	}
	l.r.opened.Add(1)
	_, plain := l.r.sc.(*Target)
	c := &lconn{fd: -1, hi: -1, p: newRespParser(l.r.a.limits, !plain)}
	l.users = append(l.users, c)
	return c
}

// wait sleeps up to d for socket news or a wake, and returns the number
// of events in l.events.
func (l *loop) wait(d time.Duration) int { return l.waiter.wait(l.ep, l.events, d) }

// begin starts user c's next step at now (its first, after the ramp-up
// offset or a pause), or ends the user when its iterations are done.
func (l *loop) begin(c *lconn, now time.Time) {
	r := l.r
	if !l.open {
		if !c.started {
			c.started = true
			r.active.Add(1)
			c.u = r.sc.NewUser(c.user)
			c.sc, _ = c.u.(StatusChecker)
		}
		if c.step == 0 && l.m.Iterations > 0 && c.iter >= l.m.Iterations {
			l.end(c)
			return
		}
	}
	if !c.built {
		c.req.Reset()
		if err := c.u.Request(c.iter, c.step, &c.req); err != nil {
			l.record(c, c.step, 0, 0, noLateness, 0, 0, 0, "request: "+err.Error())
			l.endIteration(c, false)
			return
		}
		if c.req.URL != c.lastURL {
			addr, host, path, err := splitURL(c.req.URL)
			if err != nil {
				l.record(c, c.step, 0, 0, noLateness, 0, 0, 0, transportReason(err))
				l.endIteration(c, false)
				return
			}
			c.lastURL, c.lastAddr, c.lastHost, c.lastPath = c.req.URL, addr, host, path
		}
		c.wbuf = appendRequest(c.wbuf[:0], &c.req, c.lastHost, c.lastPath)
		// A plain URL's request is the same every time: its bytes are
		// built once per connection and sent again as they are.
		_, c.built = l.r.sc.(*Target)
	}
	c.retried, c.got, c.wrote = false, 0, 0
	c.arrived = time.Time{}
	c.p.reset(c.req.Method == "HEAD")
	c.busy = true
	l.busy++
	if l.busy == 1 {
		l.scanned = now
	}
	if c.fd < 0 || c.addr != c.lastAddr {
		l.closeFD(c)
		if err := l.dial(c); err != nil {
			c.sent = time.Now()
			l.fail(c, c.sent, err, true)
			return
		}
	}
	c.sent = time.Now()
	if !c.connecting {
		l.write(c)
	}
}

// dial opens a non-blocking connection for c to c.lastAddr.
func (l *loop) dial(c *lconn) error {
	sa, ok := l.addrs[c.lastAddr]
	if !ok {
		ta, err := net.ResolveTCPAddr("tcp", c.lastAddr)
		if err != nil {
			return &net.OpError{Op: "dial", Net: "tcp", Err: err}
		}
		if ip4 := ta.IP.To4(); ip4 != nil {
			s := &syscall.SockaddrInet4{Port: ta.Port}
			copy(s.Addr[:], ip4)
			sa = s
		} else {
			s := &syscall.SockaddrInet6{Port: ta.Port}
			copy(s.Addr[:], ta.IP.To16())
			sa = s
		}
		l.addrs[c.lastAddr] = sa
	}
	family := syscall.AF_INET
	if _, ok := sa.(*syscall.SockaddrInet6); ok {
		family = syscall.AF_INET6
	}
	fd, inProgress, err := dialSocket(family, sa)
	if err != nil {
		return &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	// An event about a socket closed earlier in the same batch of events
	// must not reach the connection that got its number: the generation
	// tells them apart.
	c.gen++
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd), Pad: c.gen}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		syscall.Close(fd)
		return &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	c.fd, c.connecting, c.wantOut, c.reused, c.addr = fd, inProgress, true, false, c.lastAddr
	l.byFD.add(fd, c)
	return nil
}

// closeFD closes c's socket (which also leaves the epoll set).
func (l *loop) closeFD(c *lconn) {
	l.byFD.close(c.fd)
	c.fd, c.reused, c.connecting = -1, false, false
}

// interest registers c for writability only while it has bytes to write.
func (l *loop) interest(c *lconn) {
	want := c.connecting || c.wrote < len(c.wbuf)
	if want == c.wantOut || c.fd < 0 {
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(c.fd), Pad: c.gen}
	if want {
		ev.Events |= unix.EPOLLOUT
	}
	unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &ev)
	c.wantOut = want
}

func (l *loop) write(c *lconn) {
	for c.wrote < len(c.wbuf) {
		n, err := rawWrite(c.fd, c.wbuf[c.wrote:])
		if err == syscall.EAGAIN {
			break
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			l.broken(c, time.Now(), &net.OpError{Op: "write", Net: "tcp", Err: err})
			return
		}
		c.wrote += n
	}
	l.interest(c)
}

// event advances c on the epoll events ev.
func (l *loop) event(c *lconn, ev uint32) {
	if !c.busy {
		// An idle keep-alive connection has news: the server closed it
		// (or sent bytes nobody asked for). The next request dials anew.
		l.closeFD(c)
		return
	}
	if c.connecting {
		if ev&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return
		}
		c.connecting = false
		if v, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR); err != nil || v != 0 {
			if err == nil {
				err = syscall.Errno(v)
			}
			l.fail(c, time.Now(), &net.OpError{Op: "dial", Net: "tcp", Err: err}, true)
			return
		}
		c.sent = time.Now()
		l.write(c)
		return
	}
	writing := c.wrote < len(c.wbuf)
	if writing {
		l.write(c)
	}
	// Edge-triggered: bytes that came while the request was still being
	// written were reported then, so a write that ends here reads too.
	if c.busy && c.fd >= 0 && c.wrote == len(c.wbuf) && (writing || ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0) {
		l.read(c)
	}
}

// read reads what has arrived on c; a read that fills the buffer is
// followed by another, any other waits for the next event, so a response
// in one segment costs one read. The sockets are edge-triggered: a
// read shorter than the buffer has emptied the socket, and bytes that
// come after it are a new edge, so the wait never looks at a socket
// again only to find it empty (a level-triggered one is polled once
// more after every event).
//
// The tick engine's read (tick.go) is its twin, kept apart on purpose:
// this is the hottest path of both engines, and one reader for the two
// would reach its engine (broken, complete, finish) and its connection
// type through an interface, an indirect call per read and per response,
// or return a code that each engine would switch on again, as long as
// what it replaces. The two also differ where it matters: this one stamps
// a failure when it happens and stops at a short read (edge-triggered
// sockets); the tick engine stamps its wake's time and reads until the
// socket is empty. hostile_test.go runs every malformed response through
// both engines, so they cannot drift unnoticed.
func (l *loop) read(c *lconn) {
	for {
		n, oobn, err := l.msg.recvmsg(c.fd, l.rbuf, l.oob)
		if err == syscall.EAGAIN {
			return
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			l.broken(c, time.Now(), &net.OpError{Op: "read", Net: "tcp", Err: err})
			return
		}
		if oobn > 0 {
			if ts, ok := kernelTime(l.oob[:oobn]); ok {
				c.arrived = ts
			}
		}
		if n == 0 {
			// The server closed: a response without a length ends here.
			if done, perr := c.p.eof(); done {
				l.complete(c, perr, true)
				return
			}
			l.broken(c, time.Now(), errEOF)
			return
		}
		c.got += n
		used, err := c.p.feed(l.rbuf[:n])
		if c.p.done() {
			// Bytes after the response were not asked for: the connection
			// can no longer be trusted to match responses to requests.
			l.complete(c, err, c.p.closeAfter || used < n)
			return
		}
		if err != nil {
			l.finish(c, time.Now(), 0, transportReason(err), true, false)
			return
		}
		if n < len(l.rbuf) {
			return
		}
	}
}

// broken handles a connection that failed: an idempotent request on a
// reused connection that saw no response byte is sent again once on a new
// one; any other is reported (a POST as ReasonClosedBeforeResponse).
func (l *loop) broken(c *lconn, now time.Time, err error) {
	if c.reused && c.got == 0 && !c.retried {
		if !idempotent(c.req.Method) {
			l.finish(c, now, 0, ReasonClosedBeforeResponse, true, false)
			return
		}
		l.closeFD(c)
		c.retried, c.wrote = true, 0
		if derr := l.dial(c); derr != nil {
			l.fail(c, now, derr, true)
			return
		}
		c.sent = time.Now()
		if !c.connecting {
			l.write(c)
		}
		return
	}
	l.fail(c, now, err, false)
}

// fail reports a transport error; dial marks a connection that could not
// be established (the user backs off before its next iteration).
func (l *loop) fail(c *lconn, now time.Time, err error, dial bool) {
	reason := ReasonClosed
	if err != errEOF {
		reason = transportReason(err)
	}
	l.finish(c, now, 0, reason, true, dial)
}

// complete runs the user's check on a response read to its end; perr is
// a refusal of it (ReasonBodyTooLarge) that leaves the connection usable.
// The response ends at the kernel's receive time of its last bytes; the
// clock is read only when there is none, or when it is before the send
// (the wall clock stepped back): one clock reading per request, the
// send's, is all the closed model's loop takes.
func (l *loop) complete(c *lconn, perr error, closeAfter bool) {
	status := c.p.status
	reason := ""
	switch {
	case perr != nil:
		reason = transportReason(perr)
	case (c.sc == nil || !c.sc.ChecksStatus(c.step)) && (status < 200 || status > 299):
		reason = "status " + itoa(status)
	}
	c.resp.Status, c.resp.RawHeader, c.resp.Body = status, c.p.hdr, c.p.body
	if perr != nil {
		// As the goroutine engine: a refused response has no status.
		status = 0
	} else {
		if cerr := c.u.Check(c.iter, c.step, &c.resp); cerr != nil && reason == "" {
			var ce *CheckError
			if errors.As(cerr, &ce) {
				reason = ce.Reason
			} else {
				reason = cerr.Error()
			}
		}
	}
	c.resp.RawHeader, c.resp.Body = nil, nil
	done := c.arrived
	if done.IsZero() || done.Before(c.sent) {
		done = time.Now()
	}
	l.finish(c, done, status, reason, closeAfter, false)
}

// finish records c's sample and moves the user on: to its next step (at
// once, or after its pause), or to its next iteration.
func (l *loop) finish(c *lconn, done time.Time, status int, reason string, closeConn, dialFail bool) {
	r := l.r
	svc := done.Sub(c.sent)
	lat := svc
	if reason == "" && !l.open {
		l.lat += (svc - l.lat) / 16
	}
	if l.open && c.step == 0 {
		lat = done.Sub(c.due)
	}
	l.record(c, c.step, lat, svc, l.lateness(c, c.sent), c.wrote, c.got, status, reason)
	c.busy = false
	l.busy--
	if closeConn {
		l.closeFD(c)
	} else {
		c.reused = true
	}
	if reason != "" {
		l.endIteration(c, dialFail)
		return
	}
	pause := l.m.ThinkTime // zero in the open model
	if l.pauser != nil {
		pause += l.pauser.Pause(c.step)
	}
	c.step++
	if c.step == len(r.steps) && l.open {
		l.endIteration(c, false)
		return
	}
	if c.step == len(r.steps) {
		c.step = 0
		c.iter++
	}
	if l.stop.Load() {
		l.end(c)
		return
	}
	if pause > 0 {
		c.wakeAt = time.Now().Add(pause)
		l.push(c)
		return
	}
	// done, not a fresh reading: begin only notes it as the start of the
	// timeout scan when no other response is awaited, and the request's
	// send time is read again once it is built.
	l.begin(c, done)
}

// endIteration ends c's iteration after a failed step; after a refused
// connection the user waits the dial back-off, so a dead target is not a
// busy loop.
func (l *loop) endIteration(c *lconn, backoff bool) {
	if l.open {
		// The ticket is done; the connection waits for the next one.
		l.inflight--
		l.r.active.Add(-1)
		l.idle = append(l.idle, c)
		return
	}
	c.step = 0
	c.iter++
	if l.stop.Load() {
		l.end(c)
		return
	}
	c.wakeAt = time.Now()
	if backoff {
		c.wakeAt = c.wakeAt.Add(l.r.a.dialBackoff)
	}
	l.push(c)
}

// record counts a sample of c's, unless it falls in the open model's
// warm-up.
func (l *loop) record(c *lconn, step int, lat, svc, late time.Duration, sent, recv, status int, reason string) {
	if !c.warm {
		l.r.rec.record(step, lat, svc, late, sent, recv, status, reason)
	}
}

// lateness is the send lateness of c's request sent at sent: only the
// first step of an open-model iteration has a due time.
func (l *loop) lateness(c *lconn, sent time.Time) time.Duration {
	if l.open && c.step == 0 {
		late, _ := sendLateness(c.due, sent, c.queuedFrom)
		return late
	}
	return noLateness
}

// end ends closed-model user c.
func (l *loop) end(c *lconn) {
	if c.done {
		return
	}
	c.done = true
	l.live--
	if c.started {
		l.r.active.Add(-1)
	}
	l.closeFD(c)
}

// scan times out the requests in flight longer than the timeout.
func (l *loop) scan(now time.Time) {
	l.scanned = now
	t := l.r.a.timeout
	if t <= 0 {
		return
	}
	for _, c := range l.users {
		if c.busy && now.Sub(c.sent) > t {
			l.finish(c, now, 0, ReasonTimeout, true, false)
		}
	}
}

// The timer heap: users waiting for their start, a pause or a back-off.

func (l *loop) push(c *lconn) {
	c.hi = len(l.timers)
	l.timers = append(l.timers, c)
	l.up(c.hi)
}

func (l *loop) pop() *lconn {
	h := l.timers
	c := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = nil
	l.timers = h[:last]
	if last > 0 {
		h[0].hi = 0
		l.down(0)
	}
	c.hi = -1
	return c
}

func (l *loop) up(i int) {
	h := l.timers
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].wakeAt.Before(h[p].wakeAt) {
			break
		}
		h[i], h[p] = h[p], h[i]
		h[i].hi, h[p].hi = i, p
		i = p
	}
}

func (l *loop) down(i int) {
	h := l.timers
	for {
		m := i
		for _, k := range [2]int{2*i + 1, 2*i + 2} {
			if k < len(h) && h[k].wakeAt.Before(h[m].wakeAt) {
				m = k
			}
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		h[i].hi, h[m].hi = i, m
		i = m
	}
}
