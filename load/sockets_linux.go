//go:build linux

package load

import "syscall"

// The socket handling the two epoll engines share: the loop engine
// (loop_linux.go) and the tick engine (tick.go) open, index and close
// their sockets alike; what they register with epoll differs (the loop
// engine is edge-triggered and tells a reused socket number apart by a
// generation), so each does that itself.

// sockets are an engine's connections by their socket's number, so that an
// epoll event finds its connection with one index (nil: none).
type sockets[C any] []*C

// add files c under socket fd, growing the table as needed.
func (s *sockets[C]) add(fd int, c *C) {
	for len(*s) <= fd {
		*s = append(*s, nil)
	}
	(*s)[fd] = c
}

// close forgets socket fd and closes it, which also takes it out of the
// epoll set; a negative fd is no socket.
func (s sockets[C]) close(fd int) {
	if fd >= 0 {
		s[fd] = nil
		syscall.Close(fd)
	}
}

// dialSocket opens a non-blocking TCP socket of family (AF_INET,
// AF_INET6) with TCP_NODELAY and the kernel's receive time stamps
// (SO_TIMESTAMPNS) on, and starts connecting it to sa; inProgress says
// the connection is still under way (EINPROGRESS), to be reported
// writable by epoll. On an error no socket is left open.
func dialSocket(family int, sa syscall.Sockaddr) (fd int, inProgress bool, err error) {
	fd, err = syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, false, err
	}
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	err = syscall.Connect(fd, sa)
	if err != nil && err != syscall.EINPROGRESS {
		syscall.Close(fd)
		return -1, false, err
	}
	return fd, err == syscall.EINPROGRESS, nil
}
