package design

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// The designs are tested here against a fake bench: no process starts,
// and each arm's measurement is a figure the test chooses.

var testCatalog = plan.Catalog{
	"go-stdlib":   {"string", "bank"},
	"java-spring": {"string", "bank"},
	"node-http":   {"string", "bank"},
}

// testPlan parses a plan for a two-CPU machine; the settle before each
// round is dropped (it would need a real load generator, and the rounds
// tests use the open model, whose rounds are not judged by it).
func testPlan(t *testing.T, text string) *plan.Plan {
	t.Helper()
	p, err := plan.ParsePlan("test.yaml", []byte(text), testCatalog, plan.MachineOf(2))
	if err != nil {
		t.Fatal(err)
	}
	p.Rounds.Settle = 0
	return p
}

// fakeBench is a lab that starts nothing: each arm answers at the p99
// latency figure gives it, after hold.
type fakeBench struct {
	t   *testing.T
	p   *plan.Plan
	rec *results.Run
	// figure is an arm's p99 in a round, in ms (n counts its rounds).
	figure func(arm string, n int) float64
	hold   time.Duration
	// warm is how long the arms' warm-up takes.
	warm time.Duration
	// steps counts the requests of an iteration of every workload's
	// scenario (0: one); an iteration's throughput is steps requests.
	steps int
	// capacity, when set, is the open-model rate up to which an arm
	// meets a capacity plan's objective in a start (trial), in probes
	// of sustained or less; over it, a tenth of its requests fail.
	capacity  func(arm string, trial int, sustained bool) float64
	sustained time.Duration

	mu       sync.Mutex
	said     []string
	starts   []int        // the trial of each StartFrozen
	runs     []string     // each RunStart: "trial impl"
	measured [][]string   // each Measure's arm, in order
	models   []load.Model // each Measure's model, in order
	thawed   map[string]bool
	rounds   map[string]int
	levels   map[string]int // MeasureLevel calls per arm
}

var _ Bench = (*fakeBench)(nil)

func newFakeBench(t *testing.T, p *plan.Plan, figure func(string, int) float64) *fakeBench {
	return &fakeBench{t: t, p: p, rec: &results.Run{}, figure: figure,
		thawed: map[string]bool{}, rounds: map[string]int{}, levels: map[string]int{}}
}

func (b *fakeBench) Plan() *plan.Plan     { return b.p }
func (b *fakeBench) Record() *results.Run { return b.rec }
func (b *fakeBench) Save()                {}
func (b *fakeBench) Progress() Progress   { return fakeProgress{} }
func (b *fakeBench) Say(f string, a ...any) {
	b.mu.Lock()
	b.said = append(b.said, fmt.Sprintf(f, a...))
	b.mu.Unlock()
}
func (b *fakeBench) Warn(f string, a ...any) {
	b.Say(f, a...)
	b.rec.Warnings = append(b.rec.Warnings, fmt.Sprintf(f, a...))
}
func (b *fakeBench) BeforeStart(context.Context, []plan.Workload) (string, error) { return "", nil }
func (b *fakeBench) ResetForRounds(context.Context, plan.Workload, []Arm) error   { return nil }
func (b *fakeBench) Attacker(func(load.Progress), ...load.Option) *load.Attacker  { return nil }
func (b *fakeBench) Audit(context.Context, plan.Workload) ([]results.Violation, error) {
	return nil, nil
}

func (b *fakeBench) StartFrozen(_ context.Context, trial int, arms []plan.Implementation, rng *rand.Rand) []Arm {
	b.starts = append(b.starts, trial)
	var out []Arm
	for _, i := range rng.Perm(len(arms)) {
		im := arms[i]
		a := &fakeArm{b: b, id: im.ID()}
		for _, w := range b.p.Workloads {
			sr := &results.ServiceRun{Implementation: im.ID(), Workload: w.Name, Trial: trial, Status: results.OK}
			for _, lv := range b.p.Load.Levels {
				sr.Levels = append(sr.Levels, &results.LevelRun{Level: lv, Status: results.OK})
			}
			a.records = append(a.records, sr)
			b.rec.Services = append(b.rec.Services, sr)
		}
		out = append(out, a)
	}
	return out
}

