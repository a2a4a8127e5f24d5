package load

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Arrivals is how the open model spaces its arrivals in time.
type Arrivals string

const (
	// Even arrivals come at exact, equal gaps: clockwork, the default.
	Even Arrivals = "even"
	// Poisson arrivals come at random gaps (exponentially distributed,
	// seeded: the same seed gives the same arrivals), as requests from
	// many independent clients do.
	Poisson Arrivals = "poisson"
)

// ParseArrivals reads "even" or "poisson" ("" is even).
func ParseArrivals(s string) (Arrivals, error) {
	switch a := Arrivals(strings.ToLower(strings.TrimSpace(s))); a {
	case "", Even:
		return Even, nil
	case Poisson:
		return Poisson, nil
	}
	return "", fmt.Errorf("arrivals %q: want even or poisson", s)
}

// Stage is one part of a rate that changes over time: the rate moves in
// a straight line from the previous stage's Target (the model's Rate for
// the first) to Target over Duration. A stage whose Target is the rate
// before it holds that rate.
type Stage struct {
	Duration time.Duration
	// Target is the rate at the stage's end, iterations per second.
	Target float64
}

// ParseStages reads stages written as "30s:1000,1m:1000,30s:4000":
// each a duration and the rate at its end.
func ParseStages(s string) ([]Stage, error) {
	var out []Stage
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		d, r, ok := strings.Cut(part, ":")
		dur, err1 := time.ParseDuration(strings.TrimSpace(d))
		rate, err2 := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if !ok || err1 != nil || err2 != nil || dur <= 0 || rate < 0 {
			return nil, fmt.Errorf("stage %d %q: want DURATION:RATE, e.g. 30s:1000 (the rate at the stage's end)", i+1, part)
		}
		out = append(out, Stage{Duration: dur, Target: rate})
	}
	if len(out) == 0 {
		return nil, errors.New("stages: none given; want e.g. 30s:1000,1m:1000")
	}
	return out, nil
}

// Shape says in words how the model's arrivals come: their spacing and
// the connections they are spread over, and the stages.
func (m OpenModel) Shape() string {
	a := m.Arrivals
	if a == "" {
		a = Even
	}
	s := string(a) + " arrivals"
	switch {
	case m.Connections == 1:
		s += " over 1 connection"
	case m.Connections > 1:
		s += fmt.Sprintf(" over a pool of %d connections", m.Connections)
	default:
		s += " over the fewest connections"
	}
	if len(m.Stages) > 0 {
		s += fmt.Sprintf(", in %d stages from %g/s", len(m.Stages), m.Rate)
	}
	return s
}

// Length is how long arrivals are scheduled after the warm-up: the
// stages' sum when there are stages.
func (m OpenModel) Length() time.Duration {
	if len(m.Stages) == 0 {
		return m.Duration
	}
	var d time.Duration
	for _, st := range m.Stages {
		d += st.Duration
	}
	return d
}

// segment is a stretch of the profile whose rate moves in a straight
// line from r0 to r1 (arrivals per ns) over length ns, from ns from t0;
// count0 is the expected arrivals before it.
type segment struct {
	from, length, r0, r1, count0 float64
}

func (g segment) count() float64 { return (g.r0 + g.r1) * g.length / 2 }

// profile is the open model's expected arrivals over time, counted from
// t0: the warm-up at the first rate, then the model's stages (or its
// one rate for its duration). Arrival v (on the axis of expected
// arrivals) is due where the profile's count reaches v.
type profile struct {
	segs []segment
	end  float64 // ns
}

func newProfile(m OpenModel, warm time.Duration) *profile {
	p := &profile{}
	add := func(d time.Duration, r0, r1 float64) {
		if d <= 0 {
			return
		}
		g := segment{from: p.end, length: float64(d), r0: r0 / 1e9, r1: r1 / 1e9}
		if n := len(p.segs); n > 0 {
			g.count0 = p.segs[n-1].count0 + p.segs[n-1].count()
		}
		p.segs = append(p.segs, g)
		p.end += float64(d)
	}
	add(warm, m.Rate, m.Rate)
	if len(m.Stages) == 0 {
		add(m.Duration, m.Rate, m.Rate)
		return p
	}
	from := m.Rate
	for _, st := range m.Stages {
		add(st.Duration, from, st.Target)
		from = st.Target
	}
	return p
}

// at is when arrival v is due, ns from t0; false past the profile's end.
func (p *profile) at(v float64) (float64, bool) {
	for _, g := range p.segs {
		x := v - g.count0
		if x < 0 || x >= g.count() {
			continue
		}
		var tau float64
		if g.r1 == g.r0 {
			tau = x / g.r0
		} else {
			// Solve r0 τ + (r1-r0) τ² / (2 length) = x in the form that
			// holds when r0 is zero.
			a := (g.r1 - g.r0) / (2 * g.length)
			tau = 2 * x / (g.r0 + math.Sqrt(g.r0*g.r0+4*a*x))
		}
		return g.from + min(tau, g.length), true
	}
	return 0, false
}

// expected is the expected arrivals between a and b ns from t0.
func (p *profile) expected(a, b float64) float64 {
	return p.countAt(b) - p.countAt(a)
}

func (p *profile) countAt(t float64) float64 {
	for _, g := range p.segs {
		if t < g.from+g.length {
			tau := max(t-g.from, 0)
			return g.count0 + g.r0*tau + (g.r1-g.r0)*tau*tau/(2*g.length)
		}
	}
	if n := len(p.segs); n > 0 {
		return p.segs[n-1].count0 + p.segs[n-1].count()
	}
	return 0
}

// stream is one sequence of due times of the profile, in order: every
// stride-th arrival from offset (even), or a Poisson process of a
// stride-th of the profile's rate. Streams with offsets 0..stride-1
// together are the profile's arrivals; Poisson streams superpose to a
// Poisson process of the whole rate.
type stream struct {
	p      *profile
	t0     time.Time
	v      float64
	stride float64
	rng    *rand.Rand // nil: even
	due    time.Time  // the next arrival's due time, while ok
	ok     bool
}

// arrivalSeed mixes a model's seed with the stream's place, so that
// every shard and loop draws its own arrivals.
func arrivalSeed(seed uint64, shard, part int) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(shard)<<32|uint64(part)))
}

func (p *profile) stream(t0 time.Time, offset, stride float64, rng *rand.Rand) *stream {
	st := &stream{p: p, t0: t0, v: offset, stride: stride, rng: rng}
	if rng != nil {
		st.v = stride * rng.ExpFloat64()
	}
	st.locate()
	return st
}

func (st *stream) locate() {
	ns, ok := st.p.at(st.v)
	st.ok = ok
	if ok {
		st.due = st.t0.Add(time.Duration(ns))
	}
}

// dueBy reports whether the next arrival is due at or before now.
func (st *stream) dueBy(now time.Time) bool { return st.ok && !st.due.After(now) }

// advance moves to the next arrival.
func (st *stream) advance() {
	if st.rng != nil {
		st.v += st.stride * st.rng.ExpFloat64()
	} else {
		st.v += st.stride
	}
	st.locate()
}

// left counts the arrivals still to come, and takes them: at the end,
// the sends that were due and never started.
func (st *stream) left() int64 {
	var n int64
	for ; st.ok; st.advance() {
		n++
	}
	return n
}
