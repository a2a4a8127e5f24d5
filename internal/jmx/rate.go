package jmx

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/load"
)

// Rate timers: the Constant Throughput Timer, the Precise Throughput
// Timer and the Throughput Shaping Timer (JMeter Plugins) pace the
// threads to a rate of samples. A plan that holds a rate is an open
// model: it becomes one, its threads the pool of connections.

const (
	tagConstThroughput   = "ConstantThroughputTimer"
	tagPreciseThroughput = "PreciseThroughputTimer"
	tagShaping           = "kg.apc.jmeter.timers.VariableThroughputTimer"
)

var rateTimerNames = map[string]string{
	tagConstThroughput:   "Constant Throughput Timer",
	tagPreciseThroughput: "Precise Throughput Timer",
	tagShaping:           "Throughput Shaping Timer",
}

func isRateTimer(t string) bool { _, ok := rateTimerNames[t]; return ok }

// calcModes are the Constant Throughput Timer's "Calculate Throughput
// based on" choices, by their number in the file.
var calcModes = []string{
	"this thread only",
	"all active threads",
	"all active threads in current thread group",
	"all active threads (shared)",
	"all active threads in current thread group (shared)",
}

// Open is the open model a rate timer makes of the thread group.
type Open struct {
	// Timer is the timer's kind in words, Name its name, Line its line.
	Timer, Name string
	Line        int
	// Rate is the arrival rate, iterations per second (the start of
	// Stages where there are stages).
	Rate float64
	// Stages are the Throughput Shaping Timer's rows, in iterations per
	// second; nil for one rate.
	Stages []load.Stage
	// Duration is how long arrivals come at Rate (no stages).
	Duration time.Duration
	// Arrivals are even, or Poisson (the Precise Throughput Timer).
	Arrivals load.Arrivals
	// Seed seeds Poisson arrivals; 0 leaves attack's default.
	Seed uint64
	// Connections is the pool of connections: the threads.
	Connections int
	// MaxInflight is set where the threads are more than the engine's
	// default bound on requests in flight.
	MaxInflight int
	// Report says what the timer became and whether JMeter's threads
	// could have held it, one sentence each.
	Report []string
	// Comments are said in the load file about its figures.
	Comments []string
}

// Peak is the highest rate of the model, iterations per second.
func (o *Open) Peak() float64 {
	p := o.Rate
	for _, s := range o.Stages {
		p = max(p, s.Target)
	}
	return p
}

// Length is how long the arrivals come: the stages' sum or Duration.
func (o *Open) Length() time.Duration { return o.Model().Length() }

// Model is the load engine's model of o.
func (o *Open) Model() load.OpenModel {
	m := load.OpenModel{Rate: o.Rate, Arrivals: o.Arrivals, Seed: o.Seed, Connections: o.Connections, Stages: o.Stages}
	if len(o.Stages) == 0 {
		m.Duration = o.Duration
	}
	return m
}

// StagesArg is the stages as attack --stages reads them.
func (o *Open) StagesArg() string {
	parts := make([]string, len(o.Stages))
	for i, s := range o.Stages {
		parts[i] = fmtDuration(s.Duration) + ":" + fmtArg(s.Target)
	}
	return strings.Join(parts, ",")
}

// sawRate records a rate timer met in a scope (once).
func (im *importer) sawRate(el *element) {
	if !slices.Contains(im.rateTimers, el) {
		im.rateTimers = append(im.rateTimers, el)
	}
}

// profile is a rate timer's rate of samples per second: rate, then
// stages.
type profile struct {
	rate     float64
	stages   []load.Stage
	arrivals load.Arrivals
	seed     uint64
	what     string // how the rate was read, for the report
}

