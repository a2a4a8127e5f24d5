// Package rounds is the way of measuring that compares warm services in
// interleaved rounds: its runner (Run: fresh starts, each arm started,
// checked and warmed once and kept alive, frozen when not measured, then
// measured one at a time in rounds whose order the next round mirrors,
// at the plan's level and at one rate) and its judgement (Judge: the
// ranking with an interval on every adjacent ratio, how many rounds and
// starts a comparison still wants, the rounds the machine disturbed,
// CPU per request and p99 at one rate, and a change's slowdown). A
// question about how a pair is judged, or when rounds stop, is answered
// here.
package rounds

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/showdownlab/showdown/internal/cpulist"
	"github.com/showdownlab/showdown/internal/measure"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/workloads"
)

// SettleFloor is the share of a round's throughput that the uncounted
// second after a thaw must reach; below it the thaw is reported as
// misbehaving and the round left out of the verdict.
const SettleFloor = 0.5

// runner is one run of Run.
type runner struct {
	b measure.Warm
	p *plan.Plan
	// deadline is when the plan's budget ends (zero: no budget); starts
	// is how long each complete start took, setup is what each start
	// cost before its first rounds, and roundCost what one round took.
	deadline  time.Time
	starts    []time.Duration
	setup     time.Duration
	roundCost time.Duration
	// setups is each complete start's time outside its rounds (starting,
	// checking and warming every arm), and warned whether the run has
	// said that the plan's starts outgrow its budget.
	setups []time.Duration
	warned bool
	// rates are each workload's comparisons at one rate (the plan's
	// at_rate), the automatic one made once the first start's rounds
	// have measured the slowest arm.
	rates map[string][]*results.Comparison
}

// Run measures the plan's arms in interleaved rounds. Each
// trial starts every arm afresh, in a random order, and keeps them all
// alive; an arm not being measured is frozen. On each workload every arm
// passes its contract check and warms up in turn; on each level every arm
// is measured once as a sequential run measures it (its files, resources
// and audit), then all of them in rounds: each round every arm once, for
// the plan's round, in a random order that the next round reverses
// (RoundOrder). Rounds go on until each adjacent pair is precise within
// the start, or another round would pass the start's share of
// measure_max (noRoundFits); starts go on past the plan's trials, up to
// trials_max, while a pair is not precise overall. With a budget, each
// start's rounds take what the starts still owed leave of it
// (roundsBudget), another start begins only when it fits, and the
// verdict says what the budget bought (Bought). A round whose record
// shows the machine disturbed it is measured again at once (Disturbed).
func Run(ctx context.Context, b measure.Warm) {
	x := &runner{b: b, p: b.Plan()}
	p := x.p
	arms := p.Arms()
	var ids []string
	for _, im := range arms {
		ids = append(ids, im.ID())
	}
	comps := map[string]*results.Comparison{}
	rec := b.Record()
	for _, w := range p.Workloads {
		for _, lv := range p.Load.Levels {
			c := &results.Comparison{Workload: w.Name, Level: lv, Model: p.Load.Model, Arms: ids,
				RoundSeconds: time.Duration(p.Rounds.Round).Seconds(), SettleSeconds: time.Duration(p.Rounds.Settle).Seconds(),
				Precision: float64(p.Rounds.Precision), Database: databaseOf(p, w.Name)}
			if p.Load.Model == "open" {
				shape(c, string(p.Load.Spacing()), p.Load.Pool())
			}
			comps[compKey(w.Name, lv)] = c
			rec.Comparisons = append(rec.Comparisons, c)
		}
	}
	x.rates = map[string][]*results.Comparison{}
	if a := p.AtRate; a != nil {
		for _, w := range p.Workloads {
			for _, r := range a.Rates {
				c := x.rateComparison(w.Name, r, "the plan's")
				x.rates[w.Name] = append(x.rates[w.Name], c)
				rec.Comparisons = append(rec.Comparisons, c)
			}
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(p.Database.Seed)))
	total := time.Duration(p.Rounds.MeasureMax)
	runBegan := time.Now()
	if d := time.Duration(p.Rounds.Budget); d > 0 {
		x.deadline = time.Now().Add(d)
	}
	var used time.Duration
	minStarts, maxStarts := p.MinStarts(), p.MaxStarts()
	for trial := 1; trial <= maxStarts && ctx.Err() == nil; trial++ {
		if trial > minStarts {
			if x.allPrecise() || used >= total {
				break
			}
			if left, next := time.Until(x.deadline), x.nextStart(); !x.deadline.IsZero() && left < next {
				b.Say("no start %d: %v of the budget left, and a start takes about %v", trial, left.Round(time.Second), next.Round(time.Second))
				break
			}
			b.Progress().AddTrial()
		}
		budget := total / time.Duration(minStarts)
		if trial > minStarts {
			budget = total - used
		}
		began := time.Now()
		spent := x.interleavedStart(ctx, trial, arms, comps, budget, max(0, minStarts-trial), rng)
		used += spent
		x.starts = append(x.starts, time.Since(began))
		x.setups = append(x.setups, time.Since(began)-spent)
		for _, c := range rec.Comparisons {
			c.Verdict = Judge(c, p)
		}
		JudgeShapes(rec.Comparisons)
		b.Save()
	}
	for _, c := range rec.Comparisons {
		c.Verdict = Judge(c, p)
	}
	JudgeShapes(rec.Comparisons)
	for _, c := range rec.Comparisons {
		if c.Verdict != nil && p.Rounds.Budget > 0 && !c.AtRate {
			Bought(c.Verdict, time.Duration(p.Rounds.Budget), c.Precision, x.setup, x.roundCost, p.MaxStarts())
			Overran(c.Verdict, time.Duration(p.Rounds.Budget), time.Since(runBegan), x.setups)
		}
		for _, line := range wording.Comparison(c) {
			b.Say("%s", line)
		}
	}
}

