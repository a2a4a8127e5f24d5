package lab

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/showdownlab/showdown/internal/machine"
	"github.com/showdownlab/showdown/internal/measure"
	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// What the lab offers the ways of measuring (measure.Warm for rounds and
// capacity, measure.Starter for sequential) and the arms it keeps alive
// for one (measure.Arm).
var (
	_ measure.Warm    = (*execution)(nil)
	_ measure.Starter = (*execution)(nil)
	_ measure.Arm     = (*live)(nil)
)

// Plan is the plan being run.
func (x *execution) Plan() *plan.Plan { return x.plan }

// Record is the run's record.
func (x *execution) Record() *results.Run { return x.rec }

// Save writes run.json as it stands.
func (x *execution) Save() { _ = results.WriteRun(x.dir, x.rec) }

// Progress is the run's live progress.
func (x *execution) Progress() measure.Progress { return x.progress }

// Audit checks w's invariants on its data as it stands, on its own
// deadline (AuditTimeout), which an interrupt does not cut.
func (x *execution) Audit(ctx context.Context, w plan.Workload) ([]results.Violation, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AuditTimeout)
	defer cancel()
	vs, err := x.dbs.Audit(ctx, w.Name, -1, -1)
	out := make([]results.Violation, len(vs))
	for i, v := range vs {
		out[i] = results.Violation{Check: v.Check, Detail: v.Detail}
	}
	return out, err
}

// StartFrozen starts each arm afresh for trial, in a random order, and
// freezes it once healthy, so the next one starts alone; it returns the
// arms that came up (every arm's records are in the run either way).
func (x *execution) StartFrozen(ctx context.Context, trial int, arms []plan.Implementation, rng *rand.Rand) []measure.Arm {
	var lives []measure.Arm
	for _, i := range rng.Perm(len(arms)) {
		if ctx.Err() != nil {
			break
		}
		l := x.bringUp(ctx, plan.Start{Implementation: arms[i], Workloads: x.plan.Workloads, Trial: trial}, false)
		x.rec.Services = append(x.rec.Services, l.srs...)
		if l.svc == nil {
			continue
		}
		lives = append(lives, l)
		idle := rssOf(l.svc.PID())
		for _, sr := range l.srs {
			sr.StartupSeconds, sr.RSSIdleBytes = l.svc.Startup.Seconds(), idle
		}
		l.Freeze()
	}
	return lives
}

// PrepareFrozen thaws each live arm in turn, in a random order, readies
// it for workload w (number wi of the plan's: contract check, scenario,
// warm-up) and freezes it again; it returns the arms that are ready.
func (x *execution) PrepareFrozen(ctx context.Context, lives []measure.Arm, wi int, w plan.Workload, trial int, rng *rand.Rand) []measure.Arm {
	var ready []measure.Arm
	for _, i := range rng.Perm(len(lives)) {
		l := lives[i].(*live)
		sr := l.srs[wi]
		if ctx.Err() != nil || sr.Status != results.OK {
			continue
		}
		l.Thaw()
		if !l.Alive(ctx, sr) {
			continue
		}
		x.progress.Service(sr.Name(), w.Name, trial)
		sc, reason := x.prepareWorkload(ctx, l.svc, l.im, w, sr, wi == 0)
		if reason != "" {
			l.Fail(ctx, sr, "%s", reason)
		} else {
			l.settled[w.Name] = sc
			ready = append(ready, l)
		}
		l.Freeze()
	}
	return ready
}

// ResetForRounds empties the workload's data before the rounds, as the
// plan's reset says (unless never), and runs each arm's scenario setup
// again: every arm starts its rounds from the same data. Between rounds
// nothing is reset: what the rounds write grows under every arm alike,
// as they take turns.
func (x *execution) ResetForRounds(ctx context.Context, w plan.Workload, ls []measure.Arm) error {
	if x.plan.Database.Reset == "never" || !w.HasDatabase() {
		return nil
	}
	if err := x.dbs.Reset(ctx, w.Name); err != nil {
		return fmt.Errorf("reset database: %w", err)
	}
	for _, a := range ls {
		l := a.(*live)
		sc := l.settled[w.Name]
		if !sc.HasSetup() {
			continue
		}
		l.Thaw()
		err := setup(ctx, sc)
		l.Freeze()
		if err != nil {
			return fmt.Errorf("%s: scenario setup: %w", l.im.ID(), err)
		}
	}
	return nil
}

