//go:build linux

package load

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The tick engine runs a plain URL attack (a *Target) in the open model.
//
// Subtleness ahead! Most of a generator's CPU per request is the kernel
// waking it: once per response when each connection has a goroutine
// parked in the runtime poller. Here one goroutine owns raw non-blocking
// sockets that the runtime poller does not know, and wakes only on its own
// timer: when the next request is due (a sleeper on a thread of its own:
// microsecond precision, see precise_linux.go), and every pollEvery while
// requests are in flight. A wake reads whatever
// responses have arrived (at most every pollEvery, or at once when a due
// request finds no idle connection), then writes every request that has
// become due. A response is timed by the kernel's receive timestamp
// (SO_TIMESTAMPNS), not by when the engine read it, so reading rarely
// costs no accuracy. A request is timed from its due time as in the
// goroutine engine, and its send lateness (write minus due time: the
// wake-up latency, plus any time the CPU was busy elsewhere) is
// recorded beside it. Requests are never sent before their due time:
// sending a batch early would put requests due apart onto the service
// together, a burst the schedule does not hold, and bias its service time.
//
// A wake costs CPU, more than a request's own system calls, so the engine
// wakes at most once per PaceSlack (DefaultPaceSlack): below 1/slack
// requests per second each request has its own wake-up; above, a wake
// sends what has come due since the last, late by up to the slack.
const (
	pollEvery = time.Millisecond
	pollIdle  = 10 * time.Millisecond
)

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

type tconn struct {
	fd         int
	connecting bool
	busy       bool
	reused     bool
	retried    bool
	dead       bool // closed while idle; dropped from the idle stack
	wantOut    bool // registered for EPOLLOUT
	listed     bool // in tickEngine.conns
	wrote      int
	got        int // response bytes received for the request in flight
	p          *respParser
	ticket     int64
	queuedFrom time.Time // see lconn.queuedFrom
	due, sent  time.Time
	arrived    time.Time
}

type tickEngine struct {
	r *run
	s *schedule
	// blockedSince is when the engine found every connection busy with
	// a ticket due (zero: not blocked; sendLateness).
	blockedSince time.Time
	sa           syscall.Sockaddr
	family       int
	wreq         []byte
	conns        []*tconn // busy or connecting
	idle         []*tconn
	total        int // open sockets
	rbuf         []byte
	oob          []byte
	timeout      time.Duration
	slack        time.Duration // at most one wake per slack (PaceSlack)
	head         bool          // HEAD requests: responses have no body
	// retry: the request may be sent again when a reused connection dies
	// before any byte of its response (it is idempotent).
	retry bool
	// ep is the engine's own epoll instance (not the runtime's): it is
	// asked, without blocking, which sockets have news at each tick, so a
	// tick costs one epoll_wait however many requests are in flight.
	ep     int
	byFD   sockets[tconn]
	events []unix.EpollEvent
	msg    rawMsg // recvmsg's header, reused
}

// tickable reports whether sc can run on the tick engine, and prepares it.
func (r *run) tickEngine(s *schedule) *tickEngine {
	t, ok := r.sc.(*Target)
	if !ok || r.a.noTick {
		return nil
	}
	addr, host, path, err := splitURL(t.URL)
	if err != nil {
		return nil
	}
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	e := &tickEngine{r: r, s: s, rbuf: make([]byte, 64<<10), oob: make([]byte, 128), timeout: r.a.timeout,
		ep: ep, events: make([]unix.EpollEvent, 256)}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		e.sa, e.family = sa, syscall.AF_INET
	} else {
		sa := &syscall.SockaddrInet6{Port: ta.Port}
		copy(sa.Addr[:], ta.IP.To16())
		e.sa, e.family = sa, syscall.AF_INET6
	}
	var req Request
	targetUser{t}.Request(0, 0, &req)
	e.wreq = appendRequest(nil, &req, host, path)
	e.head = req.Method == "HEAD"
	e.slack = r.a.paceSlack
	e.retry = idempotent(req.Method)
	return e
}