// nextStart is what another start would cost at least: the costliest
// setup so far (starting, checking and warming every arm) and the
// fewest rounds of each comparison. Its rounds then take what the
// budget leaves (roundsBudget); the whole of an earlier start, rounds
// included, refused a start that would have fit (bench/README.md, "Where the constants come from").
// Before any round, the longest start so far.
func (x *runner) nextStart() time.Duration {
	if x.roundCost == 0 {
		return slices.Max(append([]time.Duration{0}, x.starts...))
	}
	comps := len(x.p.Workloads) * len(x.p.Load.Levels)
	return x.setup + time.Duration(plan.MinRounds*comps)*x.roundCost
}

// roundsBudget is the time the rounds of one comparison may take now,
// of share (its part of measure_max): with a budget, no more than the
// time left leaves after the setups still owed, shared by this start's
// comparisons still to measure (comps) and those of the starts owed
// (after). The setups owed are the rest of this start's (its workloads
// after the first done, which sofar took) and the whole of each start
// owed, each costing what a whole start's setup costs (startSetup).
func (x *runner) roundsBudget(share, sofar time.Duration, done, after, comps int) time.Duration {
	if x.deadline.IsZero() {
		return share
	}
	whole := x.startSetup(sofar, done)
	left := time.Until(x.deadline) - (whole - sofar) - time.Duration(after)*whole
	perComp := left / time.Duration(comps+after*len(x.p.Workloads)*x.perWorkload())
	return max(0, min(share, perComp))
}

// startSetup is what a whole start's setup costs (starting, checking
// and warming every arm on every workload), as far as known: the
// costliest complete start's; during the first start, what its first
// done workloads took (sofar) for each of the plan's workloads. Before
// 2026-12-07 the rounds were given what was left after this start's
// setup so far for each start owed: in the main job's first start, the
// first workload's setup alone, half of what the next start needed, and
// the run overran its budget.
func (x *runner) startSetup(sofar time.Duration, done int) time.Duration {
	whole := sofar
	if len(x.setups) > 0 {
		whole = max(whole, slices.Max(x.setups))
	} else if done > 0 {
		whole = max(whole, sofar*time.Duration(len(x.p.Workloads))/time.Duration(done))
	}
	return whole
}