// rateTimer translates the first rate timer that paces the thread
// group's samplers into the load's open model; the others are listed.
func (im *importer) rateTimer() {
	timers := slices.Clone(im.rateTimers)
	slices.SortStableFunc(timers, func(a, b *element) int { return a.line() - b.line() })
	l := &im.res.Load
	for _, t := range timers {
		k := im.rateSteps[t]
		switch {
		case k == 0:
			im.skip(t, "it paces no HTTP Request of the thread group that was translated")
			continue
		case l.Open != nil:
			im.skip(t, "a second rate timer: the open model has one rate, given by %s %q (line %d)", l.Open.Timer, l.Open.Name, l.Open.Line)
			continue
		}
		p, ok := im.profileOf(t)
		if !ok {
			continue
		}
		im.reported[t] = true
		l.Open = im.openOf(t, p, k)
		im.res.Became = append(im.res.Became, Problem{Name: t.name(), Type: t.typ(), Line: t.line(), Reason: "→ " + strings.Join(l.Open.Report, "; ")})
	}
	if l.Open != nil {
		im.note("a rate timer paces JMeter's samples (requests) one by one; the open model starts whole iterations at the rate (the samples' rate over the steps per iteration) and runs an iteration's steps one after another")
		im.note("the open model sends at its rate whether or not responses have come back, and times each request from when it was due; JMeter's threads wait for their responses, so a slow server slowed JMeter down")
	}
}

// number reads a rate timer's numeric property: a number or
// ${__P(name,number)}; def where the property is absent. false (the
// timer listed) when it is neither or below min.
func (im *importer) number(t *element, name, what, def string, min float64) (float64, bool) {
	raw := t.str(name)
	if raw == "" {
		raw = def
	}
	v, from, ok := im.literal(t, raw)
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if !ok || err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < min {
		im.skip(t, "%s %q is not a number of at least %g or ${__P(name,number)}", what, raw, min)
		return 0, false
	}
	if from != "" {
		im.res.Load.From = append(im.res.Load.From, fmt.Sprintf("%s from %s", what, from))
	}
	return f, true
}

// profileOf reads a rate timer's rate of samples.
func (im *importer) profileOf(t *element) (profile, bool) {
	users := float64(im.res.Load.Users)
	switch t.typ() {
	case tagConstThroughput:
		tput, ok1 := im.number(t, "throughput", "the target throughput", "", 0)
		mode, ok2 := im.number(t, "calcMode", "the calculation mode", "0", 0)
		if !ok1 || !ok2 {
			return profile{}, false
		}
		if mode != math.Trunc(mode) || int(mode) >= len(calcModes) {
			im.skip(t, "calculation mode %g is not one of JMeter's (0 to 4)", mode)
			return profile{}, false
		}
		if tput <= 0 {
			im.skip(t, "a target throughput of 0 samples per minute sends nothing")
			return profile{}, false
		}
		p := profile{rate: tput / 60, arrivals: load.Even,
			what: fmt.Sprintf("%s samples/min based on %s", fmtNum(tput), calcModes[int(mode)])}
		if mode == 0 {
			p.rate *= users
			p.what += fmt.Sprintf(", x %d threads", int(users))
		}
		if mode == 1 || mode == 3 {
			im.note("Constant Throughput Timer %q shares its rate among the active threads of every thread group; the scenario has this thread group's only", t.name())
		}
		return p, true
	case tagPreciseThroughput:
		tput, ok1 := im.number(t, "throughput", "the target throughput", "", 0)
		period, ok2 := im.number(t, "throughputPeriod", "the throughput period", "3600", 1e-9)
		batch, ok3 := im.number(t, "batchSize", "the batch size", "1", 1)
		seed, ok4 := im.number(t, "randomSeed", "the random seed", "0", math.Inf(-1))
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return profile{}, false
		}
		if tput <= 0 {
			im.skip(t, "a target throughput of 0 samples sends nothing")
			return profile{}, false
		}
		if batch > 1 {
			im.note("Precise Throughput Timer %q: batches of %g samples (batchSize) are not translated: the arrivals come one by one, at the same rate", t.name(), batch)
		}
		p := profile{rate: tput / period, arrivals: load.Poisson,
			what: fmt.Sprintf("%s samples per %ss, as a Poisson process like JMeter's schedule", fmtNum(tput), fmtNum(period))}
		if seed != 0 {
			p.seed = uint64(int64(seed))
			p.what += fmt.Sprintf(" (seed %d)", int64(seed))
		} else {
			im.note("Precise Throughput Timer %q draws a new random seed each run; the open model's Poisson arrivals take --arrival-seed (1 unless given)", t.name())
		}
		return p, true
	case tagShaping:
		return im.shaping(t)
	}
	return profile{}, false
}

