package lab

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/workloads"
)

// SettleFloor is the share of a round's throughput that the uncounted
// second after a thaw must reach; below it the thaw is reported as
// misbehaving and the round left out of the verdict.
const SettleFloor = 0.5

// runInterleaved measures the plan's arms in interleaved rounds. Each
// trial starts every arm afresh, in a random order, and keeps them all
// alive; an arm not being measured is frozen. On each workload every arm
// passes its contract check and warms up in turn; on each level every arm
// is measured once as a sequential run measures it (its files, resources
// and audit), then all of them in rounds: each round every arm once, for
// the plan's round, in a random order that the next round reverses
// (roundOrder). Rounds go on until each
// adjacent pair is precise within the start, or the start's share of
// measure_max is spent; starts go on past the plan's trials, up to
// trials_max, while a pair is not precise overall.
func (x *execution) runInterleaved(ctx context.Context) {
	p := x.plan
	arms := p.Arms()
	var ids []string
	for _, im := range arms {
		ids = append(ids, im.ID())
	}
	comps := map[string]*results.Comparison{}
	for _, w := range p.Workloads {
		for _, lv := range p.Load.Levels {
			c := &results.Comparison{Workload: w.Name, Level: lv, Model: p.Load.Model, Arms: ids,
				RoundSeconds: time.Duration(p.Rounds.Round).Seconds(), SettleSeconds: time.Duration(p.Rounds.Settle).Seconds(),
				Precision: float64(p.Rounds.Precision)}
			comps[compKey(w.Name, lv)] = c
			x.rec.Comparisons = append(x.rec.Comparisons, c)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(p.Database.Seed)))
	total := time.Duration(p.Rounds.MeasureMax)
	var used time.Duration
	minStarts, maxStarts := p.MinStarts(), p.MaxStarts()
	for trial := 1; trial <= maxStarts && ctx.Err() == nil; trial++ {
		if trial > minStarts {
			if x.allPrecise() || used >= total {
				break
			}
			x.progress.addTrial()
		}
		budget := total / time.Duration(minStarts)
		if trial > minStarts {
			budget = total - used
		}
		used += x.interleavedStart(ctx, trial, arms, comps, budget, rng)
		for _, c := range x.rec.Comparisons {
			c.Verdict = judge(c, p)
		}
		_ = results.WriteRun(x.dir, x.rec)
	}
	for _, c := range x.rec.Comparisons {
		c.Verdict = judge(c, p)
		for _, line := range c.VerdictLines() {
			x.say("%s", line)
		}
	}
}

func compKey(workload string, level int) string { return fmt.Sprintf("%s/%d", workload, level) }

// allPrecise reports whether every comparison's adjacent pairs are within
// the plan's precision.
func (x *execution) allPrecise() bool {
	for _, c := range x.rec.Comparisons {
		if v := judge(c, x.plan); v == nil || len(v.Unresolved) > 0 {
			return false
		}
	}
	return true
}

// interleavedStart is one trial of an interleaved plan; it returns the
// time its rounds took.
func (x *execution) interleavedStart(ctx context.Context, trial int, arms []plan.Implementation, comps map[string]*results.Comparison, budget time.Duration, rng *rand.Rand) time.Duration {
	p := x.plan
	began := time.Now()
	var lives []*live
	defer func() {
		for _, l := range lives {
			l.down()
		}
	}()
	// The database's restart (restart: trial) happens once, before any
	// arm starts: the arms alive together share its servers.
	if what, err := x.beforeStart(ctx, p.Workloads); err != nil {
		x.warn("trial %d not measured: %s: %v", trial, what, err)
		return 0
	}
	lives = x.startFrozen(ctx, trial, arms, rng)
	var spent time.Duration
	for wi, w := range p.Workloads {
		ready := x.prepareFrozen(ctx, lives, wi, w, trial, rng)
		for li, lv := range p.Load.Levels {
			// Each arm's level, measured alone as a sequential run would.
			for _, i := range rng.Perm(len(ready)) {
				l := ready[i]
				sr := l.srs[wi]
				if ctx.Err() != nil || sr.Status != results.OK {
					continue
				}
				l.thaw()
				if l.alive(ctx, sr) {
					x.progress.service(sr.Name(), w.Name, trial)
					if reason := x.levelOf(ctx, l.svc, l.settled[w.Name], w, sr.Levels[li]); reason != "" {
						l.fail(ctx, sr, "%s", reason)
					}
				}
				l.freeze()
			}
			var in []*live
			for _, l := range ready {
				if l.srs[wi].Status == results.OK {
					in = append(in, l)
				}
			}
			if len(in) < 2 || ctx.Err() != nil {
				continue
			}
			if err := x.resetForRounds(ctx, w, in); err != nil {
				x.warn("%s at %d: no rounds: %v", w.Name, lv, err)
				continue
			}
			startCost := time.Since(began) - spent
			spent += x.rounds(ctx, comps[compKey(w.Name, lv)], in, w, lv, trial, budget/time.Duration(len(p.Workloads)*len(p.Load.Levels)), startCost, rng)
		}
	}
	for _, l := range lives {
		l.thaw()
		for _, sr := range l.srs {
			if sr.Status == results.OK {
				l.after(ctx, sr)
			}
		}
		l.interrupted(ctx)
		l.down()
	}
	return spent
}

