package lab

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/cpulist"
	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/workloads"
)

// StartProbe is the closed-model probe whose throughput, halved, is a
// start's first rate when the plan gives none.
const StartProbe = 2 * time.Second

// LatenessShare is the share of the objective's tightest latency limit
// that the generator's send lateness p99 may reach before a probe is
// the generator's: over it, sends were late enough to count in the
// latency.
const LatenessShare = 0.1

// runCapacity finds, for each arm and workload, the highest open-model
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
// bisects to the plan's resolution (search, estimate).
func (x *execution) runCapacity(ctx context.Context) {
	p := x.plan
	arms := p.Arms()
	caps := map[string]*results.Capacity{}
	cpus := x.serviceCPUs()
	for _, w := range p.Workloads {
		for _, im := range arms {
			c := &results.Capacity{Workload: w.Name, Arm: im.ID(), Implementation: im.BaseID(), Cores: im.Cores, Objective: p.SLO.String(), CPUs: cpus, Unit: p.Capacity.Unit()}
			if im.Cores > 0 {
				c.CPUs = float64(im.Cores) // an arm of the plan's cores: pinned to them, no quota
			}
			caps[capKey(w.Name, im.ID())] = c
			x.rec.Capacities = append(x.rec.Capacities, c)
		}
	}
	x.say("capacity at %s: %d starts, resolution %v, each probe %s", p.SLO.String(), p.MinStarts(), p.Capacity.Resolution, probeRule(p))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(p.Database.Seed)))
	for trial := 1; trial <= p.MinStarts() && ctx.Err() == nil; trial++ {
		x.capacityStart(ctx, trial, arms, caps, rng)
		x.judgeCapacities()
		_ = results.WriteRun(x.dir, x.rec)
	}
	x.judgeCapacities()
	for _, c := range x.rec.Capacities {
		x.say("CAPACITY %s on %s at %s: %s", c.Arm, c.Workload, c.Objective, c.Describe())
		if c.Failed > 0 {
			x.say("  failed at %s %s: %s", amount(c.Failed, c.Units()), c.Units(), c.FailedWhy)
		}
	}
	for _, v := range x.rec.CapacityVerdicts {
		for _, line := range v.Lines() {
			x.say("%s", line)
		}
	}
	if p.Sizing != nil {
		x.say("SIZING for %s:", p.Sizing.String())
		for _, c := range x.rec.Capacities {
			sz := results.SizeFor(c, *p.Sizing)
			x.say("  %s", describeSize(c, sz))
		}
	}
}

// describeSize is one sizing line of the progress output.
func describeSize(c *results.Capacity, sz results.Size) string {
	if sz.Instances == 0 {
		return fmt.Sprintf("%s on %s: no capacity to size from", c.Arm, c.Workload)
	}
	bound := ""
	if sz.LowerBound {
		bound = " at most (its capacity is a lower bound)"
	}
	cores := "cores unknown (the service was not pinned)"
	if sz.Cores > 0 {
		cores = fmt.Sprintf("%.2f cores", sz.Cores)
	}
	return fmt.Sprintf("%s on %s: %s, %d × %s%s", c.Arm, c.Workload, cores, sz.Instances, human.Bytes(float64(sz.MemoryBytes/int64(sz.Instances))), bound)
}

// probeRule states the probe-length rule with the plan's figures.
func probeRule(p *plan.Plan) string {
	q := p.SLO.Highest()
	rule := fmt.Sprintf("%v uncounted, then %.0f samples (%d/(1-%g)), at least %v and at most %v", time.Duration(p.Rounds.Settle),
		plan.SamplesBeyondQuantile/(1-q), plan.SamplesBeyondQuantile, q, time.Duration(p.Capacity.ProbeMin), time.Duration(p.Capacity.ProbeMax))
	if p.Capacity.Model == "closed" {
		rule += fmt.Sprintf(", each user expected to send once per think time plus the tightest limit (%v)", time.Duration(p.Load.ThinkTime)+p.SLO.Tightest())
	}
	return rule
}

// expectedRate is the rate a probe at load sends, for its length: the
// rate itself in the open model; in the closed model each user sends at
// least once per think time plus the tightest limit while the objective
// holds (its mean latency is below every limit), so a passing probe
// counts at least the samples its rule asks.
func expectedRate(p *plan.Plan, at float64) float64 {
	if p.Capacity.Model != "closed" {
		return at
	}
	return at / (time.Duration(p.Load.ThinkTime) + p.SLO.Tightest()).Seconds()
}

