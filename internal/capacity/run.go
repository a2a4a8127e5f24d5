package capacity

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/measure"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/workloads"
)

// Run finds, for each arm and workload, the highest open-model
// arrival rate at which the plan's objective holds at steady state (or,
// with load.model: closed, the most closed-model users with the plan's
// think time: the same search over whole numbers of users). Each
// trial starts every arm afresh and keeps them all alive (frozen when not
// probed), as interleaved rounds do; on each workload every arm passes
// its contract check and warms up in turn, then the arms are searched
// together: in each step every arm whose search goes on gets its next
// probe, in a fresh random order, so the machine's drift moves every arm
// alike. A search brackets (doubling or halving from half a short
// closed-model probe's throughput, or from the warm-up's users) and
// bisects to the plan's resolution (Search); then, in every
// start, each arm's edge is held for confirm, stepping down
// until a rate holds (confirm). The capacity reported is what held: the
// mean and interval over starts of the held rates (Estimate),
// the search's estimate beside it. Past the plan's trials, up to
// trials_max and within a budget, a start is added while a held interval
// is too wide to use (results.Capacity.Unsettled).
func Run(ctx context.Context, b measure.Warm) {
	x := &runner{b: b, p: b.Plan(), rec: b.Record()}
	x.run(ctx)
}

// runner is one run of Run.
type runner struct {
	b   measure.Warm
	p   *plan.Plan
	rec *results.Run
	// added says, for each start run past the plan's trials, why: the
	// held intervals too wide to use when it began.
	added []string
}

// run searches every arm's capacity on every workload of the plan.
func (x *runner) run(ctx context.Context) {
	p, b := x.p, x.b
	arms := p.Arms()
	caps := map[string]*results.Capacity{}
	cpus := ServiceCPUs(p)
	floor := x.rec.Machine.HostFloor
	for _, w := range p.Workloads {
		for _, im := range arms {
			c := &results.Capacity{Workload: w.Name, Arm: im.ID(), Implementation: im.BaseID(), Cores: im.Cores, Objective: p.SLO.String(), CPUs: cpus, Unit: p.Capacity.Unit(),
				Floor: floor, AboveFloor: AboveFloor(*p.SLO, floor)}
			if c.AboveFloor {
				c.ResolvableMs = float64(Resolvable(floor)) / 1e6
			}
			if im.Cores > 0 {
				c.CPUs = float64(im.Cores) // an arm of the plan's cores: pinned to them, no quota
			}
			caps[capKey(w.Name, im.ID())] = c
			x.rec.Capacities = append(x.rec.Capacities, c)
		}
	}
	starts := fmt.Sprintf("%d starts", p.MinStarts())
	if p.MaxStarts() > p.MinStarts() {
		starts += fmt.Sprintf(" (up to %d while a held interval is too wide)", p.MaxStarts())
	}
	b.Say("capacity at %s: %s, resolution %v, each probe %s, each start's edge held %v", p.SLO.String(), starts, p.Capacity.Resolution, ProbeRule(p), time.Duration(p.Capacity.Confirm))
	if len(x.rec.Capacities) > 0 {
		if w := wording.FloorWarning(x.rec.Capacities[0]); w != "" {
			b.Warn("%s", w)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(p.Database.Seed)))
	var deadline time.Time
	if d := time.Duration(p.Rounds.Budget); d > 0 {
		deadline = time.Now().Add(d)
	}
	var longest time.Duration
	for trial := 1; trial <= p.MaxStarts() && ctx.Err() == nil; trial++ {
		if trial > p.MinStarts() && !x.another(trial, deadline, longest) {
			break
		}
		began := time.Now()
		x.capacityStart(ctx, trial, arms, caps, rng)
		longest = max(longest, time.Since(began))
		x.judgeCapacities()
		b.Save()
	}
	x.judgeCapacities()
	for _, c := range x.rec.Capacities {
		b.Say("CAPACITY %s on %s at %s: %s", c.Arm, c.Workload, c.Objective, wording.Capacity(c))
		if a := wording.Answer(c); a != "" {
			b.Say("  answer: %s", a)
		}
		if c.Failed > 0 {
			b.Say("  failed at %s %s: %s", wording.Amount(c.Failed, c.Units()), c.Units(), c.FailedWhy)
		}
		if w := wording.FloorWarning(c); w != "" {
			b.Say("  %s", w)
		}
	}
	for _, v := range x.rec.CapacityVerdicts {
		for _, line := range wording.CapacityVerdict(v) {
			b.Say("%s", line)
		}
	}
	if p.Sizing != nil {
		b.Say("SIZING for %s:", p.Sizing.String())
		for _, c := range x.rec.Capacities {
			sz := results.SizeFor(c, *p.Sizing)
			b.Say("  %s", wording.SizeLine(c, sz))
		}
	}
}

