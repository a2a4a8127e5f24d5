package plan

import (
	"errors"
	"gopkg.in/yaml.v3"
	"slices"
	"strings"
	"testing"
	"time"
)

// testMachine is the machine plans are checked for in these tests, two
// CPUs whichever machine runs them.
var testMachine = MachineOf(2)

var testCatalog = Catalog{
	"go-stdlib":   {"string", "bank", "users", "sku"},
	"java-spring": {"string", "bank", "users", "sku"},
	"string-only": {"string"},
}

const goodPlan = `name: t
implementations:
  - go-stdlib
  - service: java-spring
    variant: vthreads
    env: {VIRTUAL_THREADS: "true"}
workloads: [string, bank]
load:
  levels: [10, 50]
  ramp_up: 2s
  duration: 10s
`

func TestParsePlanDefaults(t *testing.T) {
	p, err := ParsePlan("good.yaml", []byte(goodPlan), testCatalog, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"model defaults to closed", p.Load.Model, "closed"},
		{"trials default", p.Trials, 1},
		{"two starts when implementations are compared in rounds", p.MinStarts(), 2},
		{"precision default", float64(p.Rounds.Precision), DefaultPrecision},
		{"round default", time.Duration(p.Rounds.Round), DefaultRound},
		{"settle default", time.Duration(p.Rounds.Settle), DefaultSettle},
		{"no stopping rule named: the default budget", time.Duration(p.Rounds.Budget), DefaultBudget},
		{"measure_max default: the budget", time.Duration(p.Rounds.MeasureMax), DefaultBudget},
		{"warmup is automatic by default", p.Load.WarmupAuto, true},
		{"warmup cap default", time.Duration(p.Load.WarmupMax), DefaultWarmupMax},
		{"one start per trial", p.ServiceRestart, "trial"},
		{"timeout default", time.Duration(p.Load.Timeout), DefaultTimeout},
		{"pool size default is the contract's", p.Env["DB_POOL_SIZE"], "20"},
		{"logging off by default", p.Env["LOG_REQUESTS"], "false"},
		{"max_connections is PostgreSQL's default", p.Database.MaxConnections, 100},
		{"reset before every level", p.Database.Reset, "level"},
		{"restart between trials", p.Database.Restart, "trial"},
		{"sku index on", *p.Database.SKUIndex, true},
		{"variant id", p.Implementations[1].ID(), "java-spring+vthreads"},
		{"variant env", p.Implementations[1].Env["VIRTUAL_THREADS"], "true"},
		{"plain id", p.Implementations[0].ID(), "go-stdlib"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestInterleaved(t *testing.T) {
	base := "name: t\nimplementations: [go-stdlib, java-spring]\nworkloads: [string]\nload: {levels: [10]}\n"
	tests := []struct {
		name   string
		extra  string
		want   bool
		trials int
		arms   int
	}{
		// Two implementations, warmed: rounds, two starts.
		{"default", "", true, 2, 2},
		// Trials named stay as named.
		{"trials named", "trials: 3\n", true, 3, 2},
		{"switched off", "interleave: false\n", false, 1, 2},
		// One implementation with A/A is two arms.
		{"aa", "aa: true\n", true, 2, 3},
		// A cold variant is measured sequentially.
		{"no warm-up", "load: {levels: [10], warmup: 0s}\n", false, 1, 2},
	}
	for _, tc := range tests {
		text := base + tc.extra
		if strings.HasPrefix(tc.extra, "load:") {
			text = strings.Replace(base, "load: {levels: [10]}\n", "", 1) + tc.extra
		}
		p, err := ParsePlan("t.yaml", []byte(text), testCatalog, testMachine)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, why := p.Interleaved()
		if got != tc.want || p.MinStarts() != tc.trials || len(p.Arms()) != tc.arms {
			t.Errorf("%s: interleaved %v (%s), starts %d, arms %d; want %v, %d, %d", tc.name, got, why, p.MinStarts(), len(p.Arms()), tc.want, tc.trials, tc.arms)
		}
		if !got && why == "" {
			t.Errorf("%s: sequential without a reason", tc.name)
		}
	}
	p, err := ParsePlan("t.yaml", []byte(base+"precision: 2%\naa: true\n"), testCatalog, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	if float64(p.Rounds.Precision) != 0.02 || p.Arms()[2].ID() != "go-stdlib+aa" {
		t.Errorf("precision %v, A/A arm %s", p.Rounds.Precision, p.Arms()[2].ID())
	}
	_, err = ParsePlan("t.yaml", []byte(base+"precision: lots\nround: 100ms\n"), testCatalog, testMachine)
	if err == nil || !strings.Contains(err.Error(), "t.yaml:5: \"lots\" is not a percentage") || !strings.Contains(err.Error(), "t.yaml:6: round") {
		t.Errorf("bad precision and round: %v", err)
	}
}

func TestParsePlanErrors(t *testing.T) {
	tests := []struct {
		name string
		plan string
		// want holds "line: field" prefixes every error must match, in order.
		want []string
	}{
		{
			// YAML that does not parse stops there, with its line.
			name: "syntax",
			plan: "name: x\nload: [\n",
			want: []string{"2"},
		},
		{
			// Every problem is reported at once, each with its line and field.
			name: "many problems",
			plan: `name: many
implementations:
  - go-stdlib
  - cobol-cics
workloads: [string, chess]
load:
  model: half-open
  levels: [10, -5]
  duration: 10s
  ramp_up: 20s
trials: 500
database:
  reset: sometimes
`,
			want: []string{
				"4: implementations.1: unknown service",
				"5: workloads.1: unknown workload",
				"7: load.model: model",
				"8: load.levels.1: level -5",
				"10: load.ramp_up: ramp_up",
				"11: trials: trials must",
				"13: database.reset: unknown reset",
			},
		},
		{
			// Unknown keys are caught with their line.
			name: "unknown key",
			plan: "name: x\nimplementations: [go-stdlib]\nworkloads: [string]\nload:\n  levels: [1]\n  users: 5\n",
			want: []string{"6: users: unknown field"},
		},
		{
			// A service that lacks a workload is named with the workload's line.
			name: "unsupported workload",
			plan: "name: x\nimplementations: [string-only]\nworkloads:\n  - string\n  - bank\nload: {levels: [1]}\n",
			want: []string{"5: workloads.1: string-only does not implement workload bank"},
		},
		{
			// Bad durations and sizes name the line and an example.
			name: "bad values",
			plan: "name: x\nimplementations: [go-stdlib]\nworkloads: [string]\nload:\n  levels: [1]\n  duration: ten seconds\nlimits:\n  memory: lots\n",
			want: []string{"6: ", "8: "},
		},
		{
			// The same implementation twice needs a variant name.
			name: "duplicate implementation",
			plan: "name: x\nimplementations: [go-stdlib, go-stdlib]\nworkloads: [string]\nload: {levels: [1]}\n",
			want: []string{"2: implementations.1: go-stdlib appears twice"},
		},
		{
			// Placement must name CPUs that exist.
			name: "placement",
			plan: "name: x\nimplementations: [go-stdlib]\nworkloads: [string]\nload: {levels: [1]}\nplacement:\n  service_cpus: \"0-999\"\n",
			want: []string{"6: placement.service_cpus: CPUs 2-999 do not exist (hint: the machine has CPUs 0-1)"},
		},
		{
			// A threshold attack --fail-if would refuse is refused with its line.
			name: "bad threshold",
			plan: "name: x\nimplementations: [go-stdlib]\nworkloads: [string]\nload: {levels: [1]}\nfail_if:\n  - p99>200ms\n  - p99>fast\n  - speed<3\n",
			want: []string{"7: fail_if.1: threshold \"p99>fast\"", "8: fail_if.2: threshold \"speed<3\": unknown metric"},
		},
		{
			// Iterations belong to the closed model; a warm-up is by time or by requests.
			name: "iterations and warm-up requests",
			plan: "name: x\nimplementations: [go-stdlib]\nworkloads: [string]\nload:\n  model: open\n  levels: [1]\n  iterations: 5\n  warmup: 10s\n  warmup_requests: 100\n",
			want: []string{"7: load.iterations: iterations per user apply to the closed model", "9: load.warmup_requests: warmup_requests and warmup exclude"},
		},
		{
			// Published figures must name this plan's level, a known metric and its implementations.
			name: "published",
			plan: "name: x\nimplementations: [go-stdlib]\nworkloads: [string]\nload: {levels: [1]}\npublished:\n  - source: s\n    level: 7\n    metric: speed\n    figures: {go-stdlib: 1, cobol: 2}\n",
			want: []string{"7: published.0.level: level 7", "8: published.0.metric: unknown metric", "9: published.0.figures: no implementation \"cobol\""},
		},
		{
			// The neighbour's turns: two durations in order, and a neighbour.
			name: "neighbour turns",
			plan: "name: x\nimplementations: [go-stdlib, string-only]\nworkloads: [string]\nload: {levels: [1]}\nneighbour: true\nneighbour_turns: [30s, 10s]\n",
			want: []string{"6: neighbour_turns: neighbour_turns must be [min, max]"},
		},
		{
			name: "neighbour turns without a neighbour",
			plan: "name: x\nimplementations: [go-stdlib, string-only]\nworkloads: [string]\nload: {levels: [1]}\nneighbour_turns: [30s, 2m]\n",
			want: []string{"5: neighbour_turns: neighbour_turns without neighbour: true"},
		},
		{
			// The fault test needs known faults, workers, a window and a bank.
			name: "faults",
			plan: "name: x\nimplementations: [string-only]\nworkloads: [string]\nload: {levels: [1]}\nfaults:\n  inject: [db-crash, meteor]\n  workers: -1\n  per_fault: 10ms\n",
			want: []string{"6: faults.inject.1: unknown fault \"meteor\"", "6: faults: no implementation of the plan serves bank", "7: faults.workers: -1 workers", "8: faults.per_fault: 10ms is too short"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePlan("p.yaml", []byte(tc.plan), testCatalog, testMachine)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("err = %v, want an ErrorList", err)
			}
			if len(list) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(list), len(tc.want), err)
			}
			for i, w := range tc.want {
				got := strings.TrimPrefix(list[i].Error(), "p.yaml:")
				if !strings.HasPrefix(got, w) {
					t.Errorf("error %d = %q, want prefix %q", i, got, w)
				}
			}
		})
	}
}