// startFrozen starts each arm afresh for trial, in a random order, and
// freezes it once healthy, so the next one starts alone; it returns the
// arms that came up (every arm's records are in the run either way).
func (x *execution) startFrozen(ctx context.Context, trial int, arms []plan.Implementation, rng *rand.Rand) []*live {
	var lives []*live
	for _, i := range rng.Perm(len(arms)) {
		if ctx.Err() != nil {
			break
		}
		l := x.bringUp(ctx, start{Implementation: arms[i], Workloads: x.plan.Workloads, Trial: trial}, false)
		x.rec.Services = append(x.rec.Services, l.srs...)
		if l.svc == nil {
			continue
		}
		lives = append(lives, l)
		idle := rssOf(l.svc.PID())
		for _, sr := range l.srs {
			sr.StartupSeconds, sr.RSSIdleBytes = l.svc.Startup.Seconds(), idle
		}
		l.freeze()
	}
	return lives
}

// prepareFrozen thaws each live arm in turn, in a random order, readies
// it for workload w (number wi of the plan's: contract check, scenario,
// warm-up) and freezes it again; it returns the arms that are ready.
func (x *execution) prepareFrozen(ctx context.Context, lives []*live, wi int, w plan.Workload, trial int, rng *rand.Rand) []*live {
	var ready []*live
	for _, i := range rng.Perm(len(lives)) {
		l := lives[i]
		sr := l.srs[wi]
		if ctx.Err() != nil || sr.Status != results.OK {
			continue
		}
		l.thaw()
		if !l.alive(ctx, sr) {
			continue
		}
		x.progress.service(sr.Name(), w.Name, trial)
		sc, reason := x.prepareWorkload(ctx, l.svc, l.im, w, sr, wi == 0)
		if reason != "" {
			l.fail(ctx, sr, "%s", reason)
		} else {
			l.settled[w.Name] = sc
			ready = append(ready, l)
		}
		l.freeze()
	}
	return ready
}

// resetForRounds empties the workload's data before the rounds, as the
// plan's reset says (unless never), and runs each arm's scenario setup
// again: every arm starts its rounds from the same data. Between rounds
// nothing is reset: what the rounds write grows under every arm alike,
// as they take turns.
func (x *execution) resetForRounds(ctx context.Context, w plan.Workload, ls []*live) error {
	if x.plan.Database.Reset == "never" || workloads.Database(w.Name) == workloads.NoDatabase {
		return nil
	}
	if err := x.dbs.Reset(ctx, w.Name); err != nil {
		return fmt.Errorf("reset database: %w", err)
	}
	for _, l := range ls {
		sc := l.settled[w.Name]
		if !sc.HasSetup() {
			continue
		}
		l.thaw()
		err := setup(ctx, sc)
		l.freeze()
		if err != nil {
			return fmt.Errorf("%s: scenario setup: %w", l.im.ID(), err)
		}
	}
	return nil
}