// setupsOutgrow projects the setups of the plan's starts (starting,
// checking and warming every arm) from the first start's setup of its
// first done workloads, and reports whether they alone outgrow the
// budget: the budget shares out the rounds' time, and cannot cut a plan
// below its starts, so such a run overruns it whatever its rounds take.
func setupsOutgrow(budget, setup time.Duration, done, workloads, starts int) (time.Duration, bool) {
	if budget <= 0 || done <= 0 {
		return 0, false
	}
	projected := setup * time.Duration(workloads) / time.Duration(done) * time.Duration(starts)
	return projected, projected >= budget
}

// warnSetups says once, as soon as the first start's setups show it,
// that the plan's starts cannot fit its budget, and what the run will
// take at least: before, nothing said so until the run had overrun.
func (x *runner) warnSetups(trial int, setup time.Duration, done int) {
	if trial != 1 || x.warned {
		return
	}
	budget, starts := time.Duration(x.p.Rounds.Budget), x.p.MinStarts()
	projected, over := setupsOutgrow(budget, setup, done, len(x.p.Workloads), starts)
	if !over {
		return
	}
	x.warned = true
	x.b.Warn("the budget of %v cannot hold this plan's %d starts: start 1 took %v to start, check and warm every arm on %d of %d workloads, so the %d starts' setups alone take about %v; every comparison gets its fewest rounds and the run will overrun (a longer budget, fewer workloads or stacks, or trials: 1 fit it)",
		budget.Round(time.Second), starts, setup.Round(time.Second), done, len(x.p.Workloads), starts, projected.Round(time.Minute))
}

func compKey(workload string, level int) string { return fmt.Sprintf("%s/%d", workload, level) }

// allPrecise reports whether every comparison's adjacent pairs are within
// the plan's precision.
func (x *runner) allPrecise() bool {
	for _, c := range x.b.Record().Comparisons {
		if v := Judge(c, x.p); v == nil || len(v.Unresolved) > 0 {
			return false
		}
	}
	return true
}

// interleavedStart is one trial of an interleaved plan; it returns the
// time its rounds took.
func (x *runner) interleavedStart(ctx context.Context, trial int, arms []plan.Implementation, comps map[string]*results.Comparison, budget time.Duration, after int, rng *rand.Rand) time.Duration {
	p, b := x.p, x.b
	began := time.Now()
	var lives []measure.Arm
	defer func() { measure.Down(lives) }()
	// The database's restart (restart: trial) happens once, before any
	// arm starts: the arms alive together share its servers.
	if what, err := b.BeforeStart(ctx, p.Workloads); err != nil {
		b.Warn("trial %d not measured: %s: %v", trial, what, err)
		return 0
	}
	lives = b.StartFrozen(ctx, trial, arms, rng)
	var spent time.Duration
	for wi, w := range p.Workloads {
		ready := b.PrepareFrozen(ctx, lives, wi, w, trial, rng)
		for li, lv := range p.Load.Levels {
			// Each arm's level, measured alone as a sequential run would.
			for _, i := range rng.Perm(len(ready)) {
				l := ready[i]
				sr := l.Records()[wi]
				if ctx.Err() != nil || sr.Status != results.OK {
					continue
				}
				l.Thaw()
				if l.Alive(ctx, sr) {
					b.Progress().Service(sr.Name(), w.Name, trial)
					if reason := l.MeasureLevel(ctx, w, sr.Levels[li]); reason != "" {
						l.Fail(ctx, sr, "%s", reason)
					}
				}
				l.Freeze()
			}
			var in []measure.Arm
			for _, l := range ready {
				if l.Records()[wi].Status == results.OK {
					in = append(in, l)
				}
			}
			if len(in) < 2 || ctx.Err() != nil {
				continue
			}
			if err := b.ResetForRounds(ctx, w, in); err != nil {
				b.Warn("%s at %d: no rounds: %v", w.Name, lv, err)
				continue
			}
			startCost := time.Since(began) - spent
			x.setup = max(x.setup, startCost)
			if li == 0 {
				x.warnSetups(trial, startCost, wi+1)
			}
			left := (len(p.Workloads)-wi)*x.perWorkload() - li
			rb := x.roundsBudget(budget/time.Duration(len(p.Workloads)*x.perWorkload()), startCost, wi+1, after, left)
			spent += x.rounds(ctx, comps[compKey(w.Name, lv)], in, w, trial, rb, startCost, rng)
		}
		spent += x.rateRounds(ctx, comps, ready, wi, w, trial, budget, began, spent, after, rng)
	}
	measure.Finish(ctx, lives)
	return spent
}