func capKey(workload, arm string) string { return workload + "/" + arm }

// judgeCapacities estimates every capacity from its brackets (and what
// its starts held) and ranks each workload's arms.
func (x *runner) judgeCapacities() {
	p := x.p
	x.rec.CapacityVerdicts = nil
	for _, w := range p.Workloads {
		var caps []*results.Capacity
		for _, c := range x.rec.Capacities {
			if c.Workload == w.Name {
				Estimate(c)
				caps = append(caps, c)
			}
		}
		v := Judge(w.Name, p.SLO.String(), caps)
		v.AddedStarts, v.Added = len(x.added), x.added
		x.rec.CapacityVerdicts = append(x.rec.CapacityVerdicts, v)
	}
}

// another decides whether start trial, past the plan's trials, is run:
// while some capacity's held interval is too wide to use
// (results.Capacity.Unsettled), as interleaved rounds add starts while
// a pair is not precise, within trials_max and, with a budget, when the
// longest start so far still fits in what is left of it.
func (x *runner) another(trial int, deadline time.Time, longest time.Duration) bool {
	var wide []string
	for _, c := range x.rec.Capacities {
		if c.Unsettled() {
			wide = append(wide, fmt.Sprintf("%s on %s: %s", c.Arm, c.Workload, wording.Unsettled(c)))
		}
	}
	if len(wide) == 0 {
		return false
	}
	if left := time.Until(deadline); !deadline.IsZero() && left < longest {
		x.b.Say("no start %d: %v of the budget left, and a start takes about %v", trial, left.Round(time.Second), longest.Round(time.Second))
		return false
	}
	why := fmt.Sprintf("start %d, as %s", trial, strings.Join(wide, "; "))
	x.added = append(x.added, why)
	x.b.Say("capacity: %s", why)
	x.b.Progress().AddTrial()
	return true
}

// capacityStart is one trial of a capacity plan: every arm started, each
// workload prepared on every arm, then searched.
func (x *runner) capacityStart(ctx context.Context, trial int, arms []plan.Implementation, caps map[string]*results.Capacity, rng *rand.Rand) {
	p, b := x.p, x.b
	var lives []measure.Arm
	defer func() { measure.Down(lives) }()
	if what, err := b.BeforeStart(ctx, p.Workloads); err != nil {
		b.Warn("trial %d not measured: %s: %v", trial, what, err)
		return
	}
	lives = b.StartFrozen(ctx, trial, arms, rng)
	for wi, w := range p.Workloads {
		ready := b.PrepareFrozen(ctx, lives, wi, w, trial, rng)
		// The progress counts each arm's search on a workload as one
		// level (a capacity plan has one), done when the workload is.
		if len(ready) > 0 && ctx.Err() == nil {
			if err := b.ResetForRounds(ctx, w, ready); err != nil {
				b.Warn("%s, start %d: no capacity search: %v", w.Name, trial, err)
			} else {
				x.searchCapacity(ctx, trial, w, ready, caps, rng)
				x.confirm(ctx, trial, w, ready, caps, rng)
				x.auditAfterSearch(ctx, trial, w, ready, caps)
			}
		}
		b.Progress().Skip(len(arms))
	}
	measure.Finish(ctx, lives)
}