// probeLoad is the model of a probe at load for d: in the open model at
// requests a second, iterations of steps requests each arriving at
// at/steps a second (the samples the probe's rule counts, the
// throughput it achieves and the sizing's rates are all requests); in the
// closed model, users with the plan's think time.
func probeLoad(p *plan.Plan, at float64, steps int, d time.Duration) load.Model {
	if p.Capacity.Model == "closed" {
		return load.ClosedModel{Users: int(at), Duration: d, ThinkTime: time.Duration(p.Load.ThinkTime)}
	}
	return load.OpenModel{Rate: at / float64(max(steps, 1)), Duration: d}
}

// armsAlive reports whether p keeps every arm alive at once: in
// interleaved rounds, and in a capacity search.
func armsAlive(p *plan.Plan) bool {
	ok, _ := p.Interleaved()
	return ok || p.SLO != nil
}

func capKey(workload, arm string) string { return workload + "/" + arm }

// serviceCPUs is how much CPU the service has: the placement's service
// CPUs, or the CPU quota when lower; 0 when neither is set.
func (x *execution) serviceCPUs() float64 {
	p := x.plan
	n := 0.0
	if cs := p.Placement.ServiceCPUs; cs != "" {
		if l, err := cpulist.Parse(cs); err == nil {
			n = float64(len(l))
		}
	}
	if q := p.Limits.CPU; q > 0 && (n == 0 || q < n) {
		n = q
	}
	return n
}

// judgeCapacities estimates every capacity from its brackets and ranks
// each workload's arms.
func (x *execution) judgeCapacities() {
	p := x.plan
	x.rec.CapacityVerdicts = nil
	for _, w := range p.Workloads {
		var caps []*results.Capacity
		for _, c := range x.rec.Capacities {
			if c.Workload == w.Name {
				estimate(c)
				caps = append(caps, c)
			}
		}
		x.rec.CapacityVerdicts = append(x.rec.CapacityVerdicts, judgeCapacity(w.Name, p.SLO.String(), caps))
	}
}

