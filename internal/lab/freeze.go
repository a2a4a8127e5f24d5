package lab

import (
	"syscall"

	"github.com/showdownlab/showdown/internal/proctree"
)

// freeze stops every process of the service's tree (SIGSTOP), so a live
// service that is not being measured takes no CPU from the one that is:
// its load is stopped first and its requests answered, so it holds no
// transaction open while frozen.
func (l *live) freeze() {
	if l.frozen || l.svc == nil || l.stopped {
		return
	}
	l.frozen = true
	signalTree(l.svc.PID(), syscall.SIGSTOP)
}

// thaw lets a frozen service run again (SIGCONT).
func (l *live) thaw() {
	if !l.frozen || l.svc == nil {
		return
	}
	l.frozen = false
	signalTree(l.svc.PID(), syscall.SIGCONT)
}

// signalTree sends sig to pid and its descendants, parents first.
func signalTree(pid int, sig syscall.Signal) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(pid, sig)
	for _, c := range proctree.Descendants(int32(pid)) {
		_ = syscall.Kill(int(c), sig)
	}
}
