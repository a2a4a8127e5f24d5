// Package measure is what every way of measuring a plan asks of the lab,
// and what they share. The ways are packages of their own, each with its
// runner and its judgement: interleaved rounds over warm services
// (internal/rounds), the capacity at an objective (internal/capacity) and
// fresh starts one after another (internal/sequential). The lab keeps
// what they all use: builds, databases, the machine's noise, starting,
// freezing and thawing arms, contract checks, warm-ups, levels, audits
// and progress. A way reaches it only through the interfaces here, so it
// can be read, and tested (measuretest), without the lab.
package measure

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// Reporter is what every way of measuring tells the run: its plan, its
// record, and progress.
type Reporter interface {
	// Plan is the plan being run; Record its record, which Save writes.
	Plan() *plan.Plan
	Record() *results.Run
	Save()
	// Say prints a progress line; Warn also records it in run.json.
	Say(format string, args ...any)
	Warn(format string, args ...any)
	Progress() Progress
}

// Warm is what the ways that keep arms alive across a start ask of the
// lab (rounds and capacity): starting them afresh, frozen when not
// measured, readying them for a workload, load generators and audits.
type Warm interface {
	Reporter
	// BeforeStart applies the plan's database policy before a start of
	// the arms of ws; it returns what failed and why.
	BeforeStart(ctx context.Context, ws []plan.Workload) (string, error)
	// StartFrozen starts each arm afresh for trial, in a random order,
	// freezing each once healthy; it returns the arms that came up.
	StartFrozen(ctx context.Context, trial int, arms []plan.Implementation, rng *rand.Rand) []Arm
	// PrepareFrozen readies the live arms for workload w (number wi of
	// the plan's): contract check, scenario, warm-up; it returns those
	// ready, frozen again.
	PrepareFrozen(ctx context.Context, arms []Arm, wi int, w plan.Workload, trial int, rng *rand.Rand) []Arm
	// ResetForRounds empties w's data as the plan says and runs each
	// arm's scenario setup again.
	ResetForRounds(ctx context.Context, w plan.Workload, arms []Arm) error
	// Attacker is a load generator with the plan's options.
	Attacker(progress func(load.Progress), extra ...load.Option) *load.Attacker
	// Audit checks w's invariants on the data as it stands (none
	// without a database), on a deadline of its own that an interrupt
	// does not cut.
	Audit(ctx context.Context, w plan.Workload) ([]results.Violation, error)
}

// Starter is what a way of measuring that starts each implementation
// alone asks of the lab (sequential).
type Starter interface {
	Reporter
	// RunStart starts one implementation alone and measures it.
	RunStart(ctx context.Context, s plan.Start) []*results.ServiceRun
}

// Progress is the live progress of a run.
type Progress interface {
	AddTrial()
	Service(impl, workload string, trial int)
	Skip(levels int)
	Phase(name string, d time.Duration)
	OnProgress(p load.Progress)
}

// Arm is one implementation started for a trial and kept alive, frozen
// when not measured.
type Arm interface {
	// ID is the arm's name in the plan.
	ID() string
	Thaw()
	Freeze()
	// Exited reports whether the service has exited.
	Exited() bool
	// Records are the arm's records, one per workload of the plan.
	Records() []*results.ServiceRun
	// Alive reports whether the service still runs, failing sr if not;
	// Fail records why sr failed.
	Alive(ctx context.Context, sr *results.ServiceRun) bool
	Fail(ctx context.Context, sr *results.ServiceRun, format string, args ...any)
	// Scenario is the arm's prepared scenario of workload w.
	Scenario(w string) load.Scenario
	// Steps counts the requests of one iteration of w's scenario.
	Steps(w string) int
	// MeasureLevel measures level lr of w as a sequential run would (its
	// files, resources and audit); it returns why it failed, or "".
	MeasureLevel(ctx context.Context, w plan.Workload, lr *results.LevelRun) string
	// Written counts the rows w's requests write as they stand (nil: w
	// writes none, or they could not be counted); CheckWrites counts
	// again after a round of this arm alone and compares the rows gained
	// with the answers of the round's loads rs.
	Written(ctx context.Context, w plan.Workload) map[string]int64
	CheckWrites(ctx context.Context, w plan.Workload, before map[string]int64, rs ...*load.Result) (results.Writes, []results.Violation)
	// Measure runs m with a on workload w and samples the service's CPU
	// and memory over it, and w's database's CPU; the arm must be thawed.
	Measure(ctx context.Context, w plan.Workload, a *load.Attacker, sc load.Scenario, m load.Model) (Measured, error)
	// Finish records what each workload left and stops the service.
	Finish(ctx context.Context)
	// Down stops the service; once.
	Down()
}

// Measured is one run of load on an arm with the service's resources
// over it.
type Measured struct {
	Result *load.Result
	// At is when the load began.
	At time.Time
	// ServiceCPU is the service's CPU over the load, in percent of one
	// CPU, and RSSBytes its memory at the end; Sampled reports that both
	// were read.
	ServiceCPU float64
	RSSBytes   int64
	Sampled    bool
	// ServiceCPUSeconds is the CPU time the service's tree used from the
	// reading before the load to the one after it; Threads and FDs are
	// the tree's at the end (read with RSSBytes).
	ServiceCPUSeconds float64
	Threads, FDs      int
	// DBConnections counts the tree's established connections to the
	// database servers at the end (results.ArmRound.DBConnections).
	DBConnections int
	// What else the machine did meanwhile (results.ArmRound says how
	// each is counted); negative: not measured.
	StealPercent, OtherServiceCPU, OtherGeneratorCPU float64
	// DatabaseCPU is the CPU the workload's database server's process
	// tree used over the load, in percent of one CPU; 0 for a workload
	// without a database, or not read.
	DatabaseCPU float64
}

// Finish finishes every arm of ls.
func Finish(ctx context.Context, ls []Arm) {
	for _, l := range ls {
		l.Finish(ctx)
	}
}

// Down stops every arm of ls (a no-op for those finished).
func Down(ls []Arm) {
	for _, l := range ls {
		l.Down()
	}
}

// AuditAfter audits w's invariants after a start's measurements (what is
// names them: "the rounds", "the capacity search"); it returns the
// violations, each detail saying when it was found, and the warnings.
func AuditAfter(ctx context.Context, b Warm, w plan.Workload, trial int, what string) ([]results.Violation, []string) {
	vs, err := b.Audit(ctx, w)
	var msgs []string
	if err != nil {
		msgs = append(msgs, fmt.Sprintf("start %d: audit after %s: %v", trial, what, err))
	}
	for i, v := range vs {
		vs[i].Detail, vs[i].Start = fmt.Sprintf("after %s of start %d: %s", what, trial, v.Detail), trial
		msgs = append(msgs, fmt.Sprintf("start %d: INVARIANT FAILED after %s: %s: %s", trial, what, v.Check, v.Detail))
		b.Say("INVARIANT FAILED: %s after %s of start %d: %s: %s", w.Name, what, trial, v.Check, v.Detail)
	}
	return vs, msgs
}