// shaping reads a Throughput Shaping Timer's load_profile: rows of start
// rate, end rate and duration (seconds), each a straight line.
func (im *importer) shaping(t *element) (profile, bool) {
	coll := prop(t.n, "load_profile")
	if coll == nil || len(coll.kids) == 0 {
		im.skip(t, "the load profile has no rows")
		return profile{}, false
	}
	p := profile{arrivals: load.Even}
	prev, jumps, lo, hi := 0.0, 0, math.Inf(1), 0.0
	for i, row := range coll.kids {
		if len(row.kids) != 3 {
			im.skip(t, "row %d of the load profile has %d values, want start RPS, end RPS and duration", i+1, len(row.kids))
			return profile{}, false
		}
		var v [3]float64
		for j, what := range []string{"start RPS", "end RPS", "duration"} {
			raw := strings.TrimSpace(row.kids[j].text)
			s, from, ok := im.literal(t, raw)
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if !ok || err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || j == 2 && f <= 0 {
				im.skip(t, "row %d of the load profile: the %s %q is not a number (above 0 for a duration) or ${__P(name,number)}", i+1, what, raw)
				return profile{}, false
			}
			if from != "" {
				im.res.Load.From = append(im.res.Load.From, fmt.Sprintf("row %d's %s from %s", i+1, what, from))
			}
			v[j] = f
		}
		start, end, d := v[0], v[1], time.Duration(v[2]*float64(time.Second))
		if i == 0 {
			p.rate = start
		} else if start != prev {
			// Stages move in straight lines and last a while: a jump
			// becomes a second's climb.
			p.stages = append(p.stages, load.Stage{Duration: time.Second, Target: start})
			jumps++
		}
		p.stages = append(p.stages, load.Stage{Duration: d, Target: end})
		prev = end
		lo, hi = min(lo, start, end), max(hi, start, end)
	}
	if hi == 0 {
		im.skip(t, "every rate of the load profile is 0")
		return profile{}, false
	}
	p.what = fmt.Sprintf("%d row%s, %s to %s samples/s", len(coll.kids), plural(len(coll.kids)), fmtNum(lo), fmtNum(hi))
	if jumps > 0 {
		what := "the jump is a 1s stage to the new rate, and the profile lasts 1s longer"
		if jumps > 1 {
			what = fmt.Sprintf("each of the %d jumps is a 1s stage to the new rate, and the profile lasts %ds longer", jumps, jumps)
		}
		im.note("Throughput Shaping Timer %q: where a row starts at another rate than the row before ends, JMeter jumps; a stage moves in a straight line and lasts a while, so %s", t.name(), what)
	}
	return p, true
}

// openOf makes the open model of profile p, whose timer paces k of the
// steps of each iteration.
func (im *importer) openOf(t *element, p profile, k int) *Open {
	l := &im.res.Load
	o := &Open{Timer: rateTimerNames[t.typ()], Name: t.name(), Line: t.line(), Arrivals: p.arrivals, Seed: p.seed, Connections: l.Users}
	if l.Users > load.DefaultMaxInflight {
		o.MaxInflight = l.Users
	}
	perIter := float64(k)
	o.Rate = p.rate / perIter
	for _, s := range p.stages {
		o.Stages = append(o.Stages, load.Stage{Duration: s.Duration, Target: s.Target / perIter})
	}
	steps := fmt.Sprintf("%d step%s per iteration", k, plural(k))
	if k < len(im.steps) {
		steps = fmt.Sprintf("%d of the %d steps of an iteration in its scope", k, len(im.steps))
	}
	if len(o.Stages) > 0 {
		lo, hi := o.Rate, o.Rate
		for _, s := range o.Stages {
			lo, hi = min(lo, s.Target), max(hi, s.Target)
		}
		o.Report = append(o.Report, fmt.Sprintf("open model, %d stages, %s to %s iterations/s (%s; %s), %s arrivals over a pool of %d connections (the threads)",
			len(o.Stages), fmtNum(lo), fmtNum(hi), p.what, steps, o.Arrivals, o.Connections))
	} else {
		o.Report = append(o.Report, fmt.Sprintf("open model at %s iterations/s (%s: %s samples/s; %s), %s arrivals over a pool of %d connections (the threads)",
			fmtNum(o.Rate), p.what, fmtNum(p.rate), steps, o.Arrivals, o.Connections))
	}
	im.length(o, t)
	if l.RampUp > 0 {
		im.note("thread group %q: the ramp-up (%s) is not translated: the open model's arrivals come at the rate from the start", l.ThreadGroup, fmtDuration(l.RampUp))
	}
	o.Report = append(o.Report, im.held(o))
	return o
}

