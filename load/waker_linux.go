//go:build linux

package load

import (
	"context"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// waker sleeps until a given time with microsecond precision, for the
// open model's pacers.
//
// Subtleness ahead! A time.Timer cannot do it: the runtime sleeps in
// epoll_pwait, whose timeout is in milliseconds, so a timer due in 300 µs
// fires after about 1 ms, and every send of a pacer built on it is late by
// up to a millisecond (0.5 ms at p50), which the open model then counts in
// each request's latency. Here a timerfd (an hrtimer on CLOCK_MONOTONIC,
// armed without timer slack) is registered with the runtime's own poller
// through an os.File: the goroutine parks as on a socket, and the kernel
// makes the poller's epoll_pwait return the moment the timer expires. A
// wake costs a timerfd_settime, two reads and the poller's return, about
// what a runtime timer costs, so precision costs CPU only through the
// number of wakes.
type waker struct {
	fd   int
	f    *os.File
	rc   syscall.RawConn
	stop func() bool // unregisters the wake-up on ctx's cancellation
	ctx  context.Context
	spec unix.ItimerSpec
	buf  [8]byte // a read's expiration count
}

// newWaker returns a waker whose sleeps end when ctx is done, or nil if
// the system has no timerfd (the caller then uses a time.Timer).
func newWaker(ctx context.Context) *waker {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	w := &waker{fd: fd, f: f, rc: rc, ctx: ctx}
	w.stop = context.AfterFunc(ctx, func() {
		// Expire at once: a sleep in progress ends.
		spec := unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}}
		unix.TimerfdSettime(fd, 0, &spec, nil)
	})
	return w
}

// sleepUntil returns at t (a few microseconds after, on an idle CPU), or
// when the waker's context is done.
func (w *waker) sleepUntil(t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	w.spec.Value = unix.NsecToTimespec(int64(d))
	if err := rawTimerfdSettime(w.fd, 0, &w.spec); err != nil { // see rawsys_linux.go
		time.Sleep(d)
		return
	}
	if w.ctx.Err() != nil {
		return // cancelled before arming: the cancellation's expiry was overwritten
	}
	w.rc.Read(func(fd uintptr) bool {
		// The runtime forgets readiness before the first call, so an
		// expiry that came before it would be lost with the timerfd
		// never read: reading it tells, and empties it for the next edge.
		_, err := rawRead(int(fd), w.buf[:])
		return err != unix.EAGAIN
	})
}

// close releases the timerfd.
func (w *waker) close() {
	w.stop()
	w.f.Close()
}
