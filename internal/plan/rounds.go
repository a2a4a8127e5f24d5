package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Defaults of interleaved rounds (Rounds).
const (
	// DefaultPrecision is the half-width every adjacent pair's ratio
	// interval is meant to reach: ±3%.
	DefaultPrecision = 0.03
	// DefaultRound is one arm's measured interval in a round: long enough
	// for thousands of requests at the rates these stacks serve (so the
	// round's own sampling error is far below the machine's noise), short
	// enough that six arms measure within one drift of the machine (a
	// round of six arms takes 18 s with the settle).
	DefaultRound = 2 * time.Second
	// DefaultSettle is the uncounted load a thawed arm gets before its
	// interval counts: its threads are scheduled again and its first
	// second's throughput can be checked against the interval's.
	DefaultSettle = time.Second
	// DefaultMeasureMax caps the rounds of one comparison over all its
	// starts (settling included).
	DefaultMeasureMax = 3 * time.Minute
	// DefaultInterleavedTrials is the minimum of fresh starts when the
	// plan compares in rounds and names no trials (Plan.MinStarts): one
	// start's rounds say nothing of how a second start differs.
	DefaultInterleavedTrials = 2
	// MinRounds is the fewest rounds of a start before its rounds may
	// stop: two mirrored pairs (each even round measures the arms in the
	// reverse of the odd round before it), the fewest whose pairs have a
	// spread to estimate. Past it a start stops after a complete pair,
	// unless its budget runs out.
	MinRounds = 4
)

// Rounds is how a plan's implementations are compared (its fields sit at
// the top of a plan): all started,
// warmed and kept alive, then measured in rounds, each round every arm
// once in a fresh random order while the others are frozen.
type Rounds struct {
	// Interleave is whether comparisons are measured in rounds (the
	// default); false keeps sequential measurement: every start measured
	// alone, one after the other.
	Interleave *bool `yaml:"interleave" json:"interleave,omitempty"`
	// Precision is the half-width, relative to the ratio, that rounds and
	// starts go on for (`precision: 3%`).
	Precision Fraction `yaml:"precision" json:"precision"`
	// Round is one arm's measured interval; Settle the uncounted load
	// after its thaw.
	Round  Duration `yaml:"round" json:"round"`
	Settle Duration `yaml:"settle" json:"settle"`
	// MeasureMax caps the rounds of one comparison over all its starts.
	MeasureMax Duration `yaml:"measure_max" json:"measure_max"`
	// Budget is the time the measurement may take after the builds
	// (starts, warm-ups and rounds; 0: none). With a budget, starts go
	// on past the plan's trials (up to trials_max) while a pair is not
	// within the precision and another start fits, and each start's
	// rounds take the share the remaining starts leave; the verdict says
	// what precision the budget bought.
	Budget Duration `yaml:"budget" json:"budget,omitempty"`
	// AA adds the first implementation a second time (same build, its own
	// start): the machine checked against itself.
	AA bool `yaml:"aa" json:"aa,omitempty"`
	// Neighbour runs a noisy neighbour on the service CPUs while the
	// arms are measured: a CPU and memory-bandwidth hog switched on and
	// off at random (package neighbour), for testing the method.
	Neighbour bool `yaml:"neighbour" json:"neighbour,omitempty"`
	// NeighbourTurns bounds the time between two turns of the
	// neighbour's drift, [min, max] (neighbour.DefaultMinPeriod and
	// DefaultMaxPeriod, 5-20 s, when empty): longer turns drift more
	// slowly, as a shared host's load does over minutes.
	NeighbourTurns []Duration `yaml:"neighbour_turns" json:"neighbour_turns,omitempty"`
}

// Interleaved reports whether the plan's comparisons run in interleaved
// rounds, and if not, why not: they need two arms or more, a warm-up,
// levels bounded by time, no database dimension and one start serving
// every workload.
func (p *Plan) Interleaved() (bool, string) {
	switch {
	case p.Rounds.Interleave != nil && !*p.Rounds.Interleave:
		return false, "the plan says interleave: false"
	case len(p.Arms()) < 2:
		return false, "one implementation: nothing to interleave"
	case p.Load.Iterations > 0:
		return false, "levels bounded by iterations run once, sequentially"
	case len(p.Database.SKUIndexes) > 1:
		return false, "a database dimension is measured sequentially"
	case p.ServiceRestart == "workload":
		return false, "service_restart: workload measures cold starts, sequentially"
	}
	for _, im := range p.Implementations {
		if p.WarmupOf(im).None() {
			return false, im.ID() + " has warmup: none (a cold variant), measured sequentially"
		}
	}
	return true, ""
}

// MinStarts is how many fresh starts of every arm a local run measures
// at least: the plan's trials, or DefaultInterleavedTrials when it
// compares in interleaved rounds or finds capacities, and names none (a
// capacity's interval is over starts; a Kubernetes run keeps
// Trials).
func (p *Plan) MinStarts() int {
	if ok, _ := p.Interleaved(); (ok || p.SLO != nil) && !p.trialsSet && !p.TrialsAuto {
		return max(p.Trials, DefaultInterleavedTrials)
	}
	return p.Trials
}

