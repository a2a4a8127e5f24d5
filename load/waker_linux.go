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
// wake costs one timerfd_settime and the poller's return, the same as a
// runtime timer, so precision costs CPU only through the number of wakes.
type waker struct {
	fd   int
	f    *os.File
	rc   syscall.RawConn
	stop func() bool // unregisters the wake-up on ctx's cancellation
	ctx  context.Context
	spec unix.ItimerSpec
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
	// Arming resets the timer's expirations, so the timerfd is never read.
	w.spec.Value = unix.NsecToTimespec(int64(d))
	if err := unix.TimerfdSettime(w.fd, 0, &w.spec, nil); err != nil {
		time.Sleep(d)
		return
	}
	if w.ctx.Err() != nil {
		return // cancelled before arming: the cancellation's expiry was overwritten
	}
	first := true
	w.rc.Read(func(uintptr) bool {
		// The first call only asks to wait for the expiry; the second is
		// after it. (A stale readiness makes the wait return early; the
		// caller checks the time anyway.)
		if first {
			first = false
			return false
		}
		return true
	})
}

// close releases the timerfd.
func (w *waker) close() {
	w.stop()
	w.f.Close()
}
