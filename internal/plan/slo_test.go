package plan

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

const capacityBase = `name: c
implementations: [go-stdlib, java-spring]
workloads: [string]
`

func TestParseSLO(t *testing.T) {
	p, err := ParsePlan("c.yaml", []byte(capacityBase+"slo: {p99.9: 50ms, p99: 10ms, errors: 0.5%}\n"), testCatalog, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	s := p.SLO
	checks := []struct {
		name      string
		got, want any
	}{
		// Percentiles are kept lowest first, whatever the plan's order.
		{"first percentile", s.Percentiles[0].Q, 99.0},
		{"its limit", time.Duration(s.Percentiles[0].Limit), 10 * time.Millisecond},
		{"second percentile", s.Percentiles[1].Name(), "p99.9"},
		{"errors as a fraction", float64(s.Errors), 0.005},
		{"highest percentile", math.Round(s.Highest()*1e9) / 1e9, 0.999},
		{"tightest limit", s.Tightest(), 10 * time.Millisecond},
		{"as people read it", s.String(), "p99 ≤ 10ms, p99.9 ≤ 50ms, errors ≤ 0.5%"},
		// A capacity plan's defaults: its levels are the warm-up's load.
		{"resolution default", float64(p.Capacity.Resolution), DefaultResolution},
		{"probe_min default", time.Duration(p.Capacity.ProbeMin), DefaultProbeMin},
		{"probe_max default", time.Duration(p.Capacity.ProbeMax), DefaultProbeMax},
		{"max_probes default", p.Capacity.MaxProbes, DefaultMaxProbes},
		{"warm-up users", p.Load.Levels, []int{DefaultCapacityWarmupUsers}},
		{"warm-up model", p.Load.Model, "closed"},
		// The capacity interval is over starts: two by default.
		{"two starts", p.MinStarts(), 2},
	}
	for _, c := range checks {
		if !equal(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	// Errors default to 0.1% when the objective names none.
	p, err = ParsePlan("c.yaml", []byte(capacityBase+"slo: {p50: 2ms}\n"), testCatalog, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	if float64(p.SLO.Errors) != DefaultSLOErrors {
		t.Errorf("errors default %v, want %v", p.SLO.Errors, DefaultSLOErrors)
	}
	// One implementation is measured over two starts all the same.
	p, err = ParsePlan("c.yaml", []byte("name: c\nimplementations: [go-stdlib]\nworkloads: [string]\nslo: {p99: 5ms}\n"), testCatalog, testMachine)
	if err != nil || p.MinStarts() != 2 {
		t.Errorf("one implementation: %v, %d starts; want 2", err, p.MinStarts())
	}
}

func equal(a, b any) bool {
	if x, ok := a.([]int); ok {
		y, _ := b.([]int)
		return len(x) == len(y) && (len(x) == 0 || x[0] == y[0])
	}
	return a == b
}

func TestParseSLOErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		// want holds "line: field: message" fragments every error must
		// contain, in order.
		want []string
	}{
		{
			// A percentile of 100 or more is no percentile.
			name: "bad percentile",
			text: "slo:\n  p100: 10ms\n",
			want: []string{"c.yaml:5: slo.p100: percentile p100 is out of range (hint: a percentile above 0"},
		},
		{
			// A negative limit is refused on its value's line.
			name: "negative duration",
			text: "slo:\n  p99: -5ms\n",
			want: []string{"c.yaml:5: slo.p99: limit -5ms must be positive"},
		},
		{
			// Keys that are neither percentiles nor errors.
			name: "unknown key",
			text: "slo:\n  latency: 10ms\n  p99: 10ms\n",
			want: []string{"c.yaml:5: slo.latency: unknown key \"latency\" (hint: percentiles are written p50, p99, p99.9"},
		},
		{
			// A value that is no duration, an error rate that is no
			// percentage, and a percentile given twice: all at once.
			name: "every problem at once",
			text: "slo:\n  p99: soon\n  errors: lots\n  p90: 1ms\n  p90: 2ms\n",
			want: []string{"c.yaml:5: slo.p99: \"soon\" is not a duration", "c.yaml:6: slo.errors: errors \"lots\"", "c.yaml:8: slo.p90: p90 is given twice"},
		},
		{
			// An objective needs a percentile.
			name: "no percentile",
			text: "slo: {errors: 1%}\n",
			want: []string{"c.yaml:4: slo: an objective needs at least one percentile"},
		},
		{
			// The search's settings, checked.
			name: "capacity settings",
			text: "slo: {p99: 10ms}\ncapacity:\n  resolution: 80%\n  start_rate: -1\n  probe_min: 10s\n  probe_max: 1s\n",
			want: []string{"c.yaml:6: capacity.resolution: resolution must be above 0% and at most 50%", "c.yaml:7: capacity.start_rate", "c.yaml:9: capacity.probe_max"},
		},
		{
			// Capacity settings and sizing need an objective.
			name: "no objective",
			text: "capacity: {resolution: 5%}\nsizing: {rate: 100}\nload: {levels: [1]}\n",
			want: []string{"c.yaml:4: capacity: capacity settings need an slo", "c.yaml:5: sizing: sizing needs an slo"},
		},
		{
			// Sizing is a rate or page views, not both.
			name: "sizing both ways",
			text: "slo: {p99: 10ms}\nsizing: {rate: 100, daily_page_views: 1000}\n",
			want: []string{"c.yaml:5: sizing: give either rate or daily_page_views"},
		},
		{
			// A closed-model capacity needs a think time (located at
			// load, as the plan leaves think_time out), takes no start
			// rate and sizes nothing: its capacity is in users.
			name: "closed model without think time",
			text: "slo: {p99: 10ms}\ncapacity: {start_rate: 100}\nsizing: {rate: 100}\nload:\n  model: closed\n",
			want: []string{"c.yaml:5: capacity.start_rate: start_rate is a rate", "c.yaml:6: sizing: sizing is from a capacity in req/s", "c.yaml:8: load.think_time: a closed-model capacity (load.model: closed) needs a think time above zero"},
		},
		{
			// A capacity plan has at most one level: its warm-up's.
			name: "levels",
			text: "slo: {p99: 10ms}\nload: {levels: [10, 50]}\n",
			want: []string{"c.yaml:5: load.levels: a plan with slo finds its own rates"},
		},
	}
	for _, tc := range tests {
		_, err := ParsePlan("c.yaml", []byte(capacityBase+tc.text), testCatalog, testMachine)
		var list ErrorList
		if !errors.As(err, &list) {
			t.Errorf("%s: got %v, want located errors", tc.name, err)
			continue
		}
		if len(list) != len(tc.want) {
			t.Errorf("%s: %d errors, want %d:\n%v", tc.name, len(list), len(tc.want), err)
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(list[i].Error(), w) {
				t.Errorf("%s: error %d is %q, want it to contain %q", tc.name, i, list[i].Error(), w)
			}
		}
	}
}

// TestCapacityModel: the search counts users only where the plan writes
// load.model: closed (with a think time); closed by default is only the
// warm-up's model, and the search's the open model's rate.
func TestCapacityModel(t *testing.T) {
	tests := []struct {
		name, text      string
		wantModel, unit string
	}{
		// No model written: the warm-up is closed, the search open.
		{"default", "slo: {p99: 10ms}\n", "open", "req/s"},
		// Written open: the open model's rate.
		{"open", "slo: {p99: 10ms}\nload: {model: open, levels: [1000]}\n", "open", "req/s"},
		// Written closed, with a think time: users.
		{"closed", "slo: {p99: 10ms}\nload: {model: closed, think_time: 10ms, levels: [20]}\n", "closed", "users"},
	}
	for _, tc := range tests {
		p, err := ParsePlan("c.yaml", []byte(capacityBase+tc.text), testCatalog, testMachine)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if p.Capacity.Model != tc.wantModel || p.Capacity.Unit() != tc.unit {
			t.Errorf("%s: model %q, unit %q; want %q, %q", tc.name, p.Capacity.Model, p.Capacity.Unit(), tc.wantModel, tc.unit)
		}
	}
}

func TestProbeSeconds(t *testing.T) {
	c := CapacitySettings{ProbeMin: Duration(2 * time.Second), ProbeMax: Duration(30 * time.Second)}
	tests := []struct {
		name      string
		rate, q   float64
		want      time.Duration
		wantShort bool
	}{
		// p99 needs 100/(1-0.99) = 10,000 samples: 5 s at 2,000 req/s.
		{"p99 at 2,000 req/s", 2000, 0.99, 5 * time.Second, false},
		// At 20,000 req/s they come in 0.5 s: the 2 s floor holds.
		{"p99 at 20,000 req/s", 20000, 0.99, 2 * time.Second, false},
		// p99.9 needs 100,000 samples: 200 s at 500 req/s, cut to 30 s.
		{"p99.9 at 500 req/s", 500, 0.999, 30 * time.Second, true},
		// p50 needs 200 samples.
		{"p50 at 50 req/s", 50, 0.5, 4 * time.Second, false},
	}
	for _, tc := range tests {
		got, short := c.ProbeSeconds(tc.rate, tc.q)
		if got != tc.want || short != tc.wantShort {
			t.Errorf("%s: got %v (short %v), want %v (short %v)", tc.name, got, short, tc.want, tc.wantShort)
		}
	}
}

func TestSizingRequestsPerSecond(t *testing.T) {
	tests := []struct {
		name string
		s    Sizing
		want float64
	}{
		// The SKU-lookup source: 0.8 × 10M views / (86,400 × 0.4) = 231.5 req/s.
		{"page views", Sizing{DailyPageViews: 10_000_000}, 0.8 * 10_000_000 / (86_400 * 0.4)},
		// Three requests per view triple it; two servers halve it.
		{"requests per view over servers", Sizing{DailyPageViews: 10_000_000, RequestsPerView: 3, Servers: 2}, 0.8 * 10_000_000 * 3 / (86_400 * 0.4) / 2},
		// A rate is taken as it is, per server.
		{"rate", Sizing{Rate: 5000, Servers: 4}, 1250},
	}
	for _, tc := range tests {
		if got := tc.s.RequestsPerSecond(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: got %g, want %g", tc.name, got, tc.want)
		}
	}
	if got := (Sizing{DailyPageViews: 10_000_000}).RequestsPerSecond(); math.Round(got*10)/10 != 231.5 {
		t.Errorf("10M daily views: %g req/s, want 231.5", got)
	}
}