// perWorkload is how many comparisons each workload has: its levels and
// its rates (the automatic one counted before it is known).
func (x *runner) perWorkload() int {
	n := len(x.p.Load.Levels)
	if a := x.p.AtRate; a != nil {
		n += len(a.Rates)
		if a.Auto {
			n++
		}
		if a.Contrasted() {
			n++
		}
		if a.Busy {
			n++
		}
	}
	return n
}

// shape sets an open-model comparison's traffic: its arrivals' spacing
// over a pool of connections, and its name.
func shape(c *results.Comparison, arrivals string, connections int) {
	c.Arrivals, c.Connections = arrivals, connections
	c.Shape = load.OpenModel{Arrivals: load.Arrivals(arrivals), Connections: connections}.Shape()
}

// rateComparison is a comparison of every arm at rate on workload w,
// chosen by rule.
func (x *runner) rateComparison(w string, rate int, rule string) *results.Comparison {
	p := x.p
	var ids []string
	for _, im := range p.Arms() {
		ids = append(ids, im.ID())
	}
	c := &results.Comparison{Workload: w, Level: rate, Model: "open", Arms: ids, AtRate: true, RateRule: rule,
		RoundSeconds: p.RateRound(float64(rate)).Seconds(), SettleSeconds: time.Duration(p.Rounds.Settle).Seconds(),
		Precision: max(float64(p.Rounds.Precision), RatePrecision), Database: databaseOf(p, w)}
	shape(c, string(p.Load.Spacing()), p.Load.Pool())
	return c
}

// databaseOf is where workload w's database ran under p's placement, nil
// for a workload without one: the verdict judges the database's CPU
// against those CPUs (interleave's database-bound rule).
func databaseOf(p *plan.Plan, w string) *results.DatabaseCPUs {
	e := workloads.Database(w)
	if e == workloads.NoDatabase {
		return nil
	}
	pl := p.Placement
	d := &results.DatabaseCPUs{Engine: e.Name(), CPUs: pl.DatabaseCPUs}
	cpus, gen := cpusOf(pl.DatabaseCPUs), cpusOf(pl.GeneratorCPUs)
	d.Count = len(cpus)
	d.WithGenerator = d.Count > 0 && slices.Equal(cpus, gen)
	return d
}

// cpusOf is a CPU list's CPUs, sorted and each once; nil for a list that
// does not parse (an unpinned process).
func cpusOf(list string) []int {
	cpus, err := cpulist.Parse(list)
	if err != nil {
		return nil
	}
	slices.Sort(cpus)
	return slices.Compact(cpus)
}

// contrastComparison is c's rate under the contrasting shape.
func (x *runner) contrastComparison(c *results.Comparison) *results.Comparison {
	k := x.rateComparison(c.Workload, c.Level, c.RateRule)
	k.Contrast = true
	shape(k, plan.ContrastArrivals, plan.ContrastConnections)
	return k
}