func (b *fakeBench) PrepareFrozen(_ context.Context, arms []Arm, _ int, _ plan.Workload, _ int, _ *rand.Rand) []Arm {
	time.Sleep(b.warm)
	return arms
}

func (b *fakeBench) RunStart(_ context.Context, s plan.Start) []*results.ServiceRun {
	b.runs = append(b.runs, fmt.Sprintf("%d %s", s.Trial, s.Implementation.ID()))
	var out []*results.ServiceRun
	for _, w := range s.Workloads {
		out = append(out, &results.ServiceRun{Implementation: s.Implementation.ID(), Workload: w.Name, Trial: s.Trial, Status: results.OK})
	}
	return out
}

type fakeProgress struct{}

func (fakeProgress) AddTrial()                   {}
func (fakeProgress) Service(string, string, int) {}
func (fakeProgress) Skip(int)                    {}
func (fakeProgress) Phase(string, time.Duration) {}
func (fakeProgress) OnProgress(load.Progress)    {}

// fakeArm is one arm of a fakeBench.
type fakeArm struct {
	b       *fakeBench
	id      string
	records []*results.ServiceRun
}

var _ Arm = (*fakeArm)(nil)

func (a *fakeArm) ID() string                                              { return a.id }
func (a *fakeArm) Exited() bool                                            { return false }
func (a *fakeArm) Records() []*results.ServiceRun                          { return a.records }
func (a *fakeArm) Alive(context.Context, *results.ServiceRun) bool         { return true }
func (a *fakeArm) Scenario(string) load.Scenario                           { return nil }
func (a *fakeArm) Steps(string) int                                        { return max(a.b.steps, 1) }
func (a *fakeArm) Finish(context.Context)                                  {}
func (a *fakeArm) Written(context.Context, plan.Workload) map[string]int64 { return nil }
func (a *fakeArm) CheckWrites(context.Context, plan.Workload, map[string]int64, ...*load.Result) (results.Writes, []results.Violation) {
	return nil, nil
}
func (a *fakeArm) Down() {}
func (a *fakeArm) Fail(_ context.Context, sr *results.ServiceRun, f string, args ...any) {
	sr.Status, sr.Reason = results.Failed, fmt.Sprintf(f, args...)
}

// Thaw and Freeze check that one arm at most runs at a time.
func (a *fakeArm) Thaw() {
	for id, on := range a.b.thawed {
		if on && id != a.id {
			a.b.t.Errorf("%s thawed while %s runs", a.id, id)
		}
	}
	a.b.thawed[a.id] = true
}
func (a *fakeArm) Freeze() { a.b.thawed[a.id] = false }

func (a *fakeArm) MeasureLevel(context.Context, plan.Workload, *results.LevelRun) string {
	a.b.levels[a.id]++
	return ""
}

func (a *fakeArm) Measure(_ context.Context, _ plan.Workload, _ *load.Attacker, _ load.Scenario, m load.Model) (Measured, error) {
	b := a.b
	if !b.thawed[a.id] {
		b.t.Errorf("%s measured frozen", a.id)
	}
	time.Sleep(b.hold)
	b.rounds[a.id]++
	b.models = append(b.models, m)
	if n := len(b.measured); n == 0 || len(b.measured[n-1]) == len(b.p.Arms()) {
		b.measured = append(b.measured, nil)
	}
	b.measured[len(b.measured)-1] = append(b.measured[len(b.measured)-1], a.id)
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
	rate *= float64(max(b.steps, 1))
	res := &load.Result{Summary: load.Summary{DurationSeconds: 1,
		Total: load.LabelStats{Throughput: rate, Samples: int64(rate)}}}
	res.Summary.Total.Latency.P99 = b.figure(a.id, b.rounds[a.id])
	if om, ok := m.(load.OpenModel); ok && b.capacity != nil && om.Rate > b.capacity(a.id, b.starts[len(b.starts)-1], om.Duration > b.sustained) {
		res.Summary.Total.Errors = res.Summary.Total.Samples / 10
	}
	if om, ok := m.(load.OpenModel); ok && b.capacity != nil {
		res.Summary.DurationSeconds = om.Duration.Seconds()
	}
	return Measured{Result: res, At: time.Now(), ServiceCPU: 100, Sampled: true,
		StealPercent: -1, OtherServiceCPU: -1, OtherGeneratorCPU: -1}, nil
}