// armSearch is one arm's search in one start.
type armSearch struct {
	l measure.Arm
	c *results.Capacity
	s *Search
	// disturbed counts the probes measured again because the machine
	// disturbed them, why says how each was.
	disturbed int
	why       []string
}

// searchCapacity searches every arm of ls on w in steps: each step, every
// arm whose search goes on gets one probe, in a fresh random order, the
// others frozen (a generator-limited probe is repeated once). Each search
// is bounded by max_probes steps.
func (x *runner) searchCapacity(ctx context.Context, trial int, w plan.Workload, ls []measure.Arm, caps map[string]*results.Capacity, rng *rand.Rand) {
	p, b := x.p, x.b
	var as []*armSearch
	for _, l := range ls {
		c := caps[capKey(w.Name, l.ID())]
		c.StepsPerArrival = l.Steps(w.Name)
		rate, growth, err := x.startRate(ctx, l, w, c)
		if err != nil {
			c.Warnings = append(c.Warnings, fmt.Sprintf("start %d: no search: %v", trial, err))
			b.Warn("%s on %s, start %d: no capacity search: %v", l.ID(), w.Name, trial, err)
			continue
		}
		as = append(as, &armSearch{l: l, c: c, s: NewSearch(ScaleOf(c.Units()), rate, float64(p.Capacity.Resolution), growth, p.Capacity.MaxProbes)})
	}
	for step := 1; ctx.Err() == nil; step++ {
		var todo []*armSearch
		for _, a := range as {
			if !a.s.Done() && !a.l.Exited() {
				todo = append(todo, a)
			}
		}
		if len(todo) == 0 {
			break
		}
		for _, i := range rng.Perm(len(todo)) {
			a := todo[i]
			rate := a.s.Next()
			pr, short := x.probe(ctx, a.l, w, rate, trial, 0)
			// A probe the machine disturbed (its own record says so) is
			// kept for the curve and measured again before it counts.
			for why := Disturbed(pr); why != "" && a.disturbed < MaxDisturbedRepeats && ctx.Err() == nil; why = Disturbed(pr) {
				a.disturbed++
				pr.Disturbed = why
				a.why = append(a.why, why)
				a.c.Probes = append(a.c.Probes, pr)
				b.Say("%s on %s, start %d, step %d: %s; disturbed (%s), measured again", a.l.ID(), w.Name, trial, step, wording.Probe(pr, a.c.Units()), why)
				pr, short = x.probe(ctx, a.l, w, rate, trial, 0)
			}
			if RepeatProbe(pr) && ctx.Err() == nil {
				// Only the repeat counts; both are kept for the curve.
				a.c.Probes = append(a.c.Probes, pr)
				b.Say("%s on %s, start %d, step %d: %s; repeated", a.l.ID(), w.Name, trial, step, wording.Probe(pr, a.c.Units()))
				pr, short = x.probe(ctx, a.l, w, rate, trial, 0)
			}
			if ctx.Err() != nil {
				break
			}
			need := plan.SamplesBeyondQuantile / (1 - p.SLO.Highest())
			switch {
			case short:
				a.c.Warnings = append(a.c.Warnings, fmt.Sprintf("start %d: the probe at %s %s counted %d samples, fewer than the %.0f its p%g needs: probe_max cut it", trial, wording.Amount(rate, a.c.Units()), a.c.Units(), pr.Samples, need, 100*p.SLO.Highest()))
			case pr.Pass && float64(pr.Samples) < math.Round(need):
				// A closed-model probe's length is from the rate it was
				// expected to send (ExpectedRate); one that passed on
				// fewer samples says so.
				a.c.Warnings = append(a.c.Warnings, fmt.Sprintf("start %d: the probe at %s %s passed on %d samples, fewer than the %.0f its p%g needs", trial, wording.Amount(rate, a.c.Units()), a.c.Units(), pr.Samples, need, 100*p.SLO.Highest()))
			}
			// The search may find this probe's lateness, or an earlier
			// one's, the host's (a lower rate as late): it judges them
			// again by the objective alone.
			a.s.RecordProbe(&pr)
			a.c.Probes = append(a.c.Probes, pr)
			for _, r := range a.s.Rejudged() {
				rejudge(a.c, trial, r)
			}
			b.Say("%s on %s, start %d, step %d: %s", a.l.ID(), w.Name, trial, step, wording.Probe(pr, a.c.Units()))
		}
	}
	for _, a := range as {
		if n := a.s.HostLate(); n > 0 {
			a.c.Warnings = append(a.c.Warnings, fmt.Sprintf("start %d: %d late probes were late through the host, not the generator (a lower rate as late, or a higher rate passed); they counted by the objective alone", trial, n))
		}
		if a.disturbed > 0 {
			a.c.Warnings = append(a.c.Warnings, fmt.Sprintf("start %d: %d probes measured again, the machine having disturbed them: %s", trial, a.disturbed, strings.Join(a.why, "; ")))
		}
		if a.l.Exited() {
			a.c.Warnings = append(a.c.Warnings, fmt.Sprintf("start %d: the service exited during its search; its probes so far are kept, its bracket left out", trial))
			continue
		}
		if a.s.Probes() > 0 && ctx.Err() == nil {
			a.c.Brackets = append(a.c.Brackets, a.s.Bracket(trial))
		}
	}
}