// busyRate is workload w's busy rate: DefaultBusyShare of the
// second-slowest arm's throughput at the first level in this start's
// rounds, and the arms too near their own saturation to carry it (under
// BusyHeadroom times the rate), with why; 0 when fewer than three arms
// were measured or fewer than two could carry it.
func (x *runner) busyRate(c *results.Comparison, trial int) (int, string, map[string]string) {
	v := x.startVerdict(c, trial)
	if v == nil {
		return 0, "", nil
	}
	var thr []results.ArmFigures
	for _, f := range v.Arms {
		if f.Throughput > 0 {
			thr = append(thr, f)
		}
	}
	if len(thr) < 3 {
		return 0, "", nil
	}
	sort.Slice(thr, func(i, j int) bool { return thr[i].Throughput < thr[j].Throughput })
	second := thr[1]
	rate := roundTwo(plan.DefaultBusyShare * second.Throughput)
	if rate < 1 {
		return 0, "", nil
	}
	out := map[string]string{}
	for _, f := range thr {
		if f.Throughput < plan.BusyHeadroom*float64(rate) {
			out[f.Arm] = fmt.Sprintf("served %.0f req/s at %d %s, too near %d req/s to carry it", f.Throughput, c.Level, levelUnit(c.Model), rate)
		}
	}
	for _, arm := range c.Arms {
		if _, ok := out[arm]; !ok && !slices.ContainsFunc(thr, func(f results.ArmFigures) bool { return f.Arm == arm }) {
			out[arm] = "not measured at the first level"
		}
	}
	if len(c.Arms)-len(out) < 2 {
		return 0, "", nil
	}
	return rate, wording.BusyRule(plan.DefaultBusyShare, second.Arm, second.Throughput, c.Level, levelUnit(c.Model), trial), out
}

// startVerdict judges c's rounds of one start alone.
func (x *runner) startVerdict(c *results.Comparison, trial int) *results.Verdict {
	one := *c
	one.Rounds = nil
	for _, r := range c.Rounds {
		if r.Start == trial {
			one.Rounds = append(one.Rounds, r)
		}
	}
	return JudgeWith(&one, c.Precision, "")
}

// RatePrecision is the least half-width a comparison at a rate aims its
// CPU per request at: a few seconds at a rate read through /proc's 10 ms
// ticks, and starts that differ, rarely give a cost closer than ±10%.
const RatePrecision = 0.10

// autoRate is the automatic rate of workload w: the plan's share of the
// slowest arm's throughput at the first level in this start's rounds,
// rounded to two significant figures, and how it was chosen; 0 when no
// round measured one.
func (x *runner) autoRate(c *results.Comparison, trial int) (int, string) {
	v := x.startVerdict(c, trial)
	if v == nil {
		return 0, ""
	}
	slowest, thr := "", 0.0
	for _, f := range v.Arms {
		if f.Throughput > 0 && (thr == 0 || f.Throughput < thr) {
			slowest, thr = f.Arm, f.Throughput
		}
	}
	share := x.p.AtRate.ShareOrDefault()
	rate := roundTwo(share * thr)
	if rate < 1 {
		return 0, ""
	}
	return rate, wording.RateRule(share, slowest, thr, c.Level, levelUnit(c.Model), trial)
}

// roundTwo rounds v to two significant figures.
func roundTwo(v float64) int {
	if v < 1 {
		return 0
	}
	e := math.Pow(10, math.Floor(math.Log10(v))-1)
	return int(math.Round(v/e) * e)
}

func levelUnit(model string) string {
	if model == "open" {
		return "req/s"
	}
	return "users"
}