// ID is the arm's name in the plan.
func (l *live) ID() string { return l.im.ID() }

// Exited reports whether the service has exited.
func (l *live) Exited() bool {
	select {
	case <-l.svc.Exited():
		return true
	default:
		return false
	}
}

// Records are the arm's records, one per measurement of its start.
func (l *live) Records() []*results.ServiceRun { return l.srs }

// Scenario is the arm's prepared scenario of workload w.
func (l *live) Scenario(w string) load.Scenario { return l.settled[w] }

// Steps counts the requests of one iteration of w's scenario.
func (l *live) Steps(w string) int {
	if sc := l.settled[w]; sc != nil {
		return len(sc.Steps())
	}
	return 0
}

// MeasureLevel measures level lr of a prepared workload as a sequential
// run measures it; it returns why it failed, or "".
func (l *live) MeasureLevel(ctx context.Context, w plan.Workload, lr *results.LevelRun) string {
	return l.x.levelOf(ctx, l.svc, l.settled[w.Name], w, lr)
}

// Measure runs m with a on the (thawed) arm, sampling the service's CPU
// over it and its memory, threads, descriptors and database connections
// at the end, and the CPU of w's database server.
func (l *live) Measure(ctx context.Context, w plan.Workload, a *load.Attacker, sc load.Scenario, m load.Model) (measure.Measured, error) {
	smp := monitor.NewSampler(l.svc.PID())
	_, _ = smp.Sample(ctx)
	// The server's whole tree: PostgreSQL serves each connection from a
	// backend process of its own. Its readings sit just inside the
	// service's, so the interval they time is the load's.
	var dbs *monitor.Sampler
	if pid := l.x.dbs.PID(w.Name); w.HasDatabase() && pid > 0 {
		dbs = monitor.NewSampler(pid)
		if _, err := dbs.Sample(ctx); err != nil {
			dbs = nil
		}
	}
	out := measure.Measured{At: time.Now().UTC(), StealPercent: -1, OtherServiceCPU: -1, OtherGeneratorCPU: -1}
	st0, perr := machine.ReadStat()
	res, err := a.Attack(ctx, sc, m)
	st1, perr1 := machine.ReadStat()
	if dbs != nil {
		if d, err := dbs.Sample(ctx); err == nil {
			out.DatabaseCPU = d.CPUPercent
		}
	}
	after, serr := smp.Sample(ctx)
	if err != nil {
		return out, err
	}
	out.Result = res
	if serr == nil {
		out.ServiceCPU, out.RSSBytes, out.Sampled = after.CPUPercent, int64(after.RSSBytes), true
		out.ServiceCPUSeconds = after.CPUPercent / 100 * after.Interval.Seconds()
		out.Threads, out.FDs = after.Threads, after.FDs
		if l.x.dbs != nil {
			// Counted from the service's own sockets: the servers are
			// shared by every arm alive, so their sessions are no one's.
			out.DBConnections = monitor.Connections(l.svc.PID(), l.x.dbs.Ports())
		}
	}
	if perr == nil && perr1 == nil {
		out.StealPercent = machine.StealPercent(st0, st1)
		if serr == nil {
			out.OtherServiceCPU = max(0, machine.BusyPercent(st0, st1, l.cpus)-after.CPUPercent)
		}
		if s := res.Summary; s.DurationSeconds > 0 {
			own := 100 * s.BusyCPUSeconds() / s.DurationSeconds
			out.OtherGeneratorCPU = max(0, machine.BusyPercent(st0, st1, cpuSet(l.x.plan.Placement.GeneratorCPUs))-own)
		}
	}
	return out, nil
}

// Finish thaws the arm, records what each workload left, marks what an
// interrupt cut short, and stops the service.
func (l *live) Finish(ctx context.Context) {
	if l.svc == nil || l.stopped {
		return
	}
	l.Thaw()
	for _, sr := range l.srs {
		if sr.Status == results.OK {
			l.after(ctx, sr)
		}
	}
	l.interrupted(ctx)
	l.Down()
}
