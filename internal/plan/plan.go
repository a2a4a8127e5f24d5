// Package plan reads experiment plans (plans/*.yaml): implementations,
// workloads, load levels, trials, database policy, placement and limits,
// resolved with defaults and validated all at once. Package lab runs them.
package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/showdownlab/showdown/internal/located"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/workloads"
)

// Defaults applied to fields a plan leaves out.
const (
	DefaultTrials    = 1
	DefaultDuration  = 10 * time.Second
	DefaultWarmupMax = 4 * time.Minute // java-spring on one CPU was steady on string after 135-207 s in eight starts, still compiling at the cap in two (plans/README.md)
	DefaultTrialsMax = 10
	DefaultTimeout   = 30 * time.Second
	// DefaultIterationsMax caps a level with iterations per user when the
	// plan sets no duration.
	DefaultIterationsMax  = 10 * time.Minute
	DefaultMaxConnections = workloads.DefaultMaxConnections
	DefaultSKURows        = workloads.DefaultSKURows
	DefaultSeed           = workloads.DefaultSeed
	// The fault test's defaults (faults:), those of showdown verify --faults.
	DefaultFaultWindow  = 60 * time.Second
	DefaultFaultWorkers = 50
	DefaultFaultPause   = 5 * time.Second
)

// The contract checks a plan may ask for before load (Plan.Verify).
const (
	VerifyFull  = "full"
	VerifyQuick = "quick"
)

// Plan is one experiment, as read from plans/*.yaml and resolved with
// defaults.
type Plan struct {
	Name            string           `yaml:"name" json:"name"`
	Description     string           `yaml:"description" json:"description,omitempty"`
	Implementations []Implementation `yaml:"implementations" json:"implementations"`
	Workloads       []Workload       `yaml:"workloads" json:"workloads"`
	Load            Load             `yaml:"load" json:"load"`
	// Trials is how many fresh starts of every implementation are
	// measured; with TrialsAuto (`trials: auto`) at least Trials and at
	// most TrialsMax, until every cell's 95% confidence interval of
	// throughput is within ±3% of its mean.
	Trials     int  `yaml:"trials" json:"trials"`
	TrialsAuto bool `yaml:"-" json:"trials_auto,omitempty"`
	TrialsMax  int  `yaml:"trials_max" json:"trials_max,omitempty"`
	// Rounds is how implementations are compared: in interleaved rounds
	// over warm services (the default), to a precision.
	Rounds Rounds `yaml:",inline" json:"rounds"`
	// ServiceRestart is when a service is started afresh: "trial" (once
	// per trial, warmed up and measured on every workload) or "workload"
	// (a cold start for each workload).
	ServiceRestart string `yaml:"service_restart" json:"service_restart"`
	// Verify is the contract check of every start before its load: "full"
	// (the default: the contract suite's checks that neither stop the
	// database nor the service, per workload) or "quick" (one iteration of
	// the scenario, every response asserted).
	Verify    string            `yaml:"verify" json:"verify"`
	Env       map[string]string `yaml:"env" json:"env,omitempty"`
	Database  Database          `yaml:"database" json:"database"`
	Placement Placement         `yaml:"placement" json:"placement"`
	Limits    Limits            `yaml:"limits" json:"limits"`
	// Cores are the service's CPU counts, a dimension of the results:
	// each implementation runs at each count as its own arm
	// ("go-stdlib@2"), pinned to the machine's first n CPUs (CPUs 0..n-1
	// unless the process was started on others), its concurrency set from its
	// manifest's cores knob. The rest of the placement is derived from
	// the machine's CPUs (PlaceCores). Cores replace
	// placement.service_cpus and limits.cpu, which a plan with cores may
	// not set.
	Cores []int `yaml:"cores" json:"cores,omitempty"`
	// Replicas are the pod counts of every implementation on Kubernetes
	// (showdown k8s); a list is a dimension of the results like the load
	// levels. The local runner starts one process and ignores it.
	Replicas []int `yaml:"replicas" json:"replicas,omitempty"`
	// Generator sizes the load generator on Kubernetes.
	Generator Generator `yaml:"generator" json:"generator,omitzero"`
	// NativeMemory turns on the JVM's native memory tracking for Java
	// services (-XX:NativeMemoryTracking=summary in JAVA_OPTS; it costs a
	// little) and records its summary by category after each workload's
	// load, as "Go Java, Go!" did.
	NativeMemory bool `yaml:"jvm_native_memory" json:"jvm_native_memory,omitempty"`
	// FailIf are thresholds checked on every measured level, in the
	// syntax of `showdown attack --fail-if` (load.ThresholdSyntax): any
	// crossed one makes `showdown run` exit 3.
	FailIf []string `yaml:"fail_if" json:"fail_if,omitempty"`
	// SlowerThan is `fail_if: {slower_than: 5%}`: `showdown run` exits 3
	// when an arm's interval lies wholly beyond this slowdown against the
	// baseline arm (Baseline), on an interleaved comparison's metric.
	SlowerThan Fraction `yaml:"-" json:"fail_if_slower_than,omitempty"`
	// BudgetDefaulted reports that the plan set none of budget,
	// precision, measure_max, trials and trials_max, and compares in
	// rounds, so it got DefaultBudget (applyCompareDefaults).
	BudgetDefaulted bool `yaml:"-" json:"budget_defaulted,omitempty"`
	// SLO is the latency objective: with it the lab finds each arm's
	// capacity (the highest open-model rate meeting it, or with
	// load.model: closed the most users) instead of
	// measuring levels, and the report's acceptable latency is it.
	SLO *SLO `yaml:"slo" json:"slo,omitempty"`
	// Capacity tunes the search of a plan with an SLO.
	Capacity CapacitySettings `yaml:"capacity" json:"capacity,omitzero"`
	// Sizing is a load to size each stack for from its capacity.
	Sizing *Sizing `yaml:"sizing" json:"sizing,omitempty"`
	// AtRate adds a comparison at one rate beside a closed-model plan's
	// levels: latency, CPU per request and memory at the same work.
	AtRate *AtRate `yaml:"at_rate" json:"at_rate,omitempty"`
	// Published are the figures a source experiment reported, which the
	// report sets beside this run's.
	Published []Published `yaml:"published" json:"published,omitempty"`
	// Faults, when set, runs the bank under faults for every
	// implementation after the measured trials, on a durable database of
	// its own (showdown verify --faults).
	Faults *Faults `yaml:"faults" json:"faults,omitempty"`

	// File is where the plan was read from.
	File string `yaml:"-" json:"file"`
	// trialsSet is whether the plan names its trials.
	trialsSet bool
	root      *yaml.Node
	// machine is the machine the plan was resolved for (ParsePlan).
	machine Machine
}