// capacityStart is one trial of a capacity plan: every arm started, each
// workload prepared on every arm, then searched.
func (x *execution) capacityStart(ctx context.Context, trial int, arms []plan.Implementation, caps map[string]*results.Capacity, rng *rand.Rand) {
	p := x.plan
	var lives []*live
	defer func() {
		for _, l := range lives {
			l.down()
		}
	}()
	if what, err := x.beforeStart(ctx, p.Workloads); err != nil {
		x.warn("trial %d not measured: %s: %v", trial, what, err)
		return
	}
	lives = x.startFrozen(ctx, trial, arms, rng)
	for wi, w := range p.Workloads {
		ready := x.prepareFrozen(ctx, lives, wi, w, trial, rng)
		// The progress counts each arm's search on a workload as one
		// level (a capacity plan has one), done when the workload is.
		if len(ready) > 0 && ctx.Err() == nil {
			if err := x.resetForRounds(ctx, w, ready); err != nil {
				x.warn("%s, start %d: no capacity search: %v", w.Name, trial, err)
			} else {
				x.searchCapacity(ctx, trial, w, ready, caps, rng)
				x.auditAfterSearch(ctx, trial, w, ready, caps)
			}
		}
		x.progress.skip(len(arms))
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
}

// armSearch is one arm's search in one start.
type armSearch struct {
	l *live
	c *results.Capacity
	s *search
}

// searchCapacity searches every arm of ls on w in steps: each step, every
// arm whose search goes on gets one probe, in a fresh random order, the
// others frozen (a generator-limited probe is repeated once). Each search
// is bounded by capacity.max_probes steps.
func (x *execution) searchCapacity(ctx context.Context, trial int, w plan.Workload, ls []*live, caps map[string]*results.Capacity, rng *rand.Rand) {
	p := x.plan
	var as []*armSearch
	for _, l := range ls {
		c := caps[capKey(w.Name, l.im.ID())]
		c.StepsPerArrival = len(l.settled[w.Name].Steps())
		rate, growth, err := x.startRate(ctx, l, w, c)
		if err != nil {
			c.Warnings = append(c.Warnings, fmt.Sprintf("start %d: no search: %v", trial, err))
			x.warn("%s on %s, start %d: no capacity search: %v", l.im.ID(), w.Name, trial, err)
			continue
		}
		as = append(as, &armSearch{l: l, c: c, s: newSearch(scaleOf(c.Units()), rate, float64(p.Capacity.Resolution), growth, p.Capacity.MaxProbes)})
	}
	for step := 1; ctx.Err() == nil; step++ {
		var todo []*armSearch
		for _, a := range as {
			if !a.s.done() && !exited(a.l) {
				todo = append(todo, a)
			}
		}
		if len(todo) == 0 {
			break
		}
		for _, i := range rng.Perm(len(todo)) {
			a := todo[i]
			rate := a.s.next
			pr, short := x.probe(ctx, a.l, w, rate, trial)
			if repeatProbe(pr) && ctx.Err() == nil {
				// Only the repeat counts; both are kept for the curve.
				a.c.Probes = append(a.c.Probes, pr)
				x.say("%s on %s, start %d, step %d: %s; repeated", a.l.im.ID(), w.Name, trial, step, describeProbe(pr, a.c.Units()))
				pr, short = x.probe(ctx, a.l, w, rate, trial)
			}
			if ctx.Err() != nil {
				break
			}
			need := plan.SamplesBeyondQuantile / (1 - p.SLO.Highest())
			switch {
			case short:
				a.c.Warnings = append(a.c.Warnings, fmt.Sprintf("start %d: the probe at %s %s counted %d samples, fewer than the %.0f its p%g needs: capacity.probe_max cut it", trial, amount(rate, a.c.Units()), a.c.Units(), pr.Samples, need, 100*p.SLO.Highest()))
			case pr.Pass && float64(pr.Samples) < math.Round(need):
				// A closed-model probe's length is from the rate it was
				// expected to send (expectedRate); one that passed on
				// fewer samples says so.
				a.c.Warnings = append(a.c.Warnings, fmt.Sprintf("start %d: the probe at %s %s passed on %d samples, fewer than the %.0f its p%g needs", trial, amount(rate, a.c.Units()), a.c.Units(), pr.Samples, need, 100*p.SLO.Highest()))
			}
			a.c.Probes = append(a.c.Probes, pr)
			a.s.record(rate, pr.Pass, pr.GeneratorLimited, pr.Why)
			x.say("%s on %s, start %d, step %d: %s", a.l.im.ID(), w.Name, trial, step, describeProbe(pr, a.c.Units()))
		}
	}
	for _, a := range as {
		if exited(a.l) {
			a.c.Warnings = append(a.c.Warnings, fmt.Sprintf("start %d: the service exited during its search; its probes so far are kept, its bracket left out", trial))
			continue
		}
		if a.s.probes > 0 && ctx.Err() == nil {
			a.c.Brackets = append(a.c.Brackets, a.s.bracket(trial))
		}
	}
}

// repeatProbe reports whether the search repeats pr before it counts.
// A generator stalled once (descheduled, a GC) is not a ceiling, and one
// stall of the machine or the service in a few seconds is not the
// service's steady state: a probe that failed, but for one far over the
// objective (the service overloaded), is repeated once at once. A
// bisection trusts every failure: unrepeated, one stall ends the search
// below it. Measured on go-stdlib (bench/README.md), one start's search
// ended at 22,000 req/s on a probe whose p99 was 14 ms, where another
// start passed at 41,000.
func repeatProbe(pr results.Probe) bool {
	return pr.GeneratorLimited || !pr.Pass && !pr.FarOver
}

// exited reports whether l's service has exited.
func exited(l *live) bool {
	select {
	case <-l.svc.Exited():
		return true
	default:
		return false
	}
}

// startRate is where l's search starts on w, and the factor it brackets
// by: the plan's start_rate; else, in a later start, the previous starts'
// lowest passing rate (bracketing by RefineGrowth); else half the
// throughput of a StartProbe closed-model probe at the warm-up's users;
// a search of users starts at the warm-up's users.
func (x *execution) startRate(ctx context.Context, l *live, w plan.Workload, c *results.Capacity) (float64, float64, error) {
	p := x.plan
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
	l.thaw()
	defer l.freeze()
	res, err := x.attacker(nil).Attack(ctx, load.StatusChecked(l.settled[w.Name]), load.ClosedModel{Users: users, Duration: StartProbe, ThinkTime: time.Duration(p.Load.ThinkTime)})
	if err != nil {
		return 0, 0, fmt.Errorf("start-rate probe: %w", err)
	}
	row, _ := res.Row("")
	if row.Throughput <= 0 {
		return 0, 0, fmt.Errorf("start-rate probe: no request completed in %v at %d users (%s)", StartProbe, users, reasons(row))
	}
	return row.Throughput / 2, BracketGrowth, nil
}

// probe runs l at rate in the open model (or rate users in the closed
// model): the plan's settle uncounted, then as long as the objective's
// highest percentile needs (plan.CapacitySettings.ProbeSeconds, at
// expectedRate), and judges it (judgeProbe). short reports a probe
// probe_max cut below its rule.
func (x *execution) probe(ctx context.Context, l *live, w plan.Workload, rate float64, trial int) (pr results.Probe, short bool) {
	p := x.plan
	d, short := p.Capacity.ProbeSeconds(expectedRate(p, rate), p.SLO.Highest())
	pr = results.Probe{Start: trial, Rate: rate}
	l.thaw()
	defer l.freeze()
	smp := monitor.NewSampler(l.svc.PID())
	_, _ = smp.Sample(ctx)
	pr.At = time.Now().UTC()
	x.progress.phase(fmt.Sprintf("probe at %s %s", amount(rate, p.Capacity.Unit()), p.Capacity.Unit()), time.Duration(p.Rounds.Settle)+d)
	a := x.attacker(x.progress.onProgress, load.WithWarmup(load.WarmupPhase{Duration: time.Duration(p.Rounds.Settle)}), load.MaxInflight(p.Capacity.Connections))
	res, err := a.Attack(ctx, load.StatusChecked(l.settled[w.Name]), probeLoad(p, rate, len(l.settled[w.Name].Steps()), d))
	after, serr := smp.Sample(ctx)
	if err != nil {
		pr.Why = "load failed: " + err.Error()
		return pr, short
	}
	if serr == nil {
		pr.ServiceCPU, pr.RSSBytes = after.CPUPercent, int64(after.RSSBytes)
	}
	s := res.Summary
	row, _ := res.Row("")
	pr.Seconds, pr.Achieved, pr.Samples = s.DurationSeconds, row.Throughput, row.Samples
	if n := row.Samples + s.Dropped; n > 0 {
		pr.Dropped = s.Dropped
		pr.ErrorRate = float64(row.Errors+droppedFailed(s.Dropped, s.TargetRate, p.SLO.Tightest())) / float64(n)
	}
	pr.P50Ms, pr.P99Ms, pr.P999Ms = row.Latency.P50, row.Latency.P99, row.Latency.P999
	pr.LatenessP99Ms = s.Lateness.P99
	if cpus := max(s.CPUs, 1); s.DurationSeconds > 0 {
		pr.GeneratorCPU = 100 * s.BusyCPUSeconds() / s.DurationSeconds / float64(cpus)
	}
	lat, svc := res.Latency(""), res.Service("")
	judgeProbe(&pr, *p.SLO, func(q float64) float64 {
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

// droppedFailed is how many of a probe's dropped sends count as failed.
// A dropped send was due before the probe ended and still waited for one
// of its connections then: the sends due in the last stretch are the
// queue a service near its capacity holds at any moment, which the end
// cuts off, and one that had waited less than the objective's tightest
// limit may well have met it. The schedule ran at rate (arrivals a
// second, in the units dropped counts), so the oldest of them had waited
// about dropped/rate; those beyond rate × limit had waited past the
// limit and count as failed, the rest do not. Without a rate (the closed
// model) every dropped send counts.
func droppedFailed(dropped int64, rate float64, limit time.Duration) int64 {
	if rate <= 0 || limit <= 0 {
		return dropped
	}
	return max(0, dropped-int64(rate*limit.Seconds()))
}

// judgeProbe decides whether pr meets slo. latency(q) is the probe's
// latency percentile q (from the intended send time) and service(q) its
// service time (from the actual send), both in ms. The probe is the
// generator's (GeneratorLimited, and not a pass) when the generator used
// more than results.GeneratorBoundPercent of its CPUs, or when its send
// lateness p99 exceeded LatenessShare of the tightest limit while the
// service's own times met every limit: late sends then made the latency,
// not the service. Otherwise it fails on any percentile over its limit
// or an error rate over the objective's, every reason named.
func judgeProbe(pr *results.Probe, slo plan.SLO, latency, service func(q float64) float64) {
	var why []string
	serviceMet := true
	for _, pl := range slo.Percentiles {
		limit := ms(time.Duration(pl.Limit))
		if v := latency(pl.Q); v > limit {
			why = append(why, fmt.Sprintf("%s %s > %s", pl.Name(), human.Ms(v), human.Ms(limit)))
			pr.FarOver = pr.FarOver || v >= results.FarOverFactor*limit
		}
		if service(pl.Q) > limit {
			serviceMet = false
		}
	}
	if pr.ErrorRate > float64(slo.Errors) {
		why = append(why, fmt.Sprintf("errors %s > %s", plan.Fraction(pr.ErrorRate), slo.Errors))
		pr.FarOver = pr.FarOver || pr.ErrorRate >= results.FarOverFactor*max(float64(slo.Errors), 0.001)
	}
	lateLimit := LatenessShare * ms(slo.Tightest())
	switch {
	case pr.GeneratorCPU > results.GeneratorBoundPercent:
		pr.GeneratorLimited = true
		why = append([]string{fmt.Sprintf("generator at %.0f%% of its CPUs (over %d%%)", pr.GeneratorCPU, results.GeneratorBoundPercent)}, why...)
	case pr.LatenessP99Ms > lateLimit && serviceMet:
		pr.GeneratorLimited = true
		why = append([]string{fmt.Sprintf("generator late: send lateness p99 %s > %s", human.Ms(pr.LatenessP99Ms), human.Ms(lateLimit))}, why...)
	}
	pr.Pass = len(why) == 0
	pr.Why = strings.Join(why, "; ")
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// amount writes a load in unit: users as whole numbers, rates as
// human.Count does.
func amount(v float64, unit string) string {
	if unit == results.UnitUsers {
		return fmt.Sprintf("%.0f", v)
	}
	return human.Count(v)
}

// describeProbe is a probe's progress line; unit is its capacity's.
func describeProbe(pr results.Probe, unit string) string {
	verdict := "pass"
	switch {
	case pr.GeneratorLimited:
		verdict = "GENERATOR-LIMITED: " + pr.Why
	case !pr.Pass:
		verdict = "fail: " + pr.Why
	}
	return fmt.Sprintf("%s %s (achieved %s req/s): p50 %s, p99 %s, p99.9 %s, errors %s, lateness p99 %s, service CPU %.0f%%, generator %.0f%%: %s",
		amount(pr.Rate, unit), unit, human.Count(pr.Achieved), human.Ms(pr.P50Ms), human.Ms(pr.P99Ms), human.Ms(pr.P999Ms), plan.Fraction(pr.ErrorRate),
		human.Ms(pr.LatenessP99Ms), pr.ServiceCPU, pr.GeneratorCPU, verdict)
}

// auditAfterSearch audits w's database after the start's searches (as
// after rounds): a failed invariant is a warning of every capacity of w.
func (x *execution) auditAfterSearch(ctx context.Context, trial int, w plan.Workload, ls []*live, caps map[string]*results.Capacity) {
	if workloads.Database(w.Name) == workloads.NoDatabase || ctx.Err() != nil {
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AuditTimeout)
	vs, err := x.dbs.Audit(actx, w.Name, -1, -1)
	cancel()
	var msgs []string
	var violations []results.Violation
	if err != nil {
		msgs = append(msgs, fmt.Sprintf("start %d: audit after the search: %v", trial, err))
	}
	for _, v := range vs {
		violations = append(violations, results.Violation{Check: v.Check, Detail: fmt.Sprintf("after the capacity search of start %d: %s", trial, v.Detail)})
		msgs = append(msgs, fmt.Sprintf("start %d: INVARIANT FAILED after the search: %s: %s", trial, v.Check, v.Detail))
		x.say("INVARIANT FAILED: %s after the capacity search of start %d: %s: %s", w.Name, trial, v.Check, v.Detail)
	}
	for _, l := range ls {
		c := caps[capKey(w.Name, l.im.ID())]
		c.Warnings = append(c.Warnings, msgs...)
		c.Violations = append(c.Violations, violations...)
	}
}