// steady answers about the same p99 every round: 1 ms for go-stdlib,
// 2 ms for java-spring, 3 ms for the others.
func steady(arm string, n int) float64 {
	ms := 3.0
	switch arm {
	case "go-stdlib":
		ms = 1
	case "java-spring":
		ms = 2
	}
	return ms * (1 + 0.001*float64(n%2))
}

// noisy answers figures that vary by 20% from round to round, each arm
// in its own phase.
func noisy(arm string, n int) float64 {
	return steady(arm, n) * (1 + 0.2*float64((n+len(arm))%3-1))
}

const roundsPlan = `name: r
implementations: [go-stdlib, java-spring, node-http]
workloads: [string]
round: 500ms
load:
  model: open
  levels: [10]
  duration: 1s
  warmup: 1s
`

// TestRoundsOrder: each round measures every arm once, one at a time, in
// an order the next round mirrors; every arm's level is measured alone
// once a start; steady arms are precise after the fewest rounds, so each
// of the plan's starts stops there and no start is added.
func TestRoundsOrder(t *testing.T) {
	p := testPlan(t, roundsPlan+"trials: 2\ntrials_max: 4\nmeasure_max: 5s\n")
	b := newFakeBench(t, p, steady)
	Rounds{}.Run(context.Background(), b)

	if got, want := b.starts, []int{1, 2}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("starts %v, want %v: precise figures need no start past the plan's", got, want)
	}
	c := b.rec.Comparisons
	if len(c) != 1 {
		t.Fatalf("%d comparisons, want 1", len(c))
	}
	if got, want := len(c[0].Rounds), 2*plan.MinRounds; got != want {
		t.Errorf("%d rounds, want %d (the fewest, on each of 2 starts)", got, want)
	}
	for i, r := range c[0].Rounds {
		var order []string
		for _, ar := range r.Arms {
			order = append(order, ar.Arm)
		}
		if len(order) != 3 || len(uniq(order)) != 3 {
			t.Errorf("round %d measured %v, want each of the 3 arms once", i+1, order)
		}
		if r.Index%2 == 0 {
			prev := c[0].Rounds[i-1]
			for j := range order {
				if want := prev.Arms[len(order)-1-j].Arm; order[j] != want {
					t.Errorf("start %d round %d order %v does not mirror round %d's", r.Start, r.Index, order, prev.Index)
					break
				}
			}
		}
	}
	for _, id := range []string{"go-stdlib", "java-spring", "node-http"} {
		if b.levels[id] != 2 {
			t.Errorf("%s's level measured alone %d times, want once a start", id, b.levels[id])
		}
	}
	v := c[0].Verdict
	if v == nil || len(v.Pairs) != 2 {
		t.Fatalf("verdict %+v, want 2 adjacent pairs", v)
	}
	if len(v.Unresolved) != 0 {
		t.Errorf("steady arms left pairs unresolved: %v", v.Unresolved)
	}
}