// Machine is the machine the plan was resolved and validated for.
func (p *Plan) Machine() Machine { return p.machine }

// PublishedMetrics are the metrics a published figure may be compared on
// (the report's metric keys), and whether more is better.
var PublishedMetrics = map[string]bool{"throughput": true, "mean_ms": false, "p50_ms": false, "p90_ms": false,
	"p95_ms": false, "p99_ms": false, "max_ms": false, "error_percent": false, "rss_peak_bytes": false}

// Published is one figure set a source experiment reported, e.g. the 2018
// bank's mean latency at 4,000 users, and where this run measures the same.
type Published struct {
	// Source names the experiment and its setup, e.g. "bank 2018, 4k JMeter users".
	Source string `yaml:"source" json:"source"`
	// Workload and Level are this run's cell for the same setup (the
	// workload defaults to the plan's first).
	Workload string `yaml:"workload" json:"workload"`
	Level    int    `yaml:"level" json:"level"`
	// Metric is one of PublishedMetrics.
	Metric string `yaml:"metric" json:"metric"`
	// Figures are the published values by implementation id.
	Figures map[string]float64 `yaml:"figures" json:"figures"`
	// Note says what differs from the source's setup.
	Note string `yaml:"note" json:"note,omitempty"`
	// SKUIndex picks the value of a database dimension the figures are
	// compared at (required when the plan has one); Database is its label.
	SKUIndex *bool  `yaml:"sku_index" json:"sku_index,omitempty"`
	Database string `yaml:"-" json:"database,omitempty"`
}

// Fault names one fault of the fault test; package faults says what each
// does and injects it.
type Fault string

