// Package measuretest is a lab that starts nothing, for testing the
// ways of measuring (internal/rounds, internal/capacity,
// internal/sequential): no process starts, and each arm's measurement is
// a figure the test chooses.
package measuretest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/measure"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// Catalog is the services the test plans may name, and their workloads.
var Catalog = plan.Catalog{
	"go-stdlib":   {"string", "bank"},
	"java-spring": {"string", "bank"},
	"node-http":   {"string", "bank"},
}

// Plan parses a plan for a two-CPU machine; the settle before each
// round is dropped (it would need a real load generator, and the rounds
// tests use the open model, whose rounds are not judged by it).
func Plan(t *testing.T, text string) *plan.Plan {
	t.Helper()
	p, err := plan.ParsePlan("test.yaml", []byte(text), Catalog, plan.MachineOf(2))
	if err != nil {
		t.Fatal(err)
	}
	p.Rounds.Settle = 0
	return p
}

// Bench is a lab that starts nothing: each arm answers at the p99
// latency Figure gives it, after Hold. The tests set its knobs before a
// run and read what it saw after.
type Bench struct {
	t   *testing.T
	p   *plan.Plan
	Rec *results.Run
	// Figure is an arm's p99 in a round, in ms (n counts its rounds).
	Figure func(arm string, n int) float64
	Hold   time.Duration
	// Warm is how long the arms' warm-up takes.
	Warm time.Duration
	// Steps counts the requests of an iteration of every workload's
	// scenario (0: one); an iteration's throughput is Steps requests.
	Steps int
	// Capacity, when set, is the open-model rate up to which an arm
	// meets a capacity plan's objective in a start (trial), in probes
	// of Sustained or less; over it, a tenth of its requests fail.
	Capacity  func(arm string, trial int, sustained bool) float64
	Sustained time.Duration

	mu       sync.Mutex
	Said     []string
	Starts   []int        // the trial of each StartFrozen
	Runs     []string     // each RunStart: "trial impl"
	Measured [][]string   // each Measure's arm, in order
	Models   []load.Model // each Measure's model, in order
	thawed   map[string]bool
	Rounds   map[string]int
	Levels   map[string]int // MeasureLevel calls per arm
}

var (
	_ measure.Warm    = (*Bench)(nil)
	_ measure.Starter = (*Bench)(nil)
	_ measure.Arm     = (*Arm)(nil)
)

// New is a fake lab running p, its arms' p99 given by figure.
func New(t *testing.T, p *plan.Plan, figure func(string, int) float64) *Bench {
	return &Bench{t: t, p: p, Rec: &results.Run{}, Figure: figure,
		thawed: map[string]bool{}, Rounds: map[string]int{}, Levels: map[string]int{}}
}

func (b *Bench) Plan() *plan.Plan           { return b.p }
func (b *Bench) Record() *results.Run       { return b.Rec }
func (b *Bench) Save()                      {}
func (b *Bench) Progress() measure.Progress { return progress{} }
func (b *Bench) Say(f string, a ...any) {
	b.mu.Lock()
	b.Said = append(b.Said, fmt.Sprintf(f, a...))
	b.mu.Unlock()
}
func (b *Bench) Warn(f string, a ...any) {
	b.Say(f, a...)
	b.Rec.Warnings = append(b.Rec.Warnings, fmt.Sprintf(f, a...))
}
func (b *Bench) BeforeStart(context.Context, []plan.Workload) (string, error)       { return "", nil }
func (b *Bench) ResetForRounds(context.Context, plan.Workload, []measure.Arm) error { return nil }
func (b *Bench) Attacker(func(load.Progress), ...load.Option) *load.Attacker        { return nil }
func (b *Bench) Audit(context.Context, plan.Workload) ([]results.Violation, error) {
	return nil, nil
}

func (b *Bench) StartFrozen(_ context.Context, trial int, arms []plan.Implementation, rng *rand.Rand) []measure.Arm {
	b.Starts = append(b.Starts, trial)
	var out []measure.Arm
	for _, i := range rng.Perm(len(arms)) {
		im := arms[i]
		a := &Arm{b: b, id: im.ID()}
		for _, w := range b.p.Workloads {
			sr := &results.ServiceRun{Implementation: im.ID(), Workload: w.Name, Trial: trial, Status: results.OK}
			for _, lv := range b.p.Load.Levels {
				sr.Levels = append(sr.Levels, &results.LevelRun{Level: lv, Status: results.OK})
			}
			a.records = append(a.records, sr)
			b.Rec.Services = append(b.Rec.Services, sr)
		}
		out = append(out, a)
	}
	return out
}

func (b *Bench) PrepareFrozen(_ context.Context, arms []measure.Arm, _ int, _ plan.Workload, _ int, _ *rand.Rand) []measure.Arm {
	time.Sleep(b.Warm)
	return arms
}