// TestRoundsBudget: noisy figures and a costly warm-up make the rounds
// worth more than the fewest (interleave.RoundsWanted asks for about 16
// a start); a start's share of measure_max ends them first, and the
// starts stop once measure_max is spent though trials_max allows more.
// The fake's rounds and warm-ups take real time, and a busy machine
// stretches them (a CI run with other packages beside it got 4 rounds a
// start and a third start), so the test holds the rule against the
// times the rounds themselves record, not against a round's nominal
// 60 ms: each start stops within one round of its share, and a start
// after the plan's two begins only while the rounds before it took less
// than measure_max.
func TestRoundsBudget(t *testing.T) {
	p := testPlan(t, roundsPlan+"trials: 2\ntrials_max: 10\nmeasure_max: 1s\nprecision: 0.5%\n")
	b := newFakeBench(t, p, noisy)
	b.hold, b.warm = 20*time.Millisecond, 300*time.Millisecond
	Rounds{}.Run(context.Background(), b)

	if len(b.starts) < 2 || len(b.starts) >= 10 {
		t.Errorf("%d starts, want the plan's 2 and fewer than trials_max: measure_max is spent first", len(b.starts))
	}
	c := b.rec.Comparisons[0]
	type span struct {
		rounds      int
		first, last time.Time
	}
	spans := map[int]*span{}
	for _, r := range c.Rounds {
		sp := spans[r.Start]
		if sp == nil {
			sp = &span{first: r.Arms[0].At}
			spans[r.Start] = sp
		}
		sp.rounds++
		sp.last = r.Arms[len(r.Arms)-1].At
	}
	share := time.Duration(p.Rounds.MeasureMax) / time.Duration(p.MinStarts())
	var used time.Duration
	for s := 1; s <= len(spans); s++ {
		sp := spans[s]
		if sp == nil {
			t.Fatalf("start %d measured no round", s)
		}
		took := sp.last.Sub(sp.first)
		round := took / time.Duration(max(1, sp.rounds-1))
		if sp.rounds < plan.MinRounds {
			t.Errorf("start %d: %d rounds, want at least %d", s, sp.rounds, plan.MinRounds)
		}
		// Past the fewest, a start's rounds end within a round (and the
		// mirrored pair it completes) of its share.
		if sp.rounds > plan.MinRounds && took > share+3*round {
			t.Errorf("start %d: %d rounds over %v, past its share of %v by more than a pair of rounds (%v each)", s, sp.rounds, took, share, round)
		}
		// The runner counts each round from its start to its end; the
		// records give each round's instant, so the time from a start's
		// first round to its last is the least it can have counted (a
		// CI run whose estimate added an average round read 1.09 s
		// where the runner had counted under 1 s).
		if s > p.MinStarts() && used >= time.Duration(p.Rounds.MeasureMax) {
			t.Errorf("start %d began with at least %v of rounds spent, measure_max %v", s, used, time.Duration(p.Rounds.MeasureMax))
		}
		used += took
	}
	if len(spans) == 2 && spans[1].rounds <= plan.MinRounds && spans[2].rounds <= plan.MinRounds {
		t.Logf("both starts stopped at the fewest rounds: the machine stretched the rounds past the share")
	}
}

// TestRoundsSetupsOutgrowBudget: when the first start's warm-ups alone
// show that the plan's two starts cannot fit its budget, the run says so
// at once, as a warning in run.json, and the verdict says what the run
// took and what the setups took of it. The fake's warm-ups take real
// time (300 ms a start), so two starts' setups outgrow a budget of
// 500 ms however fast the machine.
func TestRoundsSetupsOutgrowBudget(t *testing.T) {
	p := testPlan(t, roundsPlan+"trials: 2\n")
	p.Rounds.Budget = plan.Duration(500 * time.Millisecond) // below what a plan may name: the fake's minutes are milliseconds
	b := newFakeBench(t, p, noisy)
	b.hold, b.warm = 20*time.Millisecond, 300*time.Millisecond
	Rounds{}.Run(context.Background(), b)

	warned := 0
	for _, w := range b.rec.Warnings {
		if strings.Contains(w, "cannot hold this plan's 2 starts") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("%d warnings that the budget cannot hold the starts, want 1: %q", warned, b.rec.Warnings)
	}
	v := b.rec.Comparisons[0].Verdict
	if v == nil || v.TookSeconds <= 0.5 || v.OverranStarts != 2 || v.SetupsSeconds < 0.6 || v.SetupsSeconds > v.TookSeconds {
		t.Fatalf("verdict %+v: want the run's time over 500 ms, two starts, and setups of at least 600 ms within it", v)
	}
}