// The faults a plan may list (faults: inject).
const (
	FaultServiceKill     Fault = "service-kill"
	FaultDatabasePause   Fault = "db-pause"
	FaultDatabaseRestart Fault = "db-restart"
	FaultDatabaseCrash   Fault = "db-crash"
	FaultServiceTerm     Fault = "service-term"
)

// FaultNames are the faults in the order the fault test injects them.
var FaultNames = []Fault{FaultServiceKill, FaultDatabasePause, FaultDatabaseRestart, FaultDatabaseCrash, FaultServiceTerm}

// Faults configures the fault test of a plan.
type Faults struct {
	// Inject lists the faults, in order (default: FaultNames).
	Inject []Fault `yaml:"inject" json:"inject"`
	// PerFault is each fault's window of transfers (default 60s).
	PerFault Duration `yaml:"per_fault" json:"per_fault"`
	// Workers send transfers back to back (default 50).
	Workers int `yaml:"workers" json:"workers"`
	// Pause is how long db-pause keeps the database stopped (default 5s).
	Pause Duration `yaml:"pause" json:"pause"`
}

// Implementation is a service, optionally as a variant: the same service
// with other environment (LOG_REQUESTS=true, VIRTUAL_THREADS=true, ...).
// In YAML it is either the service name or a mapping. A stack outside
// services/ is named by its folder, `path: ../our-service`, and its
// Service is that folder's name (which its manifest's name must equal).
type Implementation struct {
	Service string `yaml:"service" json:"service"`
	// Path is the stack's folder as the plan writes it, relative to the
	// plan's folder; empty for a stack under services/.
	Path string `yaml:"path" json:"path,omitempty"`
	// Dir is Path made absolute; empty for a stack under services/.
	Dir     string            `yaml:"-" json:"dir,omitempty"`
	Variant string            `yaml:"variant" json:"variant,omitempty"`
	Env     map[string]string `yaml:"env" json:"env,omitempty"`
	// Warmup is this implementation's own warm-up (`warmup: none`, a
	// time, auto, or `warmup_requests: N` in the variant), replacing the
	// plan's load warm-up; nil takes the plan's. The sources differed
	// here: the API showdown warmed up not at all, "Go Java, Go!" sent
	// 1,000 requests first.
	Warmup *Warmup `yaml:"-" json:"warmup,omitempty"`
	// Verify overrides the plan's verify for this implementation: quick
	// for a variant that brings back a source's mistake on purpose (a
	// pool per request), which the contract's concurrency checks refuse.
	Verify string `yaml:"-" json:"verify,omitempty"`
	// Cores is the service's CPU count of this arm (plan's cores); 0 when
	// the plan has none and the placement's service CPUs apply.
	Cores int `yaml:"-" json:"cores,omitempty"`
	// Rev is a git revision of the stack's folder (`rev: HEAD~1`), built
	// from a copy of the folder at that commit; empty for the working
	// tree. With it Service is the arm's name, the stack's and the
	// revision's ("go-stdlib@HEAD~1", RevName), and Commit the commit it
	// resolved to (set by whoever materialises it, package stack).
	Rev    string `yaml:"rev" json:"rev,omitempty"`
	Commit string `yaml:"-" json:"commit,omitempty"`
	// RevDir is the copy of the folder at Commit that is built and run.
	RevDir string `yaml:"-" json:"rev_dir,omitempty"`
	// line is where the implementation is written, and problems what
	// UnmarshalYAML found wrong in it, for validate.
	line     int
	problems []*located.Error
	// stack is the stack's own name of an arm at a revision (Service
	// without "@rev"), and against whether `run --against` added it.
	stack   string
	against bool
}

// Warmup is how a service is warmed before it is measured, at the first
// level's load, not counted: for a fixed Time, until the steady-state rule
// holds (Auto), or for about Requests requests; Auto and Requests stop at
// Max. All zero is no warm-up.
type Warmup struct {
	Auto     bool     `json:"auto,omitempty"`
	Time     Duration `json:"time,omitempty"`
	Requests int      `json:"requests,omitempty"`
	Max      Duration `json:"max,omitempty"`
}