func TestParsePlanFaults(t *testing.T) {
	p, err := ParsePlan("p.yaml", []byte(goodPlan+"faults: {per_fault: 90s}\n"), testCatalog, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	f := p.Faults
	if f == nil || !slices.Equal(f.Inject, FaultNames) || f.Workers != DefaultFaultWorkers ||
		time.Duration(f.PerFault) != 90*time.Second || time.Duration(f.Pause) != DefaultFaultPause {
		t.Errorf("faults = %+v, want every fault, %d workers, 90s, pause %v", f, DefaultFaultWorkers, DefaultFaultPause)
	}
	if p, _ := ParsePlan("p.yaml", []byte(goodPlan), testCatalog, testMachine); p.Faults != nil {
		t.Errorf("a plan without faults: %+v", p.Faults)
	}
}

func TestParsePlanFailIf(t *testing.T) {
	p, err := ParsePlan("p.yaml", []byte(goodPlan+"fail_if: [\"p99>200ms\", \"errors>1%\"]\n"), testCatalog, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.FailIf) != 2 || p.FailIf[1] != "errors>1%" {
		t.Errorf("FailIf = %q, want the two thresholds in order", p.FailIf)
	}
}

// Iterations per user and a request-count warm-up, as the sources' JMeter
// plans had them: the level's duration becomes a cap, and the automatic
// warm-up is off.
func TestParsePlanIterations(t *testing.T) {
	src := "name: x\nimplementations: [go-stdlib]\nworkloads: [string]\nload:\n  levels: [100]\n  iterations: 10000\n  warmup_requests: 1000\n"
	p, err := ParsePlan("p.yaml", []byte(src), testCatalog, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	l := p.Load
	if l.Iterations != 10000 || l.WarmupRequests != 1000 || l.WarmupAuto || time.Duration(l.Duration) != DefaultIterationsMax || time.Duration(l.WarmupMax) != DefaultWarmupMax {
		t.Errorf("load = %+v, want 10000 iterations, 1000 warm-up requests, no automatic warm-up, duration and warm-up capped by the defaults", l)
	}
}

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want ByteSize
		ok   bool
	}{
		{"1GiB", 1 << 30, true},     // binary suffix
		{"512MiB", 512 << 20, true}, // binary suffix
		{"1G", 1 << 30, true},       // short form, still binary
		{"4096", 4096, true},        // plain bytes
		{"1.5GiB", 3 << 29, true},   // fractions
		{"lots", 0, false},          // not a size
		{"-1GiB", 0, false},         // negative
	}
	for _, tc := range tests {
		got, err := ParseByteSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestParsePlanAuto covers the "auto" values of trials and load.warmup.
func TestParsePlanAuto(t *testing.T) {
	base := "name: a\nimplementations: [go-stdlib]\nworkloads: [string]\n"
	tests := []struct {
		name       string
		yaml       string
		warmupAuto bool
		trialsAuto bool
		trials     int
		errLine    string // "" for no error
	}{
		{"defaults", "load: {levels: [1]}\n", true, false, 1, ""},                                                  // auto warm-up unless told
		{"fixed warm-up", "load: {levels: [1], warmup: 15s}\n", false, false, 1, ""},                               // a fixed time stays possible
		{"auto trials", "load: {levels: [1]}\ntrials: auto\n", true, true, 3, ""},                                  // three starts first
		{"explicit auto warm-up", "load:\n  levels: [1]\n  warmup: auto\n  warmup_max: 90s\n", true, false, 1, ""}, // with its cap
		{"bad warm-up", "load:\n  levels: [1]\n  warmup: soon\n", false, false, 1, "a.yaml:6"},                     // still an error with its line
		{"cap below the window", "load:\n  levels: [1]\n  warmup_max: 2s\n", true, false, 1, "a.yaml:6"},           // the rule needs 10 s
	}
	for _, tt := range tests {
		p, err := ParsePlan("a.yaml", []byte(base+tt.yaml), testCatalog, testMachine)
		if tt.errLine != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errLine) {
				t.Errorf("%s: error %v, want one at %s", tt.name, err, tt.errLine)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if p.Load.WarmupAuto != tt.warmupAuto || p.TrialsAuto != tt.trialsAuto || p.Trials != tt.trials {
			t.Errorf("%s: warmup auto %v, trials auto %v, trials %d; want %v, %v, %d", tt.name, p.Load.WarmupAuto, p.TrialsAuto, p.Trials, tt.warmupAuto, tt.trialsAuto, tt.trials)
		}
	}
}

// A variant's own warm-up replaces the plan's: none (the API showdown had
// none), a request count ("Go Java, Go!": 1,000 requests), a time or auto.
func TestParsePlanVariantWarmup(t *testing.T) {
	src := `name: w
implementations:
  - go-stdlib
  - service: go-stdlib
    variant: cold
    warmup: none
  - service: go-stdlib
    variant: thousand
    warmup_requests: 1000
  - service: go-stdlib
    variant: fixed
    warmup: 15s
  - service: go-stdlib
    variant: auto
    warmup: auto
    warmup_max: 90s
workloads: [string]
load:
  levels: [10]
  warmup: 5s
`
	p, err := ParsePlan("w.yaml", []byte(src), testCatalog, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		im   int
		want Warmup
	}{
		{0, Warmup{Time: Duration(5 * time.Second)}}, // no warm-up of its own: the plan's
		{1, Warmup{}}, // none
		{2, Warmup{Requests: 1000, Max: Duration(DefaultWarmupMax)}}, // a request count, capped by the default
		{3, Warmup{Time: Duration(15 * time.Second)}},                // a fixed time
		{4, Warmup{Auto: true, Max: Duration(90 * time.Second)}},     // until steady, its own cap
	}
	for _, tc := range tests {
		im := p.Implementations[tc.im]
		if got := p.WarmupOf(im); got != tc.want {
			t.Errorf("%s: warm-up %+v (%s), want %+v", im.ID(), got, got, tc.want)
		}
	}
	if !p.WarmupOf(p.Implementations[1]).None() {
		t.Errorf("warmup: none is not None()")
	}
}

func TestParsePlanVariantWarmupErrors(t *testing.T) {
	base := "name: w\nworkloads: [string]\nload: {levels: [10]}\nimplementations:\n  - service: go-stdlib\n    variant: v\n"
	tests := []struct {
		name, yaml string
		want       string // "line: message" prefix of the one error
	}{
		// Not a time, not none, not auto.
		{"bad value", "    warmup: soon\n", "7: implementations.0.warmup: warmup \"soon\" is none, auto or a time"},
		// A time and a request count exclude each other.
		{"both", "    warmup: 5s\n    warmup_requests: 10\n", "8: implementations.0.warmup_requests: warmup and warmup_requests exclude each other"},
		// The steady-state rule needs its ten-second window.
		{"auto cap too short", "    warmup: auto\n    warmup_max: 3s\n", "8: implementations.0.warmup_max: warmup_max 3s is shorter"},
		// An unknown key in a variant is caught with its line.
		{"unknown key", "    warmpu: 5s\n", "7: implementations.0.warmpu: unknown field"},
	}
	for _, tc := range tests {
		_, err := ParsePlan("w.yaml", []byte(base+tc.yaml), testCatalog, testMachine)
		var list ErrorList
		if !errors.As(err, &list) || len(list) != 1 {
			t.Errorf("%s: err = %v, want one problem", tc.name, err)
			continue
		}
		if got := strings.TrimPrefix(list[0].Error(), "w.yaml:"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want prefix %q", tc.name, got, tc.want)
		}
	}
}

// sku_index as a list is a dimension of the results: every value is a
// database setting with its label; a single value is none.
func TestParsePlanDatabaseDimension(t *testing.T) {
	base := "name: d\nimplementations: [go-stdlib]\nworkloads: [sku, string]\nload: {levels: [10]}\n"
	p, err := ParsePlan("d.yaml", []byte(base+"database:\n  sku_index: [false, true]\npublished:\n  - {source: s, level: 10, metric: throughput, sku_index: false, figures: {go-stdlib: 1, go-stdlib+x: 2}}\n"), Catalog{"go-stdlib": {"sku", "string"}}, testMachine)
	if err == nil || !strings.Contains(err.Error(), "go-stdlib+x") {
		t.Fatalf("err = %v, want only the unknown figure", err)
	}
	sets := p.DatabaseSettings()
	if len(sets) != 2 || sets[0] != (DatabaseSetting{SKUIndex: false, Label: "sku_index=false"}) || sets[1] != (DatabaseSetting{SKUIndex: true, Label: "sku_index=true"}) {
		t.Errorf("settings = %+v, want sku_index=false then sku_index=true", sets)
	}
	if *p.Database.SKUIndex {
		t.Errorf("SKUIndex = true, want the first value (false)")
	}
	if got := p.SettingsOf("string"); len(got) != 1 || got[0].Label != "" {
		t.Errorf("string's settings = %+v, want one unlabelled: only sku changes with the index", got)
	}
	if p.Published[0].Database != "sku_index=false" {
		t.Errorf("published database = %q, want sku_index=false", p.Published[0].Database)
	}
	one, err := ParsePlan("d.yaml", []byte(base+"database:\n  sku_index: false\n"), Catalog{"go-stdlib": {"sku", "string"}}, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	if sets := one.DatabaseSettings(); len(sets) != 1 || sets[0].Label != "" || sets[0].SKUIndex {
		t.Errorf("one value: settings = %+v, want one unlabelled setting without the index", sets)
	}

	errTests := []struct {
		name, yaml string
		want       []string // "line: field" prefixes, in order
	}{
		// A value that is not a bool, and one listed twice, each with its line.
		{"bad values", "database:\n  sku_index:\n    - false\n    - maybe\n    - false\n", []string{"8: database.sku_index.1: \"maybe\" is not true or false", "9: database.sku_index.2: false is listed twice"}},
		// An empty list.
		{"empty", "database:\n  sku_index: []\n", []string{"6: database.sku_index: no values"}},
		// A published figure must say which value it is compared at.
		{"published without value", "database:\n  sku_index: [false, true]\npublished:\n  - {source: s, level: 10, metric: throughput, figures: {go-stdlib: 1, go-stdlib+x: 2}}\n",
			[]string{"8: published.0: the plan's database dimension needs sku_index", "8: published.0.figures"}},
	}
	for _, tc := range errTests {
		_, err := ParsePlan("d.yaml", []byte(base+tc.yaml), Catalog{"go-stdlib": {"sku", "string"}}, testMachine)
		var list ErrorList
		if !errors.As(err, &list) || len(list) != len(tc.want) {
			t.Errorf("%s: err = %v, want %d problems", tc.name, err, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if got := strings.TrimPrefix(list[i].Error(), "d.yaml:"); !strings.HasPrefix(got, w) {
				t.Errorf("%s: problem %d = %q, want prefix %q", tc.name, i, got, w)
			}
		}
	}
	// Without the sku workload the dimension changes nothing: refused.
	_, err = ParsePlan("d.yaml", []byte("name: d\nimplementations: [go-stdlib]\nworkloads: [string]\nload: {levels: [10]}\ndatabase:\n  sku_index: [false, true]\n"), testCatalog, testMachine)
	if err == nil || !strings.Contains(err.Error(), "6: database.sku_index: sku_index as a dimension needs the sku workload") {
		t.Errorf("err = %v, want the dimension refused without sku", err)
	}
}

// TestAtRateBusyAndContrast: `busy` among the rates adds the busy rate;
// the automatic rate is contrasted unless `contrast: none`; the plan's
// traffic shape defaults to Poisson over the first level's users.
func TestAtRateBusyAndContrast(t *testing.T) {
	var a AtRate
	if err := yaml.Unmarshal([]byte("rates: [auto, busy]"), &a); err != nil || !a.Auto || !a.Busy || !a.Contrasted() || len(a.problems) > 0 {
		t.Fatalf("%+v %v", a, err)
	}
	var b AtRate
	if err := yaml.Unmarshal([]byte("{rates: [auto], contrast: none}"), &b); err != nil || b.Contrasted() {
		t.Errorf("contrast: none still contrasts: %+v %v", b, err)
	}
	var c AtRate
	yaml.Unmarshal([]byte("{rates: [auto], contrast: sometimes}"), &c)
	if len(c.problems) != 1 {
		t.Errorf("a bad contrast: problems %v", c.problems)
	}
	l := Load{Model: "closed", Levels: []int{50, 100}}
	if l.Pool() != 50 || l.Spacing() != "poisson" {
		t.Errorf("default shape: %d connections, %s", l.Pool(), l.Spacing())
	}
	l.Connections, l.Arrivals = 8, "even"
	if l.Pool() != 8 || l.Spacing() != "even" {
		t.Errorf("a plan's shape: %d connections, %s", l.Pool(), l.Spacing())
	}
}
