package lab

import (
	"context"
	"syscall"
	"time"

	"github.com/showdownlab/showdown/internal/proctree"
	"github.com/showdownlab/showdown/workloads"
)

// freeze stops every process of the service's tree (SIGSTOP), so a live
// service that is not being measured takes no CPU from the one that is:
// its load is stopped first and its requests answered, so it holds no
// transaction open while frozen.
func (l *live) freeze() {
	if l.frozen || l.svc == nil || l.stopped {
		return
	}
	l.awaitQuiet()
	l.frozen = true
	signalTree(l.svc.PID(), syscall.SIGSTOP)
}

// quietMax bounds how long freeze waits for the service's database
// sessions to go idle (a variable for the tests).
var quietMax = 5 * time.Second

// awaitQuiet waits, up to quietMax, until the service's login has no
// database session running a statement or inside a transaction, on each
// database the plan's workloads use: its load has stopped, but a request
// the generator gave up on (a timeout, a warm-up cut short) may still be
// running in the service, and a service frozen in the middle of one
// would hold its locks until thawed, so the next reset of the data would
// wait on a frozen process. The other arms are frozen, and were quiet
// when they froze, so what is busy is this one's. Still busy after
// quietMax, it is frozen anyway and the run says so.
func (l *live) awaitQuiet() {
	x := l.x
	if x == nil || x.dbs == nil {
		return
	}
	seen := map[workloads.Engine]bool{}
	for _, w := range x.plan.Workloads {
		e := workloads.Database(w.Name)
		if e == workloads.NoDatabase || seen[e] {
			continue
		}
		seen[e] = true
		deadline := time.Now().Add(quietMax)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			busy, err := x.dbs.BusySessions(ctx, w.Name)
			cancel()
			if err != nil || busy == "" {
				break
			}
			if time.Now().After(deadline) {
				x.warn("%s was frozen with its database sessions still busy after %s (%s): a reset before it runs again may wait for their locks", l.im.ID(), quietMax, busy)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
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