// None reports a plan or variant that warms up not at all.
func (w Warmup) None() bool { return !w.Auto && w.Time <= 0 && w.Requests <= 0 }

// String says what the warm-up is: "none", "auto (max 3m0s)", "15s",
// "1000 requests (max 3m0s)".
func (w Warmup) String() string {
	switch {
	case w.Auto:
		return fmt.Sprintf("auto (max %v)", time.Duration(w.Max))
	case w.Requests > 0:
		return fmt.Sprintf("%d requests (max %v)", w.Requests, time.Duration(w.Max))
	case w.Time > 0:
		return time.Duration(w.Time).String()
	}
	return "none"
}

// WarmupOf is the warm-up of im: its own, or else the plan's.
func (p *Plan) WarmupOf(im Implementation) Warmup {
	if im.Warmup != nil {
		return *im.Warmup
	}
	l := p.Load
	return Warmup{Auto: l.WarmupAuto, Time: l.Warmup, Requests: l.WarmupRequests, Max: l.WarmupMax}
}

// VerifyOf is the contract check of im under p: its own, or the plan's.
func (p *Plan) VerifyOf(im Implementation) string {
	if im.Verify != "" {
		return im.Verify
	}
	return p.Verify
}

// ID names the implementation in results: "java-spring",
// "java-spring+vthreads", and with its cores "java-spring@4".
func (i Implementation) ID() string {
	id := i.BaseID()
	if i.Cores > 0 {
		id += "@" + strconv.Itoa(i.Cores)
	}
	return id
}

// BaseID is the implementation's id without its cores: "java-spring" or
// "java-spring+vthreads".
func (i Implementation) BaseID() string {
	if i.Variant == "" {
		return i.Service
	}
	return i.Service + "+" + i.Variant
}

// UnmarshalYAML accepts "name" or {service or path, variant, env, warmup,
// warmup_requests, warmup_max, verify}; warmup is none, auto or a time.
// Problems are kept for validate, which reports them with the plan's
// others.
func (i *Implementation) UnmarshalYAML(n *yaml.Node) error {
	i.line = n.Line
	if n.Kind == yaml.ScalarNode {
		i.Service = n.Value
		return nil
	}
	var v struct {
		Service        string            `yaml:"service"`
		Path           string            `yaml:"path"`
		Variant        string            `yaml:"variant"`
		Env            map[string]string `yaml:"env"`
		Warmup         yaml.Node         `yaml:"warmup"`
		WarmupRequests *int              `yaml:"warmup_requests"`
		WarmupMax      *Duration         `yaml:"warmup_max"`
		Verify         string            `yaml:"verify"`
		Rev            string            `yaml:"rev"`
	}
	if err := n.Decode(&v); err != nil {
		return err
	}
	i.Service, i.Path, i.Variant, i.Env, i.Verify, i.Rev = v.Service, v.Path, v.Variant, v.Env, v.Verify, v.Rev
	lines := map[string]int{}
	for k := 0; k+1 < len(n.Content); k += 2 {
		key := n.Content[k]
		lines[key.Value] = key.Line
		switch key.Value {
		case "service", "path", "variant", "env", "warmup", "warmup_requests", "warmup_max", "verify", "rev":
		default:
			i.problems = append(i.problems, &located.Error{Line: key.Line, Field: key.Value, Msg: "unknown field", Hint: "an implementation has service or path, rev, variant, env, warmup, warmup_requests, warmup_max and verify"})
		}
	}
	_, hasPath := lines["path"]
	switch _, hasService := lines["service"]; {
	case hasPath && hasService:
		i.problems = append(i.problems, &located.Error{Line: lines["path"], Field: "path", Msg: "path and service exclude each other", Hint: "service names a stack under services/, path a stack's folder anywhere; the folder's name is the stack's"})
	case hasPath && strings.TrimSpace(v.Path) == "":
		i.problems = append(i.problems, &located.Error{Line: lines["path"], Field: "path", Msg: "path is empty", Hint: "the stack's folder, relative to the plan's: path: ../our-service"})
	case hasPath:
		i.Service = filepath.Base(filepath.Clean(v.Path))
	}
	if _, hasRev := lines["rev"]; hasRev {
		i.nameRevision(lines["rev"])
	}
	hasWarmup := v.Warmup.Kind != 0
	if !hasWarmup && v.WarmupRequests == nil && v.WarmupMax == nil {
		return nil
	}
	w := &Warmup{}
	if hasWarmup {
		switch s := v.Warmup.Value; {
		case s == "none":
		case s == "auto":
			w.Auto = true
		default:
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				i.problems = append(i.problems, &located.Error{Line: v.Warmup.Line, Field: "warmup", Msg: fmt.Sprintf("warmup %q is none, auto or a time", s), Hint: "examples: none, auto, 0s, 15s, 2m"})
			}
			w.Time = Duration(d)
		}
	}
	if v.WarmupRequests != nil {
		if hasWarmup {
			i.problems = append(i.problems, &located.Error{Line: lines["warmup_requests"], Field: "warmup_requests", Msg: "warmup and warmup_requests exclude each other", Hint: "keep one of them"})
		}
		if w.Requests = *v.WarmupRequests; w.Requests < 0 {
			i.problems = append(i.problems, &located.Error{Line: lines["warmup_requests"], Field: "warmup_requests", Msg: "warmup_requests must not be negative"})
		}
	}
	if v.WarmupMax != nil {
		w.Max = *v.WarmupMax
	}
	i.Warmup = w
	return nil
}