// MaxStarts is the most fresh starts a local run measures.
func (p *Plan) MaxStarts() int { return max(p.TrialsMax, p.MinStarts()) }

// AAVariant is the variant name of the A/A arm.
const AAVariant = "aa"

// Arms are the implementations compared: the plan's, each at each of its
// cores (go-stdlib@1, go-stdlib@2, ...), and with AA the first one again
// (at the first core count) as variant AAVariant.
func (p *Plan) Arms() []Implementation {
	var out []Implementation
	for _, im := range p.Implementations {
		if len(p.Cores) == 0 {
			out = append(out, im)
			continue
		}
		for _, n := range p.Cores {
			at := im
			at.Cores = n
			out = append(out, at)
		}
	}
	if p.Rounds.AA && len(p.Implementations) > 0 {
		aa := p.Implementations[0]
		aa.Variant = strings.Trim(aa.Variant+"-"+AAVariant, "-")
		if len(p.Cores) > 0 {
			aa.Cores = p.Cores[0]
		}
		out = append(out, aa)
	}
	return out
}

// ArmIDs are the IDs the records of a run of p carry, in plan order:
// each arm's ID, or on Kubernetes (onKubernetes) with several replica
// counts each arm at each count (ReplicaID); a local run ignores
// replicas.
func (p *Plan) ArmIDs(onKubernetes bool) []string {
	var out []string
	for _, im := range p.Arms() {
		if !onKubernetes || len(p.Replicas) < 2 {
			out = append(out, im.ID())
			continue
		}
		for _, n := range p.Replicas {
			out = append(out, ReplicaID(im.ID(), n))
		}
	}
	return out
}

// ReplicaID is the record ID of implementation id run at n replicas when
// a plan has several replica counts: go-stdlib@x2.
func ReplicaID(id string, n int) string { return id + "@x" + strconv.Itoa(n) }

func (p *Plan) applyRoundDefaults() {
	r := &p.Rounds
	if r.Precision == 0 {
		r.Precision = DefaultPrecision
	}
	if r.Round == 0 {
		r.Round = Duration(DefaultRound)
	}
	if r.Settle == 0 {
		r.Settle = Duration(DefaultSettle)
	}
	if r.MeasureMax == 0 {
		r.MeasureMax = Duration(DefaultMeasureMax)
		if r.Budget > 0 {
			r.MeasureMax = r.Budget // the budget bounds the rounds instead
		}
	}
}

func (p *Plan) validateRounds(add func(path []string, hint, format string, args ...any)) {
	r := p.Rounds
	if r.Precision < 0 || r.Precision >= 1 {
		add([]string{"precision"}, "e.g. precision: 3%", "precision must be between 0%% and 100%%, not %v", r.Precision)
	}
	if r.Round < Duration(500*time.Millisecond) || r.Round > Duration(time.Minute) {
		add([]string{"round"}, "e.g. round: 2s", "round must be between 500ms and 1m, not %v", time.Duration(r.Round))
	}
	if r.Settle < 0 || r.Settle > Duration(30*time.Second) {
		add([]string{"settle"}, "e.g. settle: 1s", "settle must be between 0 and 30s, not %v", time.Duration(r.Settle))
	}
	if r.MeasureMax < r.Round {
		add([]string{"measure_max"}, "e.g. measure_max: 3m", "measure_max %v is shorter than one round", time.Duration(r.MeasureMax))
	}
	if r.Budget != 0 && r.Budget < Duration(time.Minute) {
		add([]string{"budget"}, "e.g. budget: 12m", "budget %v is less than a minute: a start and its warm-ups take longer", time.Duration(r.Budget))
	}
	if r.AA && len(p.Implementations) == 0 {
		add([]string{"aa"}, "list an implementation", "aa needs an implementation to start twice")
	}
	if t := r.NeighbourTurns; len(t) > 0 {
		switch {
		case !r.Neighbour:
			add([]string{"neighbour_turns"}, "add neighbour: true, or remove neighbour_turns", "neighbour_turns without neighbour: true has no neighbour to turn")
		case len(t) != 2 || t[0] < Duration(time.Second) || t[1] < t[0] || t[1] > Duration(time.Hour):
			add([]string{"neighbour_turns"}, "e.g. neighbour_turns: [30s, 2m]", "neighbour_turns must be [min, max] with 1s <= min <= max <= 1h, not %v", t)
		}
	}
}

// Fraction is a share written as a percentage ("3%") or a number (0.03).
type Fraction float64

// UnmarshalYAML reads "3%" or 0.03.
func (f *Fraction) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a percentage (examples: 3%%, 0.03)", n.Line, n.Value)}}
	}
	if pct {
		v /= 100
	}
	*f = Fraction(v)
	return nil
}

// String writes the fraction as a percentage.
func (f Fraction) String() string {
	return strconv.FormatFloat(float64(f)*100, 'g', 4, 64) + "%"
}