// rounds measures ls in rounds at level until each adjacent pair is
// precise within this start (half the plan's precision), or this start
// has the rounds the cheapest plan asks of it (roundsWanted), or budget
// is spent, after at least plan.MinRounds and, but for the budget, after
// a complete mirrored pair of rounds; it returns the time taken.
// startCost is what this start cost before its rounds (starting and
// warming every arm), the price of the next start in that plan. The
// database's invariants are audited after the last round.
func (x *execution) rounds(ctx context.Context, c *results.Comparison, ls []*live, w plan.Workload, level, trial int, budget, startCost time.Duration, rng *rand.Rand) time.Duration {
	began := time.Now()
	var order []int
	for r := 1; ctx.Err() == nil; r++ {
		if r > plan.MinRounds {
			roundCost := time.Since(began) / time.Duration(r-1)
			// Precision and the plan stop a start only after a complete
			// mirrored pair (r-1 rounds done, r-1 even); the budget at once.
			pairDone := r%2 == 1
			if time.Since(began) >= budget || pairDone && (startPrecise(c, trial, c.Precision/2) || r > roundsWanted(c, x.plan, startCost, roundCost)) {
				break
			}
		}
		round := results.Round{Start: trial, Index: r}
		order = roundOrder(order, len(ls), r, rng)
		for _, i := range order {
			l := ls[i]
			select {
			case <-l.svc.Exited():
				continue
			default:
			}
			ar := x.armRound(ctx, l, w, level)
			if ar.Misbehaved != "" {
				c.Warnings = append(c.Warnings, fmt.Sprintf("start %d, round %d: %s %s; the round is left out of the verdict", trial, r, ar.Arm, ar.Misbehaved))
			}
			round.Arms = append(round.Arms, ar)
		}
		if ctx.Err() != nil {
			break
		}
		c.Rounds = append(c.Rounds, round)
		x.say("%s at %d, start %d, round %d: %s", w.Name, level, trial, r, describeRound(round, c.Model))
	}
	if workloads.Database(w.Name) != workloads.NoDatabase {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AuditTimeout)
		vs, err := x.dbs.Audit(actx, w.Name, -1, -1)
		cancel()
		if err != nil {
			c.Warnings = append(c.Warnings, fmt.Sprintf("start %d: audit after the rounds: %v", trial, err))
		}
		for _, v := range vs {
			c.Violations = append(c.Violations, results.Violation{Check: v.Check, Detail: fmt.Sprintf("after the rounds of start %d: %s", trial, v.Detail)})
			c.Warnings = append(c.Warnings, fmt.Sprintf("start %d: INVARIANT FAILED after the rounds: %s: %s", trial, v.Check, v.Detail))
			x.say("INVARIANT FAILED: %s after the rounds of start %d: %s: %s", w.Name, trial, v.Check, v.Detail)
		}
	}
	return time.Since(began)
}

// roundOrder is the order of round r (1 for the first) of n arms, given
// the last round's: a fresh random order in odd rounds, the reverse of
// the last in even ones. Each pair of rounds then measures every arm
// twice, symmetrically about the pair's middle, so a machine whose speed
// drifts linearly (a neighbour ramping up or down) costs each arm the
// same within the pair, where two random orders would have favoured one
// arm by chance. The first order of each pair stays random (Abedi and
// Brecht's randomized interleaving); the mirror is the ABBA design of
// crossover trials.
func roundOrder(last []int, n, r int, rng *rand.Rand) []int {
	if r%2 == 0 && len(last) == n {
		rev := make([]int, n)
		for i, v := range last {
			rev[n-1-i] = v
		}
		return rev
	}
	return rng.Perm(n)
}