// key is how the catalog knows im: by its folder when the plan names one,
// so that a folder without a stack is never taken for the stack of the
// same name under services/.
func (i Implementation) key() string {
	if i.Dir != "" && i.Rev == "" {
		return i.Dir
	}
	return i.Service
}

// resolveFolders makes each implementation's Path absolute in Dir,
// relative to the folder of the plan's file.
func (p *Plan) resolveFolders() {
	for i := range p.Implementations {
		im := &p.Implementations[i]
		if im.Path == "" {
			continue
		}
		im.Dir = folderOf(p.File, im.Path)
	}
}

// folderOf is path, as written in the plan file, made absolute.
func folderOf(file, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(file), path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// Folders returns the stack folders (Dir) that p's implementations name
// by path, each once, in plan order.
func (p *Plan) Folders() []string {
	var dirs []string
	for _, im := range p.Implementations {
		if im.Dir != "" && im.Rev == "" && !slices.Contains(dirs, im.Dir) {
			dirs = append(dirs, im.Dir)
		}
	}
	return dirs
}

// Folders returns the stack folders that the implementations of plan text
// read from file name by path, absolute, each once: what a caller reads
// before ParsePlan, whose catalog must hold those stacks. Text that does
// not parse names none (ParsePlan says why).
func Folders(file string, data []byte) []string {
	var v struct {
		Implementations []Implementation `yaml:"implementations"`
	}
	_ = yaml.Unmarshal(data, &v)
	p := &Plan{File: file, Implementations: v.Implementations}
	p.resolveFolders()
	return p.Folders()
}

// Workload is a workload and the scenario its virtual users run. In YAML
// it is either the workload name or a mapping.
type Workload struct {
	Name string `yaml:"name" json:"name"`
	// Scenario is a scenario file; empty means the workload's default
	// (workloads/<name>/scenario.yaml).
	Scenario string `yaml:"scenario" json:"scenario,omitempty"`
}

// UnmarshalYAML accepts "name" or {name, scenario}.
func (w *Workload) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		w.Name = n.Value
		return nil
	}
	type plain Workload
	return n.Decode((*plain)(w))
}