// run paces tickets until end, then lets requests in flight finish.
func (e *tickEngine) run(ctx context.Context, end time.Time) {
	s := e.s
	// The engine sleeps on its own thread, with little timer slack.
	defer lockPrecise()()
	wk := newSleeper(ctx)
	var timer *time.Timer
	if wk == nil {
		timer = time.NewTimer(time.Hour)
		defer timer.Stop()
	} else {
		defer wk.close()
	}
	defer func() {
		for _, c := range e.byFD {
			if c != nil {
				syscall.Close(c.fd)
			}
		}
		closeEpoll(e)
		e.r.active.Store(0)
	}()
	sending := true
	var polled, lastSend time.Time
	for {
		if ctx.Err() != nil {
			// Interrupted: count the responses that have arrived.
			e.progress(time.Now())
			return
		}
		now := time.Now()
		if !sending || now.Sub(polled) >= pollEvery || (len(e.idle) == 0 && s.st.dueBy(now)) {
			e.progress(now)
			polled = now
		}
		if !sending && len(e.conns) == 0 {
			return
		}
		blocked := false
		if sending {
			for s.st.dueBy(now) {
				c := e.conn()
				if c == nil {
					blocked = true
					if e.blockedSince.IsZero() {
						e.blockedSince = now
					}
					break // MaxInflight busy: overdue tickets wait as a count
				}
				e.start(c, s.next, s.st.due, now)
				s.next++
				s.st.advance()
				lastSend = now
			}
			if !blocked {
				e.blockedSince = time.Time{}
			}
			// Every ticket is due before end: the first wake at or after
			// end sends the last ones; what is left then is dropped.
			sending = now.Before(end)
		}
		e.r.active.Store(int64(len(e.conns)))
		// Wake when the next ticket is due (no sooner than the slack after
		// the last send), and to poll: every pollEvery while tickets wait
		// for a connection or the last responses are awaited, every
		// pollIdle while requests are in flight and no ticket comes due.
		wake := time.Time{}
		if sending {
			wake = end
			if d := s.st.due; s.st.ok && !blocked && d.Before(wake) {
				wake = d
			}
			wake = maxTime(wake, lastSend.Add(e.slack))
		}
		if len(e.conns) > 0 || blocked || !sending {
			p := polled.Add(pollIdle)
			if blocked || !sending {
				p = polled.Add(pollEvery)
			}
			if wake.IsZero() || p.Before(wake) {
				wake = p
			}
		}
		if blocked && sending {
			// Every connection is busy with a ticket due: wait on the
			// sockets, so the first response frees a connection for it
			// at once. A sleep until the next poll would hold it up to
			// pollEvery, a queue of the generator's making (one
			// connection would carry 1,000 requests a second at most).
			e.poll(now, int(max(time.Until(wake), time.Millisecond)/time.Millisecond))
			polled = time.Now()
			continue
		}
		if wk != nil {
			wk.sleepUntil(wake)
			continue
		}
		timer.Reset(max(time.Until(wake), 0))
		select {
		case <-timer.C:
		case <-ctx.Done(): // handled at the top of the loop
		}
	}
}

// conn returns an idle connection (the most recently idle, or with a
// pool the longest idle once the pool is full), a new one, or nil at
// MaxInflight.
func (e *tickEngine) conn() *tconn {
	pool := e.s.pool
	if pool > 0 && len(e.idle) == 0 && len(e.conns) >= pool {
		// The pool is busy: read what has come since the last wake
		// before a connection is opened that a response would free.
		e.progress(time.Now())
	}
	for n := len(e.idle); n > 0 && len(e.conns)+n >= pool; n = len(e.idle) {
		var c *tconn
		if pool > 0 {
			c = e.idle[0]
			e.idle = e.idle[1:]
		} else {
			c = e.idle[n-1]
			e.idle = e.idle[:n-1]
		}
		if !c.dead {
			return c
		}
	}
	if len(e.conns) >= e.r.a.maxInflight {
		return nil
	}
	e.r.opened.Add(1)
	return &tconn{fd: -1, p: newRespParser(e.r.a.limits, false)}
}

func (e *tickEngine) dial(c *tconn) error {
	fd, inProgress, err := dialSocket(e.family, e.sa)
	if err != nil {
		return err
	}
	c.fd, c.connecting, c.reused, c.wrote, c.dead = fd, inProgress, false, 0, false
	c.got = 0
	c.p.reset(e.head)
	c.wantOut = true
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP, Fd: int32(fd)}
	if err := unix.EpollCtl(e.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		syscall.Close(fd)
		c.fd = -1
		return err
	}
	e.byFD.add(fd, c)
	return nil
}

