package lab

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/load"
)

// level runs one load level, sampling the service, its database and the
// generator every second, writes the level's files, then checks the
// workload's invariants.
func (x *execution) level(ctx context.Context, svc *stack.Service, sc *scenario.Scenario, w plan.Workload, lr *results.LevelRun) {
	abs := filepath.Join(x.dir, lr.Dir)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		lr.Status, lr.Reason = results.Failed, err.Error()
		return
	}
	before := x.writtenBefore(ctx, w, lr)
	mctx, stopSampling := context.WithCancel(ctx)
	svcS := sampleInBackground(mctx, svc.PID())
	var dbS *samples
	if pid := x.dbs.PID(w.Name); pid > 0 {
		dbS = sampleInBackground(mctx, pid)
	}
	genS := sampleInBackground(mctx, os.Getpid(), monitor.RootOnly())
	pl := x.plan.Placement
	machS := sampleMachine(mctx, cpuSet(pl.ServiceCPUs), cpuSet(pl.GeneratorCPUs))

	d := time.Duration(x.plan.Load.Duration)
	x.progress.level(lr.Level, d)
	res, err := x.Attacker(x.progress.OnProgress).Attack(ctx, load.StatusChecked(sc), x.model(lr.Level, d))
	stopSampling()
	ss := results.Samples{Service: svcS.wait(), Database: dbS.wait(), Generator: genS.wait(), Machine: machS.wait(),
		OnServiceCPUs:   results.Procs{Service: true, Database: sameCPUs(pl.DatabaseCPUs, pl.ServiceCPUs), Generator: sameCPUs(pl.GeneratorCPUs, pl.ServiceCPUs)},
		OnGeneratorCPUs: results.Procs{Service: sameCPUs(pl.ServiceCPUs, pl.GeneratorCPUs), Database: sameCPUs(pl.DatabaseCPUs, pl.GeneratorCPUs), Generator: true}}
	defer x.progress.result(lr)
	if err != nil {
		lr.Status, lr.Reason = results.Failed, err.Error()
		return
	}
	if err := results.WriteLevel(abs, res, ss); err != nil {
		lr.Status, lr.Reason = results.Failed, "write results: "+err.Error()
		return
	}
	lr.Status = results.OK
	if ctx.Err() != nil {
		// Cut short by a signal: its files hold what was measured, but it
		// is no level of the plan's length.
		lr.Status = results.Interrupted
		lr.Reason = fmt.Sprintf("interrupted after %.1fs of %s", res.Summary.DurationSeconds, d)
	}
	lr.Total, _ = res.Row("")
	s := res.Summary
	lr.TargetRate, lr.AchievedRate, lr.Late, lr.Dropped = s.TargetRate, s.AchievedRate, s.Late, s.Dropped
	lr.Warnings = append(lr.Warnings, s.Warnings...)
	lr.Service, lr.Database, lr.Generator = results.SummarizeResources(ss.Service), results.SummarizeResources(ss.Database), results.SummarizeResources(ss.Generator)
	lr.GeneratorCPUs = generatorCPUs()
	// The sampler sees the loops' spinning as CPU; the guard leaves it out.
	busy := lr.Generator.CPUMean
	if s.DurationSeconds > 0 {
		busy = max(busy-100*s.SpinSeconds/s.DurationSeconds, 0)
	}
	lr.GeneratorCPUPercent, lr.GeneratorBound = generatorGuard(busy, lr.GeneratorCPUs)
	if lr.GeneratorBound {
		lr.Warnings = append(lr.Warnings, results.GeneratorNote(lr.GeneratorCPUPercent, lr.GeneratorCPUs)+
			": the figures may show the generator's limit, not the service's"+spareCPUsHint(pl, runtime.NumCPU()))
	}
	if d := results.SummarizeDisturbances(ss.Disturbances(res.Summary.Start)); d != nil {
		lr.Disturbance = d
		if d.Flagged {
			lr.Warnings = append(lr.Warnings, fmt.Sprintf("disturbed: %d of %d seconds had other processes on the service's or the generator's CPUs or steal time (means: %.0f%% and %.0f%% of a CPU, steal %.1f%%; load average up to %.1f)",
				d.DisturbedSeconds, d.Seconds, d.OtherServiceCPUMean, d.OtherGeneratorCPUMean, d.StealMean, d.Load1Max))
		}
	}
	if lr.Status == results.OK {
		lr.Thresholds = thresholds(x.plan.FailIf, res)
	}
	for _, t := range lr.Thresholds {
		if t.Crossed {
			why := fmt.Sprintf("measured %g", t.Measured)
			if t.Error != "" {
				why = t.Error
			}
			x.Say("THRESHOLD CROSSED: %s %s level %d: %s (%s)", svc.Manifest().Name, w.Name, lr.Level, t.Expr, why)
		}
	}
	if lr.Total.Errors > 0 {
		lr.Warnings = append(lr.Warnings, fmt.Sprintf("%d errors (%.2f%%): %s", lr.Total.Errors, lr.Total.ErrorPercent, lr.Total.ErrorReasons()))
	}
	select {
	case <-svc.Exited():
		lr.Status, lr.Reason = results.Failed, "the service exited during the level"
		return
	default:
	}
	// The audit runs even after an interrupt, on its own deadline: the
	// invariants must hold whenever the load stops.
	lr.Violations, lr.Writes = x.audit(ctx, w, sc, res, before)
	for _, v := range lr.Violations {
		x.Say("INVARIANT FAILED: %s %s level %d: %s: %s", svc.Manifest().Name, w.Name, lr.Level, v.Check, v.Detail)
	}
}

