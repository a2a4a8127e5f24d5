package lab

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/internal/stack"
)

// live is one implementation started for a trial: its process, limits
// and log, the measurements it serves and their records.
type live struct {
	x       *execution
	s       plan.Start
	im      plan.Implementation
	ms      []plan.Measurement
	srs     []*results.ServiceRun
	svc     *stack.Service
	nmt     bool
	stopped bool
	frozen  bool
	// cpus are the CPUs the service is pinned to (every CPU when it is
	// not).
	cpus []int
	// settled is the scenario of each workload once prepared (contract
	// and warm-up passed), for interleaved rounds.
	settled map[string]*scenario.Scenario
}

// Freeze stops every process of the service's tree (SIGSTOP), so a live
// service that is not being measured takes no CPU from the one that is:
// its load is stopped first and its requests answered, so it holds no
// transaction open while frozen.
func (l *live) Freeze() {
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
	for _, w := range plan.OnePerDatabase(x.plan.Workloads) {
		deadline := time.Now().Add(quietMax)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			busy, err := x.dbs.BusySessions(ctx, w.Name)
			cancel()
			if err != nil || busy == "" {
				break
			}
			if time.Now().After(deadline) {
				x.Warn("%s was frozen with its database sessions still busy after %s (%s): a reset before it runs again may wait for their locks", l.im.ID(), quietMax, busy)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// Thaw lets a frozen service run again (SIGCONT).
func (l *live) Thaw() {
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
	for _, p := range monitor.Tree(pid) {
		_ = syscall.Kill(int(p), sig)
	}
}

// Fail records why sr failed (or was interrupted).
func (l *live) Fail(ctx context.Context, sr *results.ServiceRun, format string, args ...any) {
	x := l.x
	sr.Status = results.Failed
	sr.Reason = fmt.Sprintf(format, args...)
	if ctx.Err() != nil {
		// What breaks while everything is being stopped is the
		// interrupt's doing, not the implementation's.
		sr.Status = results.Interrupted
		x.Say("%s on %s, trial %d: INTERRUPTED: %s", sr.Name(), sr.Workload, l.s.Trial, sr.Reason)
	} else {
		x.Say("%s on %s, trial %d: FAILED: %s", sr.Name(), sr.Workload, l.s.Trial, sr.Reason)
	}
	x.progress.Skip(countStatus(sr.Levels, results.Skipped))
}

// failAll fails every record still OK, with the log's tail.
func (l *live) failAll(ctx context.Context, tail, format string, args ...any) *live {
	for _, sr := range l.srs {
		if sr.Status == results.OK {
			sr.LogTail = tail
			l.Fail(ctx, sr, format, args...)
		}
	}
	return l
}

// Alive reports whether the service still runs, failing sr if not.
func (l *live) Alive(ctx context.Context, sr *results.ServiceRun) bool {
	select {
	case <-l.svc.Exited():
		l.Fail(ctx, sr, "the service exited before this workload")
		return false
	default:
		return true
	}
}

// after records what a workload left: RSS, and the JVM's native memory.
func (l *live) after(ctx context.Context, sr *results.ServiceRun) {
	sr.RSSAfterBytes = rssOf(l.svc.PID())
	if l.nmt && ctx.Err() == nil {
		sr.NativeMemory = nativeMemory(ctx, l.svc.PID())
		if e := sr.NativeMemory.Error; e != "" {
			l.x.Warn("%s on %s, trial %d: native memory tracking: %s", sr.Name(), sr.Workload, l.s.Trial, e)
		}
	}
}

// interrupted marks a record the interrupt cut short (a level, the
// warm-up, or the whole workload) as not OK.
func (l *live) interrupted(ctx context.Context) {
	if ctx.Err() == nil {
		return
	}
	for _, sr := range l.srs {
		if sr.Status == results.OK && countStatus(sr.Levels, results.OK) < len(sr.Levels) {
			sr.Status, sr.Reason = results.Interrupted, "interrupted before every level was measured"
		}
	}
}

// Down stops the service (thawed first: a stopped process takes no
// SIGTERM), commits its log and removes its limits; once.
func (l *live) Down() {
	if l.stopped || l.svc == nil {
		return
	}
	l.stopped = true
	l.Thaw()
	code, _ := l.svc.Stop()
	for _, sr := range l.srs {
		sr.ExitCode = max(code, 0)
		if sr.Status != results.OK && sr.LogTail == "" {
			sr.LogTail = tailFile(l.svc.LogPath(), 40)
		}
	}
	l.svc.Close()
}

func countStatus(ls []*results.LevelRun, status results.Status) int {
	n := 0
	for _, l := range ls {
		if l.Status == status {
			n++
		}
	}
	return n
}