// closeFD closes c's socket (which also leaves the epoll set).
func (e *tickEngine) closeFD(c *tconn) {
	e.byFD.close(c.fd)
	c.fd = -1
}

// interest registers c for writability only while it has bytes to write,
// so a level-triggered EPOLLOUT does not report it at every tick.
func (e *tickEngine) interest(c *tconn) {
	want := c.connecting || c.wrote < len(e.wreq)
	if want == c.wantOut || c.fd < 0 {
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(c.fd)}
	if want {
		ev.Events |= unix.EPOLLOUT
	}
	unix.EpollCtl(e.ep, unix.EPOLL_CTL_MOD, c.fd, &ev)
	c.wantOut = want
}

// start sends ticket n, due at due, on c.
func (e *tickEngine) start(c *tconn, n int64, due, now time.Time) {
	s := e.s
	s.count(due, now.Sub(due), !e.blockedSince.IsZero(), e.r.a.lateAfter)
	c.ticket, c.due, c.sent, c.busy, c.retried = n, due, now, true, false
	c.queuedFrom = e.blockedSince
	c.arrived = time.Time{}
	c.got = 0
	c.p.reset(e.head)
	if c.fd < 0 {
		if err := e.dial(c); err != nil {
			e.fail(c, now, err)
			return
		}
	}
	e.track(c)
	if !c.connecting {
		e.write(c, now)
	}
}

// track lists c among the connections with a request in flight.
func (e *tickEngine) track(c *tconn) {
	if !c.listed {
		c.listed = true
		e.conns = append(e.conns, c)
	}
}

func (e *tickEngine) write(c *tconn, now time.Time) {
	for c.wrote < len(e.wreq) {
		n, err := rawWrite(c.fd, e.wreq[c.wrote:])
		if err == syscall.EAGAIN {
			return
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			e.broken(c, now, err)
			return
		}
		c.wrote += n
	}
	e.interest(c)
}

// progress asks the engine's epoll which sockets have news and advances
// them (connect, write, read, complete), then times out overdue requests.
func (e *tickEngine) progress(now time.Time) { e.poll(now, 0) }

// poll waits up to waitMs for news (0: just looks), then handles it.
// The tick engine only looks; its sleeping is done on the runtime's timer.
func (e *tickEngine) poll(now time.Time, waitMs int) {
	for {
		var n int
		var err error
		if waitMs == 0 {
			n, err = rawEpollPoll(e.ep, e.events) // see rawsys_linux.go
		} else {
			n, err = unix.EpollWait(e.ep, e.events, waitMs)
		}
		if err == syscall.EINTR {
			continue
		}
		if waitMs != 0 {
			now, waitMs = time.Now(), 0
		}
		for _, ev := range e.events[:max(n, 0)] {
			fd := int(ev.Fd)
			if fd >= len(e.byFD) || e.byFD[fd] == nil {
				continue
			}
			c := e.byFD[fd]
			if !c.busy {
				// An idle keep-alive connection has news: the server
				// closed it (or sent garbage). Drop it.
				e.closeFD(c)
				c.dead = true
				continue
			}
			if c.connecting {
				if ev.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
					continue
				}
				c.connecting = false
				if v, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR); err != nil || v != 0 {
					if err == nil {
						err = syscall.Errno(v)
					}
					e.fail(c, now, &net.OpError{Op: "dial", Net: "tcp", Err: err})
					continue
				}
				c.sent = now
				e.write(c, now)
				continue
			}
			if c.wrote < len(e.wreq) {
				e.write(c, now)
			}
			if c.busy && c.wrote == len(e.wreq) && ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
				e.read(c, now)
			}
		}
		if n < len(e.events) {
			break
		}
	}
	busy := e.conns
	e.conns = e.conns[:0]
	for _, c := range busy {
		if c.busy && now.Sub(c.sent) > e.timeout {
			e.finish(c, now, c.got, 0, ReasonTimeout, true)
		}
		if c.busy && !c.listed {
			c.listed = true
		}
		if c.busy {
			e.conns = append(e.conns, c)
		} else {
			c.listed = false
		}
	}
}