// length sets how long the open model runs: the stages (cut at the
// thread group's duration, which stops JMeter sooner), the thread
// group's duration, or the iterations its loops make at the rate.
func (im *importer) length(o *Open, t *element) {
	l := im.res.Load
	switch {
	case len(o.Stages) > 0:
		if l.Duration > 0 && l.Duration < o.Length() {
			im.note("Throughput Shaping Timer %q: its profile lasts %s, the thread group's duration %s, which stops JMeter first: the stages are cut there", t.name(), fmtDuration(o.Length()), fmtDuration(l.Duration))
			o.Stages = cutStages(o.Rate, o.Stages, l.Duration)
		}
		if l.Iterations > 0 {
			im.note("thread group %q: JMeter stops after %d threads x %d loops, perhaps before the profile ends; the stages run the whole profile", l.ThreadGroup, l.Users, l.Iterations)
		}
	case l.Duration > 0:
		o.Duration = l.Duration
	case l.Iterations > 0:
		n := l.Users * l.Iterations
		// As many iterations as JMeter's loops made: n at the rate.
		o.Duration = max(time.Millisecond, time.Duration(float64(n)/o.Rate*float64(time.Second)).Round(time.Millisecond))
		o.Comments = append(o.Comments, fmt.Sprintf("JMeter ran %d threads x %d loops = %d iterations: at %s/s, %s", l.Users, l.Iterations, n, fmtNum(o.Rate), fmtDuration(o.Duration)))
	default:
		o.Duration = time.Minute
		o.Comments = append(o.Comments, "no scheduler in the plan: a duration is needed (60s here)")
	}
}

// cutStages is stages (from rate) cut at d, the last one at the rate it
// has reached there.
func cutStages(rate float64, stages []load.Stage, d time.Duration) []load.Stage {
	var out []load.Stage
	from := rate
	for _, s := range stages {
		if d <= 0 {
			break
		}
		if s.Duration > d {
			frac := float64(d) / float64(s.Duration)
			out = append(out, load.Stage{Duration: d, Target: from + (s.Target-from)*frac})
			break
		}
		out = append(out, s)
		d -= s.Duration
		from = s.Target
	}
	return out
}

// held says whether the thread group's threads could have held the
// model's peak rate, by Little's law: R iterations/s, each in flight for
// its pauses and its responses, need R x (pauses + responses) threads.
// No response time is known, so the bound is the one before any.
func (im *importer) held(o *Open) string {
	n := im.res.Load.Users
	var pause time.Duration
	for _, st := range im.steps {
		pause += st.pause
	}
	peak := o.Peak()
	threads := fmt.Sprintf("its %d thread%s", n, plural(n))
	if pause == 0 {
		budget := time.Duration(float64(n) / peak * float64(time.Second))
		return fmt.Sprintf("%s with no pauses are bounded by the response time alone: JMeter held %s iterations/s only while an iteration's responses took under %s in all (Little's law: %s/s x %s = %d threads); showdown's open model holds it whatever they take",
			threads, fmtNum(peak), fmtShort(budget), fmtNum(peak), fmtShort(budget), n)
	}
	most := float64(n) / pause.Seconds()
	s := fmt.Sprintf("%s with %s of Constant Timer per iteration could start at most %s iterations/s before any response time", threads, fmtShort(pause), fmtNum(most))
	if most < peak {
		return s + fmt.Sprintf(": JMeter could not have held %s iterations/s; showdown's open model does", fmtNum(peak))
	}
	budget := time.Duration((float64(n)/peak - pause.Seconds()) * float64(time.Second))
	return s + fmt.Sprintf(", so JMeter would have held %s iterations/s while an iteration's responses took under %s in all (Little's law)", fmtNum(peak), fmtShort(budget))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// fmtNum writes a figure for people: at most three decimals, thousands
// separated (1,000).
func fmtNum(x float64) string {
	s := fmtArg(x)
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// fmtArg writes a figure for a command line: at most three decimals.
func fmtArg(x float64) string {
	return strconv.FormatFloat(math.Round(x*1000)/1000, 'f', -1, 64)
}

// fmtShort writes a duration to the millisecond (to the microsecond
// below one).
func fmtShort(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