// TestRateInRequests: a rate is in requests a second, whatever the
// scenario's steps: on a workload of 7 steps an iteration, the plan's
// 700 req/s are 100 iterations a second, and the automatic rate (two
// fifths of the slowest arm's throughput, in requests) too.
func TestRateInRequests(t *testing.T) {
	p := testPlan(t, `name: r
implementations: [go-stdlib, java-spring]
workloads: [bank]
round: 500ms
load:
  levels: [1]
  duration: 1s
  warmup: 1s
trials: 2
measure_max: 4s
at_rate: {rates: [700, auto]}
`)
	b := newFakeBench(t, p, steady)
	b.steps = 7
	Rounds{}.Run(context.Background(), b)
	rates := map[float64]int{}
	for _, m := range b.models {
		if o, ok := m.(load.OpenModel); ok {
			rates[o.Rate]++
		}
	}
	// java-spring serves 500 iterations a second at the level, 3500
	// req/s; the rates are in requests: 700/7 and the automatic 0.4 *
	// 3500 = 1400, /7.
	for _, want := range []float64{100, 200} {
		if rates[want] == 0 {
			t.Errorf("no round at %g iterations a second; the models' rates: %v", want, rates)
		}
	}
	if len(rates) != 2 {
		t.Errorf("rounds at %v iterations a second, want 100 and 200 only", rates)
	}
	var auto *results.Comparison
	for _, c := range b.rec.Comparisons {
		if c.AtRate && c.RateRule != "the plan's" {
			auto = c
		}
	}
	if auto == nil || auto.Level != 1400 {
		t.Logf("said:\n%s", strings.Join(b.said, "\n"))
		t.Fatalf("automatic rate %+v, want 1400 req/s (two fifths of 3500 req/s)", auto)
	}
	if v := auto.Verdict; v == nil || len(v.Arms) != 2 || v.Arms[0].Throughput < 1399 || v.Arms[0].Throughput > 1401 {
		t.Errorf("the automatic rate's verdict %+v, want each arm at 1400 req/s", v)
	}
}

// TestSequential: every start alone, trial by trial, implementations in
// an order rotated each trial.
func TestSequential(t *testing.T) {
	p := testPlan(t, "name: s\nimplementations: [go-stdlib, java-spring]\nworkloads: [string, bank]\ninterleave: false\ntrials: 2\nload:\n  levels: [10]\n  duration: 1s\n")
	b := newFakeBench(t, p, steady)
	Sequential{}.Run(context.Background(), b)
	want := []string{"1 go-stdlib", "1 java-spring", "2 java-spring", "2 go-stdlib"}
	if fmt.Sprint(b.runs) != fmt.Sprint(want) {
		t.Errorf("starts %q, want %q", b.runs, want)
	}
	if got := len(b.rec.Services); got != 8 {
		t.Errorf("%d service records, want 2 trials x 2 implementations x 2 workloads", got)
	}
	if len(b.starts) != 0 || len(b.measured) != 0 {
		t.Errorf("a sequential run kept arms alive: %d starts, %d rounds", len(b.starts), len(b.measured))
	}
}

// TestSequentialInterrupted: an interrupt ends the run before the next
// start.
func TestSequentialInterrupted(t *testing.T) {
	p := testPlan(t, "name: s\nimplementations: [go-stdlib, java-spring]\nworkloads: [string]\ninterleave: false\ntrials: 3\nload:\n  levels: [10]\n  duration: 1s\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := newFakeBench(t, p, steady)
	Sequential{}.Run(ctx, b)
	if len(b.runs) != 0 {
		t.Errorf("starts %q after an interrupt, want none", b.runs)
	}
}

// TestFor: the plan's fields choose its design.
func TestFor(t *testing.T) {
	const base = "name: f\nworkloads: [string]\nload:\n  levels: [10]\n  duration: 1s\n"
	for _, tc := range []struct {
		name, plan string
		want       Design
		why        string
	}{
		// An objective asks for a capacity search, whatever else.
		{"slo", "implementations: [go-stdlib, java-spring]\nslo: {p99: 10ms}\n", Capacity{}, ""},
		// Two warm arms: interleaved rounds.
		{"two arms", "implementations: [go-stdlib, java-spring]\n", Rounds{}, ""},
		// Two arms the plan keeps apart: sequential, and why.
		{"interleave false", "implementations: [go-stdlib, java-spring]\ninterleave: false\n", Sequential{}, "the plan says interleave: false"},
		// A cold variant cannot be kept warm: sequential, and why.
		{"cold", "implementations: [go-stdlib, {service: java-spring, warmup: none}]\n", Sequential{}, "warmup: none"},
		// One arm: nothing to interleave, and nothing to explain.
		{"one arm", "implementations: [go-stdlib]\n", Sequential{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := For(testPlan(t, base+tc.plan))
			if got != tc.want {
				t.Errorf("For = %T, want %T", got, tc.want)
			}
			if tc.why == "" && why != "" || !strings.Contains(why, tc.why) {
				t.Errorf("why = %q, want %q", why, tc.why)
			}
		})
	}
}

func uniq(s []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}