// Load is how each level is driven.
type Load struct {
	// Model is "closed" (levels are concurrent users) or "open" (levels
	// are arrival rates per second).
	Model  string `yaml:"model" json:"model"`
	Levels []int  `yaml:"levels" json:"levels"`
	// RampUp starts the closed model's users evenly over this time.
	RampUp Duration `yaml:"ramp_up" json:"ramp_up"`
	// Duration is how long each level runs, ramp-up included.
	Duration Duration `yaml:"duration" json:"duration"`
	// Warmup runs before the first level of each workload on a service
	// start, at the first level's load, and is not counted: a fixed time,
	// or with WarmupAuto until the steady-state rule holds (package lab,
	// plans/README.md), at most WarmupMax. `warmup: auto` in YAML, and the
	// default.
	Warmup     Duration `yaml:"warmup" json:"warmup"`
	WarmupAuto bool     `yaml:"-" json:"warmup_auto,omitempty"`
	WarmupMax  Duration `yaml:"warmup_max" json:"warmup_max,omitempty"`
	// WarmupRequests warms up with this many requests instead (as
	// the sources did: "a 1,000-request warm-up"), at the first level's
	// load, at most WarmupMax; it excludes Warmup.
	WarmupRequests int `yaml:"warmup_requests" json:"warmup_requests,omitempty"`
	// Iterations per user (closed model, JMeter's loops): a level ends
	// when every user has run the scenario this many times, or after
	// Duration (default DefaultIterationsMax then), whichever comes first.
	Iterations int      `yaml:"iterations" json:"iterations,omitempty"`
	ThinkTime  Duration `yaml:"think_time" json:"think_time,omitempty"`
	Timeout    Duration `yaml:"timeout" json:"timeout"`
	// MaxInflight bounds concurrent requests in the open model (0: the
	// engine's default).
	MaxInflight int `yaml:"max_inflight" json:"max_inflight,omitempty"`
	// PaceSlack is the open model's trade-off between the generator's
	// wake-ups and its send lateness (load.PaceSlack; 0: the engine's
	// default, load.DefaultPaceSlack).
	PaceSlack Duration `yaml:"pace_slack" json:"pace_slack,omitempty"`
	// Arrivals spaces the arrivals of the plan's open-model drives (an
	// open plan's levels, at_rate's rounds; the capacity search's probes
	// only when the plan names it): "poisson" (the default:
	// random gaps, as from many independent clients) or "even"
	// (clockwork).
	Arrivals string `yaml:"arrivals" json:"arrivals,omitempty"`
	// Connections is the pool of keep-alive connections those arrivals
	// are spread over, each taking its turn (load.OpenModel.Connections);
	// 0 in the file: as many as a closed plan's first level has users,
	// DefaultConnections in an open plan (Pool).
	Connections int `yaml:"connections" json:"connections,omitempty"`
}

// DefaultConnections is an open plan's pool of connections when it
// names none: as many as a proxy in front of a service commonly keeps.
const DefaultConnections = 50

// Pool is the pool of connections the plan's open-model drives spread
// their arrivals over (Connections, or its default).
func (l Load) Pool() int {
	switch {
	case l.Connections > 0:
		return l.Connections
	case l.Model == "closed" && len(l.Levels) > 0 && l.Levels[0] > 0:
		return l.Levels[0]
	}
	return DefaultConnections
}

// Spacing is how the plan's open-model arrivals are spaced
// (load.Poisson unless the plan says even).
func (l Load) Spacing() load.Arrivals {
	if a, err := load.ParseArrivals(l.Arrivals); err == nil && l.Arrivals != "" {
		return a
	}
	return load.Poisson
}

// Database is the database policy.
type Database struct {
	MaxConnections int `yaml:"max_connections" json:"max_connections"`
	// Reset empties what a run wrote: "level" (before every level),
	// "trial" (before each implementation's levels) or "never".
	Reset string `yaml:"reset" json:"reset"`
	// Restart restarts the database servers: "trial" (before each
	// implementation's levels, as the bank rematch did) or "never".
	Restart string `yaml:"restart" json:"restart"`
	SKURows int    `yaml:"sku_rows" json:"sku_rows"`
	// SKUIndex is whether sku_id has its index: true, false (the source's
	// full table scans), or with SKUIndexes both, as a dimension of the
	// results (`sku_index: [false, true]`), SKUIndex then being the first.
	SKUIndex   *bool  `yaml:"sku_index" json:"sku_index"`
	SKUIndexes []bool `yaml:"-" json:"sku_index_values,omitempty"`
	Seed       int64  `yaml:"seed" json:"seed"`
	// URL is a managed PostgreSQL (postgres://...) that showdown k8s uses
	// instead of starting its own; MySQLURL is the same for MariaDB/MySQL.
	URL      string `yaml:"url" json:"url,omitempty"`
	MySQLURL string `yaml:"mysql_url" json:"mysql_url,omitempty"`
}