// rateRounds measures workload w's comparisons at a rate on this start's
// ready arms (number wi of the plan's workloads), making the automatic
// one from the first level's rounds when it does not exist yet; it
// returns the time its rounds took.
func (x *runner) rateRounds(ctx context.Context, comps map[string]*results.Comparison, ready []measure.Arm, wi int, w plan.Workload, trial int, budget time.Duration, began time.Time, spent time.Duration, after int, rng *rand.Rand) time.Duration {
	p, b := x.p, x.b
	a := p.AtRate
	if a == nil || ctx.Err() != nil {
		return 0
	}
	if a.Auto && !x.hasAuto(w.Name) && len(p.Load.Levels) > 0 {
		if rate, rule := x.autoRate(comps[compKey(w.Name, p.Load.Levels[0])], trial); rate > 0 {
			c := x.rateComparison(w.Name, rate, rule)
			x.rates[w.Name] = append(x.rates[w.Name], c)
			b.Record().Comparisons = append(b.Record().Comparisons, c)
			b.Say("%s at one rate: %d req/s (%s), %s", w.Name, rate, rule, c.Shape)
			if a.Contrasted() {
				k := x.contrastComparison(c)
				x.rates[w.Name] = append(x.rates[w.Name], k)
				b.Record().Comparisons = append(b.Record().Comparisons, k)
				b.Say("%s at %d req/s again under %s: whether CPU per request ranks the stacks or the traffic", w.Name, rate, k.Shape)
			}
		}
	}
	if a.Busy && !x.hasBusy(w.Name) && len(p.Load.Levels) > 0 {
		if rate, rule, out := x.busyRate(comps[compKey(w.Name, p.Load.Levels[0])], trial); rate > 0 {
			c := x.rateComparison(w.Name, rate, rule)
			c.Busy, c.LeftOut = true, out
			c.Arms = slices.DeleteFunc(c.Arms, func(arm string) bool { _, left := out[arm]; return left })
			x.rates[w.Name] = append(x.rates[w.Name], c)
			b.Record().Comparisons = append(b.Record().Comparisons, c)
			b.Say("%s at a busy rate: %d req/s (%s), %s%s", w.Name, rate, rule, c.Shape, wording.LeftOut(out))
		}
	}
	var in []measure.Arm
	for _, l := range ready {
		if l.Records()[wi].Status == results.OK {
			in = append(in, l)
		}
	}
	if len(in) < 2 {
		return 0
	}
	var took time.Duration
	for ri, c := range x.rates[w.Name] {
		if ctx.Err() != nil {
			break
		}
		var these []measure.Arm
		for _, l := range in {
			if slices.Contains(c.Arms, l.ID()) {
				these = append(these, l)
			}
		}
		if len(these) < 2 {
			continue
		}
		if err := b.ResetForRounds(ctx, w, these); err != nil {
			b.Warn("%s at %d req/s: no rounds: %v", w.Name, c.Level, err)
			continue
		}
		startCost := time.Since(began) - spent - took
		left := (len(p.Workloads)-wi)*x.perWorkload() - len(p.Load.Levels) - ri
		rb := x.roundsBudget(budget/time.Duration(len(p.Workloads)*x.perWorkload()), startCost, wi+1, after, left)
		took += x.rounds(ctx, c, these, w, trial, rb, startCost, rng)
	}
	return took
}

// hasAuto reports whether workload w's automatic rate is chosen.
func (x *runner) hasAuto(w string) bool {
	for _, c := range x.rates[w] {
		if c.RateRule != "the plan's" && !c.Busy {
			return true
		}
	}
	return false
}

// hasBusy reports whether workload w's busy rate is chosen.
func (x *runner) hasBusy(w string) bool {
	return slices.ContainsFunc(x.rates[w], func(c *results.Comparison) bool { return c.Busy })
}

