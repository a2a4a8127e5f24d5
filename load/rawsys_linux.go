//go:build linux

package load

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system calls of the open model's hot path, made without telling the
// runtime.
//
// Subtleness ahead! syscall.Syscall and its wrappers (syscall.Write,
// unix.EpollWait, ...) enter the runtime's syscall state, and entering it
// wakes the runtime's monitor thread (sysmon) with a futex when that
// thread is in its deep sleep, which it enters whenever every P is idle:
// each time the pacer sleeps until the next send. So a precisely paced
// engine, which sleeps between every two sends, paid for a futex wake,
// sysmon's context switch, its 20 µs naps (nanosleep) and its lock
// spinning (sched_yield) once per request: at 5,000 req/s a strace count
// showed 1.1 nanosleep, 0.5 futex and 0.16 sched_yield per request, about
// as many system calls as the requests' own. The calls below never block
// (the sockets and the timerfd are non-blocking, epoll_pwait is asked with
// a zero timeout), which is when the runtime itself makes raw calls
// (its netpoll(0)), so they are made with RawSyscall and the monitor
// sleeps on. Their buffers live in heap objects that outlive the call.

// rawWrite is write(2) on a non-blocking fd.
func rawWrite(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawRead is read(2) on a non-blocking fd.
func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawMsg is a recvmsg(2) header with one buffer, kept in a heap object so
// that a receive allocates nothing.
type rawMsg struct {
	hdr unix.Msghdr
	iov unix.Iovec
}

// recvmsg receives into p with control data into oob on a non-blocking
// socket; it returns the bytes read and the control data's length.
func (m *rawMsg) recvmsg(fd int, p, oob []byte) (n, oobn int, err error) {
	m.iov.Base = &p[0]
	m.iov.SetLen(len(p))
	m.hdr = unix.Msghdr{Iov: &m.iov}
	m.hdr.SetIovlen(1)
	if len(oob) > 0 {
		m.hdr.Control = &oob[0]
		m.hdr.SetControllen(len(oob))
	}
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&m.hdr)), 0)
	if e != 0 {
		return 0, 0, e
	}
	return int(r), int(m.hdr.Controllen), nil
}

// rawEpollPoll asks epoll instance ep, without waiting, which of its fds
// have news.
func rawEpollPoll(ep int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawTimerfdSettime arms (or disarms) timerfd fd.
func rawTimerfdSettime(fd, flags int, spec *unix.ItimerSpec) error {
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(fd), uintptr(flags), uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