// DatabaseSetting is one value of a plan's database dimension: the
// settings one set of measurements ran with.
type DatabaseSetting struct {
	SKUIndex bool `json:"sku_index"`
	// Label names the setting in results ("sku_index=false"); empty when
	// the plan has no database dimension.
	Label string `json:"label,omitempty"`
}

// DatabaseSettings are the values of the plan's database dimension in
// plan order: one per sku_index value, or one unlabelled setting when the
// plan sets a single value.
func (p *Plan) DatabaseSettings() []DatabaseSetting {
	if len(p.Database.SKUIndexes) > 1 {
		out := make([]DatabaseSetting, len(p.Database.SKUIndexes))
		for i, v := range p.Database.SKUIndexes {
			out[i] = DatabaseSetting{SKUIndex: v, Label: SKUIndexLabel(v)}
		}
		return out
	}
	return []DatabaseSetting{{SKUIndex: p.Database.SKUIndex == nil || *p.Database.SKUIndex}}
}

// SettingsOf are the database settings workload w is measured at: the
// dimension's values for sku, which it changes, and one unlabelled
// setting for the others.
func (p *Plan) SettingsOf(w string) []DatabaseSetting {
	all := p.DatabaseSettings()
	if w == "sku" {
		return all
	}
	return []DatabaseSetting{{SKUIndex: all[0].SKUIndex}}
}

// SKUIndexLabel is the label of a sku_index value in results:
// "sku_index=true".
func SKUIndexLabel(v bool) string { return "sku_index=" + strconv.FormatBool(v) }

// Generator is the load generator on Kubernetes: an Indexed Job whose pods
// each run one shard of the load. Zero fields take showdown k8s's defaults.
type Generator struct {
	// Pods is the number of shards; 0 sizes it from the top rate.
	Pods int `yaml:"pods" json:"pods,omitempty"`
	// CPU and Memory are each pod's requests and limits.
	CPU    float64  `yaml:"cpu" json:"cpu,omitempty"`
	Memory ByteSize `yaml:"memory" json:"memory,omitempty"`
	// MicrosPerRequest is the generator's CPU time per request, which
	// sizes the pods.
	MicrosPerRequest float64 `yaml:"us_per_request" json:"us_per_request,omitempty"`
}

// Placement pins processes to CPUs (taskset list syntax).
type Placement struct {
	ServiceCPUs   string `yaml:"service_cpus" json:"service_cpus"`
	GeneratorCPUs string `yaml:"generator_cpus" json:"generator_cpus"`
	DatabaseCPUs  string `yaml:"database_cpus" json:"database_cpus"`
}

// Limits cap the service.
type Limits struct {
	// CPU is a quota in cores; 0 for none.
	CPU float64 `yaml:"cpu" json:"cpu,omitempty"`
	// Memory is a cap in bytes; 0 for none.
	Memory ByteSize `yaml:"memory" json:"memory,omitempty"`
}

// Duration is a time.Duration written as "10s", "1m30s".
type Duration time.Duration

// UnmarshalYAML parses Go duration syntax.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		// A *yaml.TypeError lets the decoder go on and report the rest.
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration (examples: 500ms, 10s, 2m)", n.Line, n.Value)}}
	}
	*d = Duration(v)
	return nil
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(time.Duration(d).String())), nil
}

// ByteSize is a size in bytes written as "1GiB", "512MiB", "1G" or bytes.
type ByteSize int64

var sizeRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([KMGT]i?B?|B)?$`)

// ParseByteSize reads "1GiB", "512MiB", "1G" (powers of 1024) or bytes.
func ParseByteSize(s string) (ByteSize, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a size (examples: 512MiB, 1GiB)", s)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	mult := map[byte]float64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}
	if m[2] != "" && m[2] != "B" {
		v *= mult[m[2][0]]
	}
	return ByteSize(v), nil
}

// UnmarshalYAML parses a size.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*b = v
	return nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// ReadScenario reads a plan's scenario file. A path under workloads/ is
// read from the copy built into showdown, so the ready plans work from any
// folder; any other path is read from disk.
func ReadScenario(path string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(filepath.ToSlash(path), "workloads/"); ok {
		if b, err := workloads.FS.ReadFile(rest); err == nil {
			return b, nil
		}
	}
	return os.ReadFile(path)
}
