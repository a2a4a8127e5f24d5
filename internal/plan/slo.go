package plan

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/showdownlab/showdown/internal/located"
)

// Defaults of a plan with an objective (slo) and its capacity search.
const (
	// DefaultSLOErrors is the error rate an objective allows when it
	// names none: 0.1%.
	DefaultSLOErrors = 0.001
	// DefaultResolution is where the bisection stops: the lowest failing
	// rate within 2% of the highest passing one.
	DefaultResolution = 0.02
	// DefaultProbeMin is the shortest counted probe: a percentile over
	// less than two seconds is one burst's.
	DefaultProbeMin = 2 * time.Second
	// DefaultProbeMax caps a probe whose percentile would need longer
	// (p99.9 at 500 req/s needs 200 s): the probe is then short of the
	// samples its rule asks and says so.
	DefaultProbeMax = 30 * time.Second
	// DefaultMaxProbes bounds one arm's probes in one start: bracketing
	// by doubling from half the closed-model throughput and bisecting to
	// 2% takes about 8.
	DefaultMaxProbes = 20
	// DefaultConfirm is how long a found capacity must hold before it is
	// reported. Found with probes of seconds, a capacity near a stall
	// can fail when sustained (bench/README.md, "Where the constants come from"). Meta's DCPerf confirms its searched
	// rate with a 5-minute run.
	DefaultConfirm = 30 * time.Second
	// DefaultProbeConnections is the open-model probes' pool of
	// connections (CapacitySettings.Connections).
	DefaultProbeConnections = 64
	// DefaultCapacityWarmupUsers is the closed-model load an arm warms
	// up at, and its 2 s start-rate probe runs at, when the plan lists no
	// levels (the main job's level).
	DefaultCapacityWarmupUsers = 50
	// SamplesBeyondQuantile is the rule of a probe's length: at least
	// SamplesBeyondQuantile/(1-q) counted samples for its highest
	// percentile q, so that about that many samples lie above it (p99:
	// 10,000 samples, 100 above the p99).
	SamplesBeyondQuantile = 100
)

// SLO is a latency objective: upper limits on latency percentiles (from
// the intended send time, the open model's latency) and on the share of
// requests that fail. In YAML `slo: {p99: 10ms, p99.9: 50ms, errors:
// 0.1%}`. A plan with an slo finds each arm's capacity at it (Capacity),
// and the report calls latency within it acceptable.
type SLO struct {
	// Percentiles are the latency limits, lowest percentile first.
	Percentiles []PercentileLimit `json:"percentiles"`
	// Errors is the highest error rate allowed (0.001 is 0.1%).
	Errors Fraction `json:"errors"`
	// errorsSet is whether the plan names errors; problems what
	// UnmarshalYAML found wrong, for validate.
	errorsSet bool
	line      int
	problems  []*located.Error
}

// PercentileLimit is one percentile's limit: p99 ≤ 10ms is {99, 10ms}.
type PercentileLimit struct {
	// Q is the percentile, 0 < Q < 100 (99.9 for p99.9).
	Q     float64  `json:"q"`
	Limit Duration `json:"limit"`
}

// Name is the percentile as a plan writes it: "p99", "p99.9".
func (pl PercentileLimit) Name() string { return "p" + strconv.FormatFloat(pl.Q, 'f', -1, 64) }

var percentileKey = regexp.MustCompile(`^p([0-9]+(?:\.[0-9]+)?)$`)