func (b *Bench) RunStart(_ context.Context, s plan.Start) []*results.ServiceRun {
	b.Runs = append(b.Runs, fmt.Sprintf("%d %s", s.Trial, s.Implementation.ID()))
	var out []*results.ServiceRun
	for _, w := range s.Workloads {
		out = append(out, &results.ServiceRun{Implementation: s.Implementation.ID(), Workload: w.Name, Trial: s.Trial, Status: results.OK})
	}
	return out
}

type progress struct{}

func (progress) AddTrial()                   {}
func (progress) Service(string, string, int) {}
func (progress) Skip(int)                    {}
func (progress) Phase(string, time.Duration) {}
func (progress) OnProgress(load.Progress)    {}

// Arm is one arm of a Bench.
type Arm struct {
	b       *Bench
	id      string
	records []*results.ServiceRun
}

func (a *Arm) ID() string                                              { return a.id }
func (a *Arm) Exited() bool                                            { return false }
func (a *Arm) Records() []*results.ServiceRun                          { return a.records }
func (a *Arm) Alive(context.Context, *results.ServiceRun) bool         { return true }
func (a *Arm) Scenario(string) load.Scenario                           { return nil }
func (a *Arm) Steps(string) int                                        { return max(a.b.Steps, 1) }
func (a *Arm) Finish(context.Context)                                  {}
func (a *Arm) Written(context.Context, plan.Workload) map[string]int64 { return nil }
func (a *Arm) CheckWrites(context.Context, plan.Workload, map[string]int64, ...*load.Result) (results.Writes, []results.Violation) {
	return nil, nil
}
func (a *Arm) Down() {}
func (a *Arm) Fail(_ context.Context, sr *results.ServiceRun, f string, args ...any) {
	sr.Status, sr.Reason = results.Failed, fmt.Sprintf(f, args...)
}

// Thaw and Freeze check that one arm at most runs at a time.
func (a *Arm) Thaw() {
	for id, on := range a.b.thawed {
		if on && id != a.id {
			a.b.t.Errorf("%s thawed while %s runs", a.id, id)
		}
	}
	a.b.thawed[a.id] = true
}
func (a *Arm) Freeze() { a.b.thawed[a.id] = false }

func (a *Arm) MeasureLevel(context.Context, plan.Workload, *results.LevelRun) string {
	a.b.Levels[a.id]++
	return ""
}

func (a *Arm) Measure(_ context.Context, _ plan.Workload, _ *load.Attacker, _ load.Scenario, m load.Model) (measure.Measured, error) {
	b := a.b
	if !b.thawed[a.id] {
		b.t.Errorf("%s measured frozen", a.id)
	}
	time.Sleep(b.Hold)
	b.Rounds[a.id]++
	b.Models = append(b.Models, m)
	if n := len(b.Measured); n == 0 || len(b.Measured[n-1]) == len(b.p.Arms()) {
		b.Measured = append(b.Measured, nil)
	}
	b.Measured[len(b.Measured)-1] = append(b.Measured[len(b.Measured)-1], a.id)
	// An open model serves its rate; a closed one an iteration a
	// millisecond a user for go-stdlib, half that for the others.
	var rate float64
	switch m := m.(type) {
	case load.OpenModel:
		rate = m.Rate
	case load.ClosedModel:
		rate = 1000 * float64(m.Users)
		if a.id != "go-stdlib" {
			rate /= 2
		}
	}
	rate *= float64(max(b.Steps, 1))
	res := &load.Result{Summary: load.Summary{DurationSeconds: 1,
		Total: load.LabelStats{Throughput: rate, Samples: int64(rate)}}}
	res.Summary.Total.Latency.P99 = b.Figure(a.id, b.Rounds[a.id])
	if om, ok := m.(load.OpenModel); ok && b.Capacity != nil && om.Rate > b.Capacity(a.id, b.Starts[len(b.Starts)-1], om.Duration > b.Sustained) {
		res.Summary.Total.Errors = res.Summary.Total.Samples / 10
	}
	if om, ok := m.(load.OpenModel); ok && b.Capacity != nil {
		res.Summary.DurationSeconds = om.Duration.Seconds()
	}
	return measure.Measured{Result: res, At: time.Now(), ServiceCPU: 100, Sampled: true,
		StealPercent: -1, OtherServiceCPU: -1, OtherGeneratorCPU: -1}, nil
}

// Steady answers about the same p99 every round: 1 ms for go-stdlib,
// 2 ms for java-spring, 3 ms for the others.
func Steady(arm string, n int) float64 {
	ms := 3.0
	switch arm {
	case "go-stdlib":
		ms = 1
	case "java-spring":
		ms = 2
	}
	return ms * (1 + 0.001*float64(n%2))
}

// Noisy answers figures that vary by 20% from round to round, each arm
// in its own phase.
func Noisy(arm string, n int) float64 {
	return Steady(arm, n) * (1 + 0.2*float64((n+len(arm))%3-1))
}
