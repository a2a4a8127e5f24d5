//go:build linux

package load

import (
	"context"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Waits of the engines that own a thread: the loop engine (loop_linux.go)
// and the tick engine (tick.go).
//
// Subtleness ahead! Such an engine sleeps in the kernel itself:
// epoll_pwait2 (a nanosecond timeout) on an epoll instance of its own, so
// one system call both waits for the next due time and returns the
// sockets that have news. On a thread with its timer slack lowered
// (lockPrecise) the kernel ends the wait within microseconds of the time
// asked; with the default slack (50 µs) it may end it up to 50 µs late. A
// wake is then one system call, not a timerfd, a poller wake-up and a
// goroutine switch (waker, which the goroutine engine's pacer keeps: it
// hands tickets to goroutines that must run while it sleeps).

// lockPrecise locks the calling goroutine to its OS thread and lowers the
// thread's timer slack to 1 ns; the function it returns puts the slack
// back and unlocks the thread, and the caller defers it.
//
// Subtleness ahead! The thread must not end with the goroutine (which is
// what a goroutine that never unlocks gets): a child process started
// from that thread earlier with Pdeathsig (every service the lab starts)
// is killed by the kernel when the thread that started it exits, and any
// thread may have started one. A service died so, frozen between rounds,
// before the thread was given back.
func lockPrecise() (unlock func()) {
	runtime.LockOSThread()
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	return func() {
		if err == nil && old > 0 {
			unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0)
		}
		runtime.UnlockOSThread()
	}
}

// eventfdWrite adds one to eventfd fd (from any goroutine), ending a wait
// on an epoll instance that holds it.
func eventfdWrite(fd int) {
	one := [8]byte{1}
	unix.Write(fd, one[:])
}

// rawWaitMax is the longest wait made without telling the runtime.
//
// Subtleness ahead! A wait in a system call the runtime knows of
// (syscall.Syscall) lets its monitor thread take the processor away when
// the wait lasts past one of its ticks: with GOMAXPROCS 1 that wakes
// another thread to look for work, and the end of the wait then waits to
// get the processor back: futexes and context switches on every wake of a
// paced loop. A wait the runtime does not know of (RawSyscall) keeps the
// processor; other goroutines (the once-a-second interval flush, progress,
// a cancellation) run when the runtime preempts the loop, within about
// 10 ms. Longer waits, rare and cheap per second, are made the ordinary
// way, so an idle loop does not hold the processor.
const rawWaitMax = 5 * time.Millisecond

// epollWaiter waits on an epoll instance with a nanosecond timeout.
type epollWaiter struct {
	ts      unix.Timespec
	noWait2 bool // no epoll_pwait2 (before Linux 5.11): millisecond timeouts
}

// wait waits up to d (0: only looks) for events into events, and returns
// how many arrived (0 on a timeout or an interruption).
func (w *epollWaiter) wait(ep int, events []unix.EpollEvent, d time.Duration) int {
	for {
		var n uintptr
		var e unix.Errno
		p := uintptr(unsafe.Pointer(&events[0]))
		switch {
		case d <= 0:
			n, _, e = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), p, uintptr(len(events)), 0, 0, 0)
		case !w.noWait2:
			w.ts = unix.NsecToTimespec(int64(d))
			ts := uintptr(unsafe.Pointer(&w.ts))
			if d <= rawWaitMax {
				n, _, e = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep), p, uintptr(len(events)), ts, 0, 0)
			} else {
				n, _, e = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep), p, uintptr(len(events)), ts, 0, 0)
			}
			if e == unix.ENOSYS {
				w.noWait2 = true
				continue
			}
		default:
			ms := uintptr((d + time.Millisecond - 1) / time.Millisecond)
			n, _, e = unix.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), p, uintptr(len(events)), ms, 0, 0)
		}
		if e == unix.EINTR {
			return 0
		}
		if e != 0 {
			// Not expected on a valid epoll fd; sleep rather than spin.
			time.Sleep(min(d, time.Millisecond))
			return 0
		}
		return int(n)
	}
}

// sleeper sleeps until a given time on an epoll instance that holds only
// an eventfd, written when its context is done: the tick engine's wait,
// which must not wake for its sockets' news (it reads them on its ticks).
type sleeper struct {
	ep, efd int
	stop    func() bool
	ctx     context.Context
	events  [1]unix.EpollEvent
	w       epollWaiter
}

// newSleeper returns a sleeper whose sleeps end when ctx is done, or nil
// if the system has no epoll or eventfd.
func newSleeper(ctx context.Context) *sleeper {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, efd, &ev); err != nil {
		unix.Close(ep)
		unix.Close(efd)
		return nil
	}
	s := &sleeper{ep: ep, efd: efd, ctx: ctx}
	// The eventfd is never read: once the context is done every sleep
	// ends at once.
	s.stop = context.AfterFunc(ctx, func() { eventfdWrite(efd) })
	return s
}

// sleepUntil returns at t, or when the sleeper's context is done.
func (s *sleeper) sleepUntil(t time.Time) {
	for range 1000 { // interruptions (preemption signals) restart the wait
		d := time.Until(t)
		if d <= 0 || s.ctx.Err() != nil {
			return
		}
		if s.w.wait(s.ep, s.events[:], d) > 0 {
			return // the context is done
		}
	}
}

// close releases the sleeper's descriptors.
func (s *sleeper) close() {
	s.stop()
	unix.Close(s.ep)
	unix.Close(s.efd)
}