// armRound thaws l, loads it for the plan's settle (not counted) and its
// round, stops the load (every request answered) and freezes it again.
func (x *execution) armRound(ctx context.Context, l *live, w plan.Workload, level int) results.ArmRound {
	p := x.plan
	sc := load.StatusChecked(l.settled[w.Name])
	ar := results.ArmRound{Arm: l.im.ID()}
	model := func(d time.Duration) load.Model {
		if p.Load.Model == "open" {
			return load.OpenModel{Rate: float64(level), Duration: d}
		}
		return load.ClosedModel{Users: level, Duration: d, ThinkTime: time.Duration(p.Load.ThinkTime)}
	}
	l.thaw()
	defer l.freeze()
	if d := time.Duration(p.Rounds.Settle); d > 0 {
		res, err := x.attacker(nil).Attack(ctx, sc, model(d))
		if err != nil {
			ar.Misbehaved = "did not settle after its thaw: " + err.Error()
			return ar
		}
		row, _ := res.Row("")
		ar.SettleThroughput, ar.SettleErrors = row.Throughput, row.Errors
	}
	smp := monitor.NewSampler(l.svc.PID())
	_, _ = smp.Sample(ctx)
	ar.At = time.Now().UTC()
	res, err := x.attacker(nil).Attack(ctx, sc, model(time.Duration(p.Rounds.Round)))
	after, serr := smp.Sample(ctx)
	if err != nil {
		ar.Misbehaved = "load failed: " + err.Error()
		return ar
	}
	row, _ := res.Row("")
	s := res.Summary
	ar.Seconds, ar.Throughput, ar.Samples, ar.Errors = s.DurationSeconds, row.Throughput, row.Samples, row.Errors
	ar.P50Ms, ar.P99Ms = row.Latency.P50, row.Latency.P99
	if serr == nil {
		ar.ServiceCPU = after.CPUPercent
	}
	if cpus := max(s.CPUs, 1); s.DurationSeconds > 0 {
		ar.GeneratorCPU = 100 * s.BusyCPUSeconds() / s.DurationSeconds / float64(cpus)
	}
	switch {
	case ar.SettleErrors > 0:
		ar.Misbehaved = fmt.Sprintf("answered %d errors in the second after its thaw", ar.SettleErrors)
	case p.Load.Model != "open" && ar.SettleThroughput < SettleFloor*ar.Throughput:
		ar.Misbehaved = fmt.Sprintf("served %.0f%% of its round's rate in the second after its thaw", 100*ar.SettleThroughput/ar.Throughput)
	}
	return ar
}

// describeRound is one progress line of a round: each arm's figure in
// the order measured.
func describeRound(r results.Round, model string) string {
	var parts []string
	for _, a := range r.Arms {
		v := fmt.Sprintf("%s %.0f/s", a.Arm, a.Throughput)
		if model == "open" {
			v = fmt.Sprintf("%s p99 %.2f ms", a.Arm, a.P99Ms)
		}
		if a.Misbehaved != "" {
			v += " (misbehaved)"
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, ", ")
}

// roundsWanted is how many rounds a start should have, by the cheapest
// plan (stats.RoundRatio.Plan) that would bring every adjacent pair
// within the plan's precision, given the variances the rounds so far
// show and what a start and a round cost here: rounds are cheap but
// only starts narrow t and average the starts' own differences, so a
// start whose rounds are noisy stops after the share of rounds the plan
// gives it, and the next start begins. A pair no plan within trials_max
// can resolve asks for no rounds beyond the minimum; without a verdict
// yet it is unbounded (the budget and precision decide).
func roundsWanted(c *results.Comparison, p *plan.Plan, startCost, roundCost time.Duration) int {
	v := judge(c, p)
	if v == nil || len(v.Pairs) == 0 {
		return math.MaxInt
	}
	want := plan.MinRounds
	for _, pr := range v.Pairs {
		rr := stats.RoundRatio{BetweenSD: pr.BetweenSD, WithinSD: pr.WithinSD}
		if _, n, ok := rr.Plan(c.Precision, startCost.Seconds(), roundCost.Seconds(), plan.MinRounds, p.MaxStarts()); ok {
			want = max(want, n)
		}
	}
	return want
}

// startPrecise reports whether, on start's rounds alone, every adjacent
// pair's interval is within ±halfWidth.
func startPrecise(c *results.Comparison, start int, halfWidth float64) bool {
	one := *c
	one.Rounds = nil
	for _, r := range c.Rounds {
		if r.Start == start {
			one.Rounds = append(one.Rounds, r)
		}
	}
	v := judgeWith(&one, halfWidth, "")
	if v == nil || len(v.Pairs) == 0 {
		return false
	}
	for _, pr := range v.Pairs {
		if !(pr.HalfWidth <= halfWidth) {
			return false
		}
	}
	return true
}