// generatorGuard is the level's guard on the generator: its mean CPU
// (cpuMean, in percent of one CPU, as monitor samples it) in percent of
// the cpus it could use, and whether that is over
// results.GeneratorBoundPercent, the same line the interleaved verdict
// draws for an arm.
func generatorGuard(cpuMean float64, cpus int) (percent float64, bound bool) {
	percent = cpuMean / float64(max(cpus, 1))
	return math.Round(percent*10) / 10, percent > results.GeneratorBoundPercent
}

// generatorCPUs is how many CPUs the generator (this process) can use at
// once: the CPUs it may run on (after Run pinned it, the placement's
// generator CPUs), or its GOMAXPROCS where that is fewer. runtime.NumCPU
// would not do: it is the count at the process's start, before the pin.
func generatorCPUs() int {
	n := runtime.GOMAXPROCS(0)
	if c := affinityCPUs(); c > 0 {
		n = min(n, c)
	}
	return max(n, 1)
}

// affinityCPUs counts the CPUs the calling thread may run on (0 when the
// kernel does not say). Run pins every thread of the process alike, and
// new threads inherit it.
func affinityCPUs() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0
	}
	return set.Count()
}

// spareCPUsHint names the machine's CPUs (ncpu of them) that no process
// of the placement uses, as a hint for a generator-bound level; "" when
// there are none.
func spareCPUsHint(pl plan.Placement, ncpu int) string {
	used := map[int]bool{}
	for _, l := range []string{pl.ServiceCPUs, pl.GeneratorCPUs, pl.DatabaseCPUs} {
		for _, c := range cpuSet(l) {
			used[c] = true
		}
	}
	var spare []string
	for c := range ncpu {
		if !used[c] {
			spare = append(spare, strconv.Itoa(c))
		}
	}
	if len(spare) == 0 {
		return ""
	}
	return fmt.Sprintf("; CPUs %s are in no placement: add them to placement.generator_cpus", strings.Join(spare, ","))
}

// sameCPUs reports whether two placements put processes on the same CPUs
// (an empty placement is every CPU).
func sameCPUs(a, b string) bool {
	return slices.Equal(cpuSet(a), cpuSet(b))
}
