package plan

import (
	"errors"
	"strings"
	"testing"
	"time"
)

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
	p, err := ParsePlan("good.yaml", []byte(goodPlan), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"model defaults to closed", p.Load.Model, "closed"},
		{"trials default", p.Trials, 1},
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
			want: []string{"6: placement.service_cpus: CPU 999 does not exist"},
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
			// The fault test needs known faults, workers, a window and a bank.
			name: "faults",
			plan: "name: x\nimplementations: [string-only]\nworkloads: [string]\nload: {levels: [1]}\nfaults:\n  inject: [db-crash, meteor]\n  workers: -1\n  per_fault: 10ms\n",
			want: []string{"6: faults.inject.1: unknown fault \"meteor\"", "6: faults: no implementation of the plan serves bank", "7: faults.workers: -1 workers", "8: faults.per_fault: 10ms is too short"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePlan("p.yaml", []byte(tc.plan), testCatalog)
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
	p, err := ParsePlan("p.yaml", []byte(goodPlan+"faults: {per_fault: 90s}\n"), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	f := p.Faults
	if f == nil || strings.Join(f.Inject, ",") != strings.Join(FaultNames, ",") || f.Workers != DefaultFaultWorkers ||
		time.Duration(f.PerFault) != 90*time.Second || time.Duration(f.Pause) != DefaultFaultPause {
		t.Errorf("faults = %+v, want every fault, %d workers, 90s, pause %v", f, DefaultFaultWorkers, DefaultFaultPause)
	}
	if p, _ := ParsePlan("p.yaml", []byte(goodPlan), testCatalog); p.Faults != nil {
		t.Errorf("a plan without faults: %+v", p.Faults)
	}
}

func TestParsePlanFailIf(t *testing.T) {
	p, err := ParsePlan("p.yaml", []byte(goodPlan+"fail_if: [\"p99>200ms\", \"errors>1%\"]\n"), testCatalog)
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
	p, err := ParsePlan("p.yaml", []byte(src), testCatalog)
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
		p, err := ParsePlan("a.yaml", []byte(base+tt.yaml), testCatalog)
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