// rounds measures ls in rounds at level until each adjacent pair is
// precise within this start (half the plan's precision), or this start
// has the rounds the cheapest plan asks of it (roundsWanted), or budget
// is spent, after at least plan.MinRounds and, but for the budget, after
// a complete mirrored pair of rounds; it returns the time taken.
// startCost is what this start cost before its rounds (starting and
// warming every arm), the price of the next start in that plan. The
// database's invariants are audited after the last round.
func (x *runner) rounds(ctx context.Context, c *results.Comparison, ls []measure.Arm, w plan.Workload, trial int, budget, startCost time.Duration, rng *rand.Rand) time.Duration {
	began := time.Now()
	level := c.Level
	var order []int
	// A start's rounds repeat as many disturbed arm rounds as it has
	// arms (at least two); past that the machine is not disturbed now and
	// then, it is this busy, and the verdict leaves the rest out by their
	// records.
	withDB := workloads.Database(w.Name) != workloads.NoDatabase
	repeats, maxRepeats := 0, max(2, len(ls))
	for r := 1; ctx.Err() == nil; r++ {
		if r > plan.MinRounds {
			roundCost := time.Since(began) / time.Duration(r-1)
			if !c.AtRate {
				x.roundCost = roundCost // what Bought prices a level's round at
			}
			// Precision and the plan stop a start only after a complete
			// mirrored pair (r-1 rounds done, r-1 even); the budget before
			// a round that would pass it.
			pairDone := r%2 == 1
			if noRoundFits(time.Since(began), roundCost, budget) || pairDone && (StartPrecise(c, trial, c.Precision/2) || r > RoundsWanted(c, x.p, startCost, roundCost)) {
				break
			}
		}
		round := results.Round{Start: trial, Index: r}
		order = RoundOrder(order, len(ls), r, rng)
		for _, i := range order {
			l := ls[i]
			if l.Exited() {
				continue
			}
			seed := uint64(trial)<<32 | uint64(r)
			ar := x.armRound(ctx, l, w, c, seed)
			if why := Disturbed(ar, TypicalCPU(c, ar.Arm, trial), withDB); why != "" && ar.Misbehaved == "" && repeats < maxRepeats && ctx.Err() == nil {
				// Judged from the round's own record, never its figure:
				// measured again at once, the other arms still frozen.
				repeats++
				ar.Disturbed = why
				round.Repeated = append(round.Repeated, ar)
				x.b.Say("%s at %d %s, start %d, round %d: %s disturbed (%s); measured again", w.Name, level, levelUnit(c.Model), trial, r, ar.Arm, why)
				ar = x.armRound(ctx, l, w, c, seed)
				ar.Disturbed = Disturbed(ar, TypicalCPU(c, ar.Arm, trial), withDB)
			}
			if ar.Misbehaved != "" {
				c.Warnings = append(c.Warnings, fmt.Sprintf("start %d, round %d: %s %s; the round is left out of the verdict", trial, r, ar.Arm, ar.Misbehaved))
			}
			if ar.Writes != nil {
				for _, v := range ar.Writes.Violations {
					c.Warnings = append(c.Warnings, fmt.Sprintf("start %d, round %d: INVARIANT FAILED: %s: %s: %s", trial, r, ar.Arm, v.Check, v.Detail))
					x.b.Say("INVARIANT FAILED: %s at %d %s, start %d, round %d: %s: %s: %s", w.Name, level, levelUnit(c.Model), trial, r, ar.Arm, v.Check, v.Detail)
				}
			}
			round.Arms = append(round.Arms, ar)
		}
		if ctx.Err() != nil {
			break
		}
		c.Rounds = append(c.Rounds, round)
		x.b.Say("%s at %d %s, start %d, round %d: %s", w.Name, level, levelUnit(c.Model), trial, r, wording.Round(round, c.Model))
	}
	if workloads.Database(w.Name) != workloads.NoDatabase {
		vs, msgs := measure.AuditAfter(ctx, x.b, w, trial, "the rounds")
		c.Violations = append(c.Violations, vs...)
		c.Warnings = append(c.Warnings, msgs...)
	}
	return time.Since(began)
}

// noRoundFits reports whether a comparison's rounds stop for its
// budget: when another round, as long as the average so far, would end
// past it. Until 2026-12-07 they stopped only once the budget was
// spent, so each comparison ran up to a round past its share; the main
// job's 8 comparisons a start (rounds of 15-24 s) overran its 40 min by
// 2 min.
func noRoundFits(spent, round, budget time.Duration) bool {
	return spent+round > budget
}