// rejudge applies the search's new judgement r of an earlier probe of
// trial to its record in c: the last counted probe at that rate.
func rejudge(c *results.Capacity, trial int, r results.Probe) {
	for i := len(c.Probes) - 1; i >= 0; i-- {
		if pr := &c.Probes[i]; pr.Start == trial && pr.Rate == r.Rate && pr.Late {
			pr.GeneratorLimited, pr.Late, pr.Pass, pr.Why = false, false, r.Pass, r.Why
			return
		}
	}
}

// startRate is where l's search starts on w, and the factor it brackets
// by: the plan's start_rate; else, in a later start, the previous starts'
// lowest passing rate (bracketing by RefineGrowth); else half the
// throughput of a StartProbe closed-model probe at the warm-up's users;
// a search of users starts at the warm-up's users.
func (x *runner) startRate(ctx context.Context, l measure.Arm, w plan.Workload, c *results.Capacity) (float64, float64, error) {
	p := x.p
	if p.Capacity.StartRate > 0 {
		return p.Capacity.StartRate, BracketGrowth, nil
	}
	prev := 0.0
	for _, b := range c.Brackets {
		if b.Pass > 0 && (prev == 0 || b.Pass < prev) {
			prev = b.Pass
		}
	}
	if prev > 0 {
		return prev, RefineGrowth, nil
	}
	users := plan.DefaultCapacityWarmupUsers
	if p.Load.Model == "closed" && len(p.Load.Levels) > 0 {
		users = p.Load.Levels[0]
	}
	if p.Capacity.Model == "closed" {
		return float64(users), BracketGrowth, nil
	}
	l.Thaw()
	defer l.Freeze()
	res, err := x.b.Attacker(nil).Attack(ctx, load.StatusChecked(l.Scenario(w.Name)), load.ClosedModel{Users: users, Duration: StartProbe, ThinkTime: time.Duration(p.Load.ThinkTime)})
	if err != nil {
		return 0, 0, fmt.Errorf("start-rate probe: %w", err)
	}
	row, _ := res.Row("")
	if row.Throughput <= 0 {
		return 0, 0, fmt.Errorf("start-rate probe: no request completed in %v at %d users (%s)", StartProbe, users, row.ErrorReasons())
	}
	return row.Throughput / 2, BracketGrowth, nil
}