// UnmarshalYAML reads a mapping of pNN or pNN.N to durations and errors
// to a percentage; what is wrong is kept for validate, located.
func (s *SLO) UnmarshalYAML(n *yaml.Node) error {
	s.line = n.Line
	bad := func(line int, field, hint, format string, args ...any) {
		s.problems = append(s.problems, &located.Error{Line: line, Field: field, Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
	if n.Kind != yaml.MappingNode {
		bad(n.Line, "", "e.g. slo: {p99: 10ms, errors: 0.1%}", "slo is a mapping of percentiles and errors")
		return nil
	}
	for k := 0; k+1 < len(n.Content); k += 2 {
		key, val := n.Content[k], n.Content[k+1]
		if key.Value == "errors" {
			var f Fraction
			if err := val.Decode(&f); err != nil || f < 0 || f >= 1 {
				bad(val.Line, key.Value, "a percentage from 0% to under 100%, e.g. errors: 0.1%", "errors %q is not a percentage from 0%% to under 100%%", val.Value)
				continue
			}
			s.Errors, s.errorsSet = f, true
			continue
		}
		m := percentileKey.FindStringSubmatch(key.Value)
		if m == nil {
			bad(key.Line, key.Value, "percentiles are written p50, p99, p99.9; the error rate is errors", "unknown key %q", key.Value)
			continue
		}
		q, _ := strconv.ParseFloat(m[1], 64)
		if q <= 0 || q >= 100 {
			bad(key.Line, key.Value, "a percentile above 0 and below 100, e.g. p99 or p99.9", "percentile %s is out of range", key.Value)
			continue
		}
		d, err := time.ParseDuration(val.Value)
		switch {
		case err != nil || val.Kind != yaml.ScalarNode:
			bad(val.Line, key.Value, "a duration, e.g. 10ms or 1.5s", "%q is not a duration", val.Value)
			continue
		case d <= 0:
			bad(val.Line, key.Value, "a positive duration, e.g. 10ms", "limit %v must be positive", d)
			continue
		}
		for _, pl := range s.Percentiles {
			if pl.Q == q {
				bad(key.Line, key.Value, "each percentile once", "%s is given twice", key.Value)
			}
		}
		s.Percentiles = append(s.Percentiles, PercentileLimit{Q: q, Limit: Duration(d)})
	}
	sort.SliceStable(s.Percentiles, func(i, j int) bool { return s.Percentiles[i].Q < s.Percentiles[j].Q })
	if len(s.Percentiles) == 0 && len(s.problems) == 0 {
		bad(n.Line, "", "e.g. slo: {p99: 10ms, errors: 0.1%}", "an objective needs at least one percentile")
	}
	return nil
}

// String is the objective as people read it: "p99 ≤ 10ms, errors ≤ 0.1%".
func (s SLO) String() string {
	var parts []string
	for _, pl := range s.Percentiles {
		parts = append(parts, fmt.Sprintf("%s ≤ %v", pl.Name(), time.Duration(pl.Limit)))
	}
	parts = append(parts, "errors ≤ "+s.Errors.String())
	return strings.Join(parts, ", ")
}

// Highest is the objective's highest percentile as a fraction (0.999 for
// p99.9); 0 without percentiles.
func (s SLO) Highest() float64 {
	if len(s.Percentiles) == 0 {
		return 0
	}
	return s.Percentiles[len(s.Percentiles)-1].Q / 100
}

// Tightest is the lowest latency limit of the objective.
func (s SLO) Tightest() time.Duration {
	var t time.Duration
	for _, pl := range s.Percentiles {
		if d := time.Duration(pl.Limit); t == 0 || d < t {
			t = d
		}
	}
	return t
}

// Limit is the objective's limit at percentile q (99 for p99), if any.
func (s SLO) Limit(q float64) (time.Duration, bool) {
	for _, pl := range s.Percentiles {
		if pl.Q == q {
			return time.Duration(pl.Limit), true
		}
	}
	return 0, false
}

// CapacitySettings tune the search for each arm's capacity at the plan's
// objective (`capacity:` in a plan with an slo).
type CapacitySettings struct {
	// Resolution is where bisection stops: (lowest fail - highest pass) /
	// highest pass at most this (`resolution: 2%`).
	Resolution Fraction `yaml:"resolution" json:"resolution"`
	// StartRate is the first probe's rate (requests per second); 0
	// derives it: half the throughput of a 2 s closed-model probe at the
	// warm-up's users, in each start.
	StartRate float64 `yaml:"start_rate" json:"start_rate,omitempty"`
	// ProbeMin and ProbeMax bound a probe's counted length; between
	// them ProbeSeconds's rule decides.
	ProbeMin Duration `yaml:"probe_min" json:"probe_min"`
	ProbeMax Duration `yaml:"probe_max" json:"probe_max"`
	// MaxProbes bounds one arm's probes in one start.
	MaxProbes int `yaml:"max_probes" json:"max_probes"`
	// Confirm is how long the confirmation runs hold a found capacity
	// before it is reported: at the interval's lower end (or the lowest
	// rate every start held, when higher), stepping back
	// until one holds (`confirm: 30s`).
	Confirm Duration `yaml:"confirm" json:"confirm"`
	// Connections is the open-model probes' pool (load.MaxInflight):
	// a fixed pool, as wrk2's -c, so that a stall of the service queues
	// sends at the generator, where their latency still runs from their
	// due time, instead of opening up to a thousand connections, which
	// can tip a service near its capacity into an overload it does not
	// leave within the probe.
	Connections int `yaml:"connections" json:"connections,omitempty"`
	// Model is the search's model, from the plan's load.model: "open"
	// finds the highest arrival rate (req/s) meeting the objective;
	// "closed" (written load.model: closed, with a think time above
	// zero) the most users. Its warm-up runs the plan's load either way.
	Model string `yaml:"-" json:"model,omitempty"`
}

// Unit is the unit of a capacity the search finds: "users" for the
// closed model, "req/s" for the open.
func (c CapacitySettings) Unit() string {
	if c.Model == "closed" {
		return "users"
	}
	return "req/s"
}

// ProbeSeconds is the counted length of a probe at rate for an objective
// whose highest percentile is q (0.99): long enough for
// SamplesBeyondQuantile/(1-q) samples at that rate (p99: 10,000; at 2,000
// req/s that is 5 s), at least ProbeMin and at most ProbeMax. The plan's
// settle (1 s by default) runs before it, uncounted. Short reports a
// probe that ProbeMax cut below the rule.
func (c CapacitySettings) ProbeSeconds(rate, q float64) (d time.Duration, short bool) {
	lo, hi := time.Duration(c.ProbeMin), time.Duration(c.ProbeMax)
	need := lo
	if rate > 0 && q > 0 && q < 1 {
		samples := math.Round(SamplesBeyondQuantile / (1 - q))
		need = max(lo, time.Duration(math.Ceil(samples/rate*1e3))*time.Millisecond)
	}
	if need > hi {
		return hi, true
	}
	return need, false
}

// Sizing is the load a deployment must carry, for the report's sizing
// table: a rate in requests per second, or daily page views with the
// requests each view makes (the SKU-lookup source's sizing).
type Sizing struct {
	Rate            float64 `yaml:"rate" json:"rate,omitempty"`
	DailyPageViews  float64 `yaml:"daily_page_views" json:"daily_page_views,omitempty"`
	RequestsPerView float64 `yaml:"requests_per_view" json:"requests_per_view,omitempty"`
	// Servers shares the load; each is sized for its share (default 1).
	Servers int `yaml:"servers" json:"servers,omitempty"`
	// Prices turn a plan with at_rate's cores and memory into money a
	// month; there is no default price.
	Prices *Prices `yaml:"prices" json:"prices,omitempty"`
}

// Prices are what a vCPU and a GiB of memory cost an hour, in one
// currency (a provider's on-demand list price, say).
type Prices struct {
	VCPUHour float64 `yaml:"vcpu_hour" json:"vcpu_hour"`
	GiBHour  float64 `yaml:"gib_hour" json:"gib_hour"`
	// Currency names it in the report ("USD" when empty).
	Currency string `yaml:"currency" json:"currency,omitempty"`
}

// HoursPerMonth is a month's hours in the price a month (365 × 24 / 12).
const HoursPerMonth = 730

// PeakShare and BusyShare are the SKU-lookup source's assumptions: 80%
// of a day's views arrive within 40% of its seconds.
const (
	PeakShare = 0.8
	BusyShare = 0.4
)

// RequestsPerSecond is the rate each server must carry: Rate / Servers,
// or with page views the source's formula 0.8 × daily page views ×
// requests per view / (86,400 × 0.4) / servers.
func (s Sizing) RequestsPerSecond() float64 {
	servers := float64(max(s.Servers, 1))
	if s.Rate > 0 {
		return s.Rate / servers
	}
	rpv := s.RequestsPerView
	if rpv <= 0 {
		rpv = 1
	}
	return PeakShare * s.DailyPageViews * rpv / (86_400 * BusyShare) / servers
}

// String says the load as the plan gives it.
func (s Sizing) String() string {
	servers := ""
	if s.Servers > 1 {
		servers = fmt.Sprintf(" over %d servers", s.Servers)
	}
	if s.Rate > 0 {
		return fmt.Sprintf("%.0f req/s%s", s.Rate, servers)
	}
	rpv := s.RequestsPerView
	if rpv <= 0 {
		rpv = 1
	}
	return fmt.Sprintf("%.0f daily page views × %g requests per view (0.8 of them in 0.4 of the day: %.0f req/s)%s", s.DailyPageViews, rpv, s.RequestsPerSecond()*float64(max(s.Servers, 1)), servers)
}

func (p *Plan) applyCapacityDefaults() {
	if p.SLO == nil {
		return
	}
	if !p.SLO.errorsSet {
		p.SLO.Errors = DefaultSLOErrors
	}
	c := &p.Capacity
	if c.Resolution == 0 {
		c.Resolution = DefaultResolution
	}
	if c.ProbeMin == 0 {
		c.ProbeMin = Duration(DefaultProbeMin)
	}
	if c.ProbeMax == 0 {
		c.ProbeMax = Duration(DefaultProbeMax)
	}
	if c.MaxProbes == 0 {
		c.MaxProbes = DefaultMaxProbes
	}
	if c.Confirm == 0 {
		c.Confirm = Duration(DefaultConfirm)
	}
	if c.Connections == 0 {
		c.Connections = DefaultProbeConnections
	}
	// A plan that writes load.model: closed searches users; otherwise
	// (closed being only the warm-up's default) the open model's rate.
	c.Model = "open"
	if p.has("load", "model") && p.Load.Model == "closed" {
		c.Model = "closed"
	}
	// The levels of a capacity plan are only its warm-up's load.
	if len(p.Load.Levels) == 0 {
		p.Load.Levels = []int{DefaultCapacityWarmupUsers}
		if !p.has("load", "model") {
			p.Load.Model = "closed"
		}
	}
}

func (p *Plan) validateCapacity(add func(path []string, hint, format string, args ...any)) []*Error {
	var errs []*Error
	if s := p.SLO; s != nil {
		for _, e := range s.problems {
			field := "slo"
			if e.Field != "" {
				field += "." + e.Field
			}
			errs = append(errs, &Error{File: p.File, Line: e.Line, Field: field, Msg: e.Msg, Hint: e.Hint})
		}
		if len(p.Load.Levels) > 1 {
			add([]string{"load", "levels"}, "one level: the load each arm warms up at (or none: 50 users)", "a plan with slo finds its own rates; its one level is the warm-up's load")
		}
		if p.Load.Iterations > 0 {
			add([]string{"load", "iterations"}, "remove it", "a plan with slo runs no iterations per user")
		}
		if p.Capacity.Model == "closed" {
			if p.Load.ThinkTime <= 0 {
				add([]string{"load", "think_time"}, "e.g. think_time: 10ms; or leave load.model out to find the open model's rate", "a closed-model capacity (load.model: closed) needs a think time above zero: without one, users only queue, and the most users meeting the objective says nothing a rate does not")
			}
			if p.Capacity.StartRate > 0 {
				add([]string{"capacity", "start_rate"}, "remove it: a closed-model search starts at the warm-up's users (load.levels)", "start_rate is a rate; a closed-model capacity is in users")
			}
		}
	}
	c := p.Capacity
	set := p.has("capacity")
	if set && p.SLO == nil {
		add([]string{"capacity"}, "add an objective, e.g. slo: {p99: 10ms, errors: 0.1%}", "capacity settings need an slo")
	}
	if c.Resolution < 0 || c.Resolution > 0.5 || set && p.has("capacity", "resolution") && c.Resolution == 0 {
		add([]string{"capacity", "resolution"}, "e.g. resolution: 2%", "resolution must be above 0%% and at most 50%%, not %v", c.Resolution)
	}
	if c.StartRate < 0 {
		add([]string{"capacity", "start_rate"}, "requests per second, or leave it out to derive it", "start_rate %g must not be negative", c.StartRate)
	}
	if p.SLO != nil && (c.Confirm < Duration(time.Second) || c.Confirm > Duration(10*time.Minute)) {
		add([]string{"capacity", "confirm"}, "e.g. confirm: 30s", "confirm must be between 1s and 10m, not %v", time.Duration(c.Confirm))
	}
	if c.ProbeMin < 0 || c.ProbeMax < 0 || c.ProbeMax < c.ProbeMin {
		add([]string{"capacity", "probe_max"}, "e.g. probe_min: 2s, probe_max: 30s", "probe_min %v and probe_max %v must not be negative, and probe_max not below probe_min", time.Duration(c.ProbeMin), time.Duration(c.ProbeMax))
	}
	if c.Connections < 0 || c.Connections > 100_000 {
		add([]string{"capacity", "connections"}, "e.g. connections: 64", "connections %d must be between 1 and 100000", c.Connections)
	}
	if c.MaxProbes < 0 || c.MaxProbes > 100 {
		add([]string{"capacity", "max_probes"}, "e.g. max_probes: 20", "max_probes %d must be between 1 and 100", c.MaxProbes)
	}
	if s := p.Sizing; s != nil {
		switch {
		case p.SLO == nil && p.AtRate == nil:
			add([]string{"sizing"}, "add an objective, e.g. slo: {p99: 10ms}, or at_rate: auto", "sizing needs an slo (it is sized from the capacity at it) or at_rate (from the CPU per request at the rate)")
		case s.Prices != nil && (s.Prices.VCPUHour < 0 || s.Prices.GiBHour < 0 || s.Prices.VCPUHour == 0 && s.Prices.GiBHour == 0):
			add([]string{"sizing", "prices"}, "e.g. prices: {vcpu_hour: 0.04, gib_hour: 0.005}", "prices need vcpu_hour or gib_hour, neither negative")
		case p.Capacity.Model == "closed":
			add([]string{"sizing"}, "remove it, or leave load.model out to find the open model's rate", "sizing is from a capacity in req/s; a closed-model capacity is in users")
		case s.Rate < 0 || s.DailyPageViews < 0 || s.RequestsPerView < 0 || s.Servers < 0:
			add([]string{"sizing"}, "", "rate, daily_page_views, requests_per_view and servers must not be negative")
		case (s.Rate > 0) == (s.DailyPageViews > 0):
			add([]string{"sizing"}, "e.g. sizing: {rate: 5000} or sizing: {daily_page_views: 10000000, requests_per_view: 3}", "give either rate or daily_page_views")
		case s.Rate > 0 && s.RequestsPerView > 0:
			add([]string{"sizing", "requests_per_view"}, "use it with daily_page_views", "requests_per_view goes with daily_page_views, not rate")
		}
	}
	return errs
}