// armRound thaws l, loads it for the plan's settle (not counted) and its
// round, stops the load (every request answered) and freezes it again.
func (x *runner) armRound(ctx context.Context, l measure.Arm, w plan.Workload, c *results.Comparison, seed uint64) results.ArmRound {
	p := x.p
	sc := load.StatusChecked(l.Scenario(w.Name))
	steps := max(l.Steps(w.Name), 1)
	ar := results.ArmRound{Arm: l.ID()}
	level := c.Level
	model := func(d time.Duration) load.Model {
		if c.Model == "open" {
			// Poisson arrivals drawn anew for each round, the same for
			// every arm of it.
			// At a rate (at_rate) the rate is in requests a second: an
			// iteration of the scenario sends one request a step.
			rate := float64(level)
			if c.AtRate {
				rate /= float64(steps)
			}
			return load.OpenModel{Rate: rate, Duration: d, Arrivals: load.Arrivals(c.Arrivals), Connections: c.Connections, Seed: seed}
		}
		return load.ClosedModel{Users: level, Duration: d, ThinkTime: time.Duration(p.Load.ThinkTime)}
	}
	// The contrast's connections are a fixed pool, as wrk2's -c: one
	// connection stays one, its sends waiting for it.
	var fixed []load.Option
	if c.Contrast && c.Connections > 0 {
		fixed = append(fixed, load.MaxInflight(c.Connections))
	}
	// The rows the workload writes, counted before the thaw and after
	// the round: the other arms are frozen, so what the database gained
	// is this arm's, to be held against its answers.
	before := l.Written(ctx, w)
	l.Thaw()
	defer l.Freeze()
	var settled *load.Result
	if d := time.Duration(p.Rounds.Settle); d > 0 {
		res, err := x.b.Attacker(nil, fixed...).Attack(ctx, sc, model(d))
		if err != nil {
			ar.Misbehaved = "did not settle after its thaw: " + err.Error()
			return ar
		}
		settled = res
		row, _ := res.Row("")
		ar.SettleThroughput, ar.SettleErrors = row.Throughput, row.Errors
	}
	m, err := l.Measure(ctx, w, x.b.Attacker(nil, fixed...), sc, model(time.Duration(c.RoundSeconds*float64(time.Second))))
	ar.At = m.At
	if err != nil {
		ar.Misbehaved = "load failed: " + err.Error()
		return ar
	}
	res := m.Result
	if before != nil {
		counts, vs := l.CheckWrites(ctx, w, before, settled, res)
		ar.Writes = &results.RoundWrites{Counts: counts, Violations: vs}
	}
	row, _ := res.Row("")
	s := res.Summary
	ar.Seconds, ar.Throughput, ar.Samples, ar.Errors = s.DurationSeconds, row.Throughput, row.Samples, row.Errors
	ar.P50Ms, ar.P99Ms = row.Latency.P50, row.Latency.P99
	if m.Sampled {
		ar.ServiceCPU, ar.ServiceCPUSeconds = m.ServiceCPU, m.ServiceCPUSeconds
		ar.RSSBytes, ar.Threads, ar.FDs = uint64(max(0, m.RSSBytes)), m.Threads, m.FDs
		if workloads.Database(c.Workload) != workloads.NoDatabase {
			// A service started for the plan's other workloads may hold
			// connections during one that uses no database: they are not
			// this workload's to judge.
			ar.DBConnections = m.DBConnections
		}
	}
	if c.Model == "open" {
		ar.LatenessP99Ms, ar.Queued, ar.Dropped = s.Lateness.P99, s.Queued, s.Dropped
	}
	ar.StealPercent, ar.OtherServiceCPU, ar.OtherGeneratorCPU = m.StealPercent, m.OtherServiceCPU, m.OtherGeneratorCPU
	ar.DatabaseCPU = m.DatabaseCPU
	if cpus := max(s.CPUs, 1); s.DurationSeconds > 0 {
		ar.GeneratorCPU = 100 * s.BusyCPUSeconds() / s.DurationSeconds / float64(cpus)
	}
	switch {
	case ar.SettleErrors > 0:
		ar.Misbehaved = fmt.Sprintf("answered %d errors in the second after its thaw", ar.SettleErrors)
	case c.Model != "open" && p.Rounds.Settle > 0 && ar.SettleThroughput < SettleFloor*ar.Throughput:
		ar.Misbehaved = fmt.Sprintf("served %.0f%% of its round's rate in the second after its thaw", 100*ar.SettleThroughput/ar.Throughput)
	}
	return ar
}