// read reads what has arrived on c until the socket is empty, timing
// failures at now, the wake's time. It is the twin of the event loop's
// read (loop_linux.go), which says why the two are not one function.
func (e *tickEngine) read(c *tconn, now time.Time) {
	for {
		n, oobn, err := e.msg.recvmsg(c.fd, e.rbuf, e.oob)
		if err == syscall.EAGAIN {
			return
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			e.broken(c, now, &net.OpError{Op: "read", Net: "tcp", Err: err})
			return
		}
		if oobn > 0 {
			if ts, ok := kernelTime(e.oob[:oobn]); ok {
				c.arrived = ts
			}
		}
		if n == 0 {
			// The server closed: a response without a length ends here.
			if done, perr := c.p.eof(); done {
				e.complete(c, now, perr, true)
				return
			}
			e.broken(c, now, errEOF)
			return
		}
		c.got += n
		used, err := c.p.feed(e.rbuf[:n])
		if c.p.done() {
			// Bytes after the response were not asked for: the connection
			// can no longer be trusted to match responses to requests.
			e.complete(c, now, err, c.p.closeAfter || used < n)
			return
		}
		if err != nil {
			e.finish(c, now, c.got, 0, transportReason(err), true)
			return
		}
	}
}

var errEOF = errors.New("EOF")

// broken handles a connection that failed: an idempotent request on a
// reused connection that saw no response byte is sent again once on a new
// one; any other is reported (a POST as ReasonClosedBeforeResponse).
func (e *tickEngine) broken(c *tconn, now time.Time, err error) {
	if c.reused && c.got == 0 && !c.retried {
		if !e.retry {
			e.finish(c, now, 0, 0, ReasonClosedBeforeResponse, true)
			return
		}
		e.closeFD(c)
		c.retried = true
		if derr := e.dial(c); derr != nil {
			e.fail(c, now, derr)
			return
		}
		c.retried = true
		if !c.connecting {
			e.write(c, now)
		}
		return
	}
	e.fail(c, now, err)
}

func (e *tickEngine) fail(c *tconn, now time.Time, err error) {
	reason := ReasonClosed
	if err != errEOF {
		reason = transportReason(err)
	}
	e.finish(c, now, c.got, 0, reason, true)
}

// complete records a response read to its end; perr is a refusal of it
// (ReasonBodyTooLarge) that leaves the connection usable.
func (e *tickEngine) complete(c *tconn, now time.Time, perr error, closeAfter bool) {
	status := c.p.status
	reason := ""
	switch {
	case perr != nil:
		reason = transportReason(perr)
	case status < 200 || status > 299:
		reason = "status " + itoa(status)
	}
	done := c.arrived
	if done.IsZero() || done.After(now) || done.Before(c.sent) {
		done = now
	}
	c.arrived = done
	e.finish(c, done, c.got, status, reason, closeAfter)
}

// finish records the sample of c and frees c.
func (e *tickEngine) finish(c *tconn, done time.Time, recv, status int, reason string, closeConn bool) {
	if e.s.measured(c.due) {
		late, _ := sendLateness(c.due, c.sent, c.queuedFrom)
		e.r.rec.record(0, done.Sub(c.due), done.Sub(c.sent), late, c.wrote, recv, status, reason)
	}
	c.busy = false
	if closeConn {
		e.closeFD(c)
	} else {
		c.reused, c.wrote = true, 0
	}
	if !closeConn {
		e.idle = append(e.idle, c)
	}
}

// kernelTime extracts the SO_TIMESTAMPNS receive time from control data
// (walked in place: syscall.ParseSocketControlMessage allocates).
func kernelTime(oob []byte) (time.Time, bool) {
	const hdr = syscall.SizeofCmsghdr
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return time.Time{}, false
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SO_TIMESTAMPNS && l >= hdr+int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&oob[syscall.CmsgLen(0)]))
			return time.Unix(ts.Sec, ts.Nsec), true
		}
		next := syscall.CmsgSpace(l - syscall.CmsgLen(0))
		if next > len(oob) {
			break
		}
		oob = oob[next:]
	}
	return time.Time{}, false
}

func closeEpoll(e *tickEngine) { syscall.Close(e.ep) }