// probe runs l at rate in the open model (or rate users in the closed
// model): the plan's settle uncounted, then as long as the objective's
// highest percentile needs (plan.CapacitySettings.ProbeSeconds, at
// ExpectedRate), and judges it (JudgeProbe). short reports a probe
// probe_max cut below its rule.
func (x *runner) probe(ctx context.Context, l measure.Arm, w plan.Workload, rate float64, trial int, hold time.Duration) (pr results.Probe, short bool) {
	p, pg := x.p, x.b.Progress()
	d, short := p.Capacity.ProbeSeconds(ExpectedRate(p, rate), p.SLO.Highest())
	if hold > 0 {
		d, short = max(d, hold), false
	}
	pr = results.Probe{Start: trial, Rate: rate}
	l.Thaw()
	defer l.Freeze()
	pg.Phase(fmt.Sprintf("probe at %s %s", wording.Amount(rate, p.Capacity.Unit()), p.Capacity.Unit()), time.Duration(p.Rounds.Settle)+d)
	a := x.b.Attacker(pg.OnProgress, load.WithWarmup(load.WarmupPhase{Duration: time.Duration(p.Rounds.Settle)}), load.MaxInflight(p.Capacity.Connections))
	m, err := l.Measure(ctx, w, a, load.StatusChecked(l.Scenario(w.Name)), ProbeLoad(p, rate, l.Steps(w.Name), d))
	pr.At = m.At
	if err != nil {
		pr.Why = "load failed: " + err.Error()
		return pr, short
	}
	if m.Sampled {
		pr.ServiceCPU, pr.RSSBytes = m.ServiceCPU, m.RSSBytes
	}
	pr.StealPercent, pr.OtherServiceCPU = m.StealPercent, m.OtherServiceCPU
	res := m.Result
	s := res.Summary
	row, _ := res.Row("")
	pr.Seconds, pr.Achieved, pr.Samples = s.DurationSeconds, row.Throughput, row.Samples
	if n := row.Samples + s.Dropped; n > 0 {
		pr.Dropped = s.Dropped
		pr.ErrorRate = float64(row.Errors+DroppedFailed(s.Dropped, s.TargetRate, p.SLO.Tightest())) / float64(n)
	}
	pr.P50Ms, pr.P99Ms, pr.P999Ms = row.Latency.P50, row.Latency.P99, row.Latency.P999
	pr.LatenessP99Ms = s.Lateness.P99
	if cpus := max(s.CPUs, 1); s.DurationSeconds > 0 {
		pr.GeneratorCPU = 100 * s.BusyCPUSeconds() / s.DurationSeconds / float64(cpus)
	}
	lat, svc := res.Latency(""), res.Service("")
	JudgeProbe(&pr, *p.SLO, x.rec.Machine.HostFloor, func(q float64) float64 {
		if lat == nil || lat.TotalCount() == 0 {
			return 0
		}
		return float64(lat.ValueAtQuantile(q)) / 1e6
	}, func(q float64) float64 {
		if svc == nil || svc.TotalCount() == 0 {
			return 0
		}
		return float64(svc.ValueAtQuantile(q)) / 1e6
	})
	return pr, short
}

// auditAfterSearch audits w's database after the start's searches (as
// after rounds): a failed invariant is a warning of every capacity of w.
func (x *runner) auditAfterSearch(ctx context.Context, trial int, w plan.Workload, ls []measure.Arm, caps map[string]*results.Capacity) {
	if workloads.Database(w.Name) == workloads.NoDatabase || ctx.Err() != nil {
		return
	}
	violations, msgs := measure.AuditAfter(ctx, x.b, w, trial, "the capacity search")
	for _, l := range ls {
		c := caps[capKey(w.Name, l.ID())]
		c.Warnings = append(c.Warnings, msgs...)
		c.Violations = append(c.Violations, violations...)
	}
}

// confirm holds each arm's edge in this start for the plan's
// confirm: from the start's own bracket's passing rate, then
// stepping back (ConfirmRates) until one rate holds in
// ConfirmHolds runs in a row, the arms in a random order; then,
// when a higher rate failed, bisecting between the two
// (Refine, at most ConfirmRefine rates) with runs as
// long, so the search's last steps are as long as the runs that
// confirm them. The highest rate that held is the start's
// (results.Bracket.Held), which the capacity reported is made of
// (Estimate), with the runs that did not; a run the machine
// disturbed is measured again once.
func (x *runner) confirm(ctx context.Context, trial int, w plan.Workload, ls []measure.Arm, caps map[string]*results.Capacity, rng *rand.Rand) {
	p := x.p
	hold := time.Duration(p.Capacity.Confirm)
	res := float64(p.Capacity.Resolution)
	for _, i := range rng.Perm(len(ls)) {
		l := ls[i]
		c := caps[capKey(w.Name, l.ID())]
		var br *results.Bracket
		for j := range c.Brackets {
			if c.Brackets[j].Start == trial {
				br = &c.Brackets[j]
			}
		}
		if br == nil || br.Pass <= 0 || ctx.Err() != nil || l.Exited() {
			continue
		}
		br.Confirmed = true
		failed := 0.0
		for _, rate := range ConfirmRates(br.Pass, c.Units(), res) {
			if ctx.Err() != nil || l.Exited() {
				br.Confirmed = false // cut short: says nothing of what holds
				break
			}
			if secs, ok := x.holds(ctx, trial, w, l, c, rate, hold); ok {
				br.Held, br.HeldSeconds, br.HeldRuns = rate, secs, ConfirmHolds
				break
			}
			failed = rate
		}
		for n := 0; n < ConfirmRefine && br.Held > 0 && failed > 0 && ctx.Err() == nil && !l.Exited(); n++ {
			rate, ok := Refine(br.Held, failed, c.Units(), res)
			if !ok {
				break
			}
			if secs, ok := x.holds(ctx, trial, w, l, c, rate, hold); ok {
				br.Held, br.HeldSeconds = rate, secs
			} else if ctx.Err() == nil {
				failed = rate
			}
		}
		if br.Held > 0 {
			br.HeldFailed = failed
		}
		if ctx.Err() != nil && br.Held == 0 {
			br.Confirmed = false
		}
	}
}

// holds runs l at rate for hold, ConfirmHolds times in a row
// or until one run misses the objective, recording each run among c's
// confirmations; it reports whether every run met it, and the last
// run's length. A run the machine disturbed is measured again once.
// One pass over 30 s near the knee can be luck.
func (x *runner) holds(ctx context.Context, trial int, w plan.Workload, l measure.Arm, c *results.Capacity, rate float64, hold time.Duration) (float64, bool) {
	held := 0
	var pr results.Probe
	for held < ConfirmHolds && ctx.Err() == nil && !l.Exited() {
		pr, _ = x.probe(ctx, l, w, rate, trial, hold)
		if why := Disturbed(pr); why != "" && ctx.Err() == nil {
			pr.Disturbed = why
			c.Confirmations = append(c.Confirmations, pr)
			pr, _ = x.probe(ctx, l, w, rate, trial, hold)
		}
		c.Confirmations = append(c.Confirmations, pr)
		x.b.Say("%s on %s, start %d: confirmation %d/%d for %v at %s: %s", l.ID(), w.Name, trial, held+1, ConfirmHolds, hold, wording.Amount(rate, c.Units()), wording.Probe(pr, c.Units()))
		if !pr.Pass {
			return pr.Seconds, false
		}
		held++
	}
	return pr.Seconds, held == ConfirmHolds
}
