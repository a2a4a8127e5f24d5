// Package results is the model of a results folder: the record of a run
// (run.json), its cells, and each level's files, written once by the lab
// with the resource columns joined at write time, and read by report,
// compare, merge and the lab itself. It owns every record it stores (the
// limits applied, the machine's noise floor, the resource samples), so
// reading a results folder links neither the process sampler nor cgroupfs.
package results

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/load"
)

// Files of a results folder.
const (
	// RunFile is the index of a results folder: everything about the run,
	// and one record per implementation x workload x trial with its levels.
	RunFile = "run.json"
	// MarkdownSummaryFile is the Markdown summary, written by package report.
	MarkdownSummaryFile = "summary.md"
)

// Status says how a service run or a level ended.
type Status string

// The statuses of service runs and levels.
const (
	OK      Status = "ok"
	Failed  Status = "failed"
	Skipped Status = "skipped" // an earlier step failed
	// Interrupted is a level (and its service run) cut short by a signal:
	// its files hold what was measured, but it is left out of the tables.
	Interrupted Status = "interrupted"
)

// Machine describes where a run happened.
type Machine struct {
	Hostname    string            `json:"hostname"`
	CPUModel    string            `json:"cpu_model"`
	CPUs        int               `json:"cpus"`
	MemoryBytes int64             `json:"memory_bytes"`
	Kernel      string            `json:"kernel"`
	OS          string            `json:"os"`
	Cgroup      string            `json:"cgroup"`
	Versions    map[string]string `json:"versions"`
	GitCommit   string            `json:"git_commit,omitempty"`
	GitDirty    bool              `json:"git_dirty,omitempty"`
	// Noise is the machine's own per-second variation, measured before
	// the first service started (package noise); nil when not measured.
	Noise *NoiseFloor `json:"noise,omitempty"`
	// HostFloor is this host's own latency floor, measured before a
	// capacity search; nil when not measured.
	HostFloor *HostFloor `json:"host_floor,omitempty"`
}

// NoiseFloor is the machine's own per-second variation, as package noise
// measures it: a mirror of noise.Floor, field for field, which converts
// to it (the results model does not import the probe; noise.Floor says
// why).
type NoiseFloor struct {
	// Seconds measured (the first is dropped from the figures).
	Seconds int `json:"seconds"`
	// CPUs measured at the same time, one probe each.
	CPUs []int `json:"cpus"`
	// Rates are each CPU's probe iterations per second.
	Rates [][]float64 `json:"rates"`
	// CV is each CPU's coefficient of variation of its rates.
	CV []float64 `json:"cv"`
	// Max is the largest CV: the floor.
	Max float64 `json:"max_cv"`
}

// AppliedLimits is what a service's limits actually were, as package
// cgroup applied them (a cgroup.Applied converts to it).
type AppliedLimits struct {
	// Mechanism names how: "cgroup v1", "cgroup v2", "taskset", "none",
	// or a combination such as "taskset + cgroup v1".
	Mechanism   string   `json:"mechanism"`
	CPUs        string   `json:"cpus,omitempty"`
	CPUQuota    float64  `json:"cpu_quota,omitempty"`
	MemoryBytes int64    `json:"memory_bytes,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// Run is the record of a whole plan run, written to run.json.
type Run struct {
	// Version of this format (1).
	Version int `json:"version"`
	// Command reproduces the run.
	Command string     `json:"command"`
	Plan    *plan.Plan `json:"plan"`
	Machine Machine    `json:"machine"`
	// Placement is the CPU placement actually applied.
	Placement plan.Placement `json:"placement"`
	// Limits is what the service limits actually were.
	Limits AppliedLimits `json:"limits"`
	Start  time.Time     `json:"start"`
	End    time.Time     `json:"end"`
	// Interrupted reports a run stopped by a signal; what was measured
	// until then is kept.
	Interrupted bool `json:"interrupted,omitempty"`
	// Builds holds one entry per service.
	Builds map[string]*Build `json:"builds"`
	// Databases describes the database servers and their data.
	Databases DatabaseInfo `json:"databases"`
	// Services holds one record per implementation x workload x trial, in
	// the order they ran.
	Services []*ServiceRun `json:"services"`
	// Warnings are doubts about the run as a whole.
	Warnings []string `json:"warnings,omitempty"`
	// Faults holds the fault test of each implementation serving bank,
	// when the plan has a faults section.
	Faults []*FaultTest `json:"faults,omitempty"`
	// Comparisons are the plan's implementations measured in
	// interleaved rounds, one per workload and level, with the verdict.
	Comparisons []*Comparison `json:"comparisons,omitempty"`
	// Capacities are each arm's capacity at the plan's objective (slo),
	// one per arm and workload, with every probe of its search.
	Capacities []*Capacity `json:"capacities,omitempty"`
	// CapacityVerdicts rank the arms by capacity, one per workload.
	CapacityVerdicts []*CapacityVerdict `json:"capacity_verdicts,omitempty"`
	// Kubernetes is the cluster a Kubernetes run used, as package k8s
	// records it (nodes, pod placement, steps); absent for a local run.
	Kubernetes json.RawMessage `json:"kubernetes,omitempty"`
}

// Build is what building one service did.
type Build struct {
	Cached        bool    `json:"cached"`
	Seconds       float64 `json:"seconds"`
	ArtifactBytes int64   `json:"artifact_bytes"`
	// Image and ImageBytes name the container image built from the
	// artifact and its size (k8s run; empty for a local run).
	Image      string `json:"image,omitempty"`
	ImageBytes int64  `json:"image_bytes,omitempty"`
	Error      string `json:"error,omitempty"`
	LogTail    string `json:"log_tail,omitempty"`
}

// DatabaseInfo records the database servers' settings and data.
type DatabaseInfo struct {
	Postgres       bool    `json:"postgres"`
	MariaDB        bool    `json:"mariadb"`
	MaxConnections int     `json:"max_connections"`
	SKURows        int     `json:"sku_rows,omitempty"`
	SKUIndex       bool    `json:"sku_index"`
	Seed           int64   `json:"seed"`
	PrepareSeconds float64 `json:"prepare_seconds"`
	KnownSKUs      []int64 `json:"known_skus,omitempty"`
}

// ServiceRun is one implementation on one workload in one trial: its
// warm-up and every level. The records of one process start share its
// Start number, startup time and idle RSS: a service is started once per
// trial and measured on every workload, unless the plan restarts it per
// workload.
type ServiceRun struct {
	// Start numbers the process start this record belongs to (1, 2, ...).
	Start          int    `json:"start,omitempty"`
	Implementation string `json:"implementation"`
	Service        string `json:"service"`
	Variant        string `json:"variant,omitempty"`
	// Cores is how many CPUs the service had, at a plan's cores (0: the
	// plan's placement).
	Cores    int    `json:"cores,omitempty"`
	Workload string `json:"workload"`
	// Database is the value of the plan's database dimension this record
	// was measured at ("sku_index=false"); empty without one.
	Database string `json:"database,omitempty"`
	Trial    int    `json:"trial"`
	// Dir is the folder of this record, relative to the results folder.
	Dir string `json:"dir"`
	// Status is OK, Failed or Interrupted; a failed or interrupted run
	// keeps what it measured.
	Status  Status `json:"status"`
	Reason  string `json:"reason,omitempty"`
	LogTail string `json:"log_tail,omitempty"`
	// StartupSeconds is from process start to the first healthy answer.
	StartupSeconds float64 `json:"startup_seconds"`
	// RSS of the service tree at idle (after start), after warm-up and
	// after the last level, as the sources reported.
	RSSIdleBytes  uint64 `json:"rss_idle_bytes"`
	RSSWarmBytes  uint64 `json:"rss_after_warmup_bytes"`
	RSSAfterBytes uint64 `json:"rss_after_load_bytes"`
	ArtifactBytes int64  `json:"artifact_bytes"`
	// ImageBytes is the size of the container image the service ran
	// from (k8s run; 0 for a local run).
	ImageBytes int64 `json:"image_bytes,omitempty"`
	ExitCode   int   `json:"exit_code"`
	// NativeMemory is the JVM's native memory tracking summary after this
	// workload's last level (Java services, when the plan asks).
	NativeMemory *NativeMemory `json:"native_memory,omitempty"`
	// Contract is the contract check this start passed (or failed) before
	// the workload's load.
	Contract *Contract `json:"contract,omitempty"`
	// Warmup is how this workload's warm-up went on this start.
	Warmup *WarmupRun  `json:"warmup,omitempty"`
	Levels []*LevelRun `json:"levels"`
}

// Name is what tables call the implementation of this record: its id,
// with the database setting when the plan has a database dimension.
func (sr *ServiceRun) Name() string { return SeriesName(sr.Implementation, sr.Database) }

// SeriesName names an implementation at a database setting:
// "java-spring [sku_index=false]", or the id alone without a setting.
func SeriesName(implementation, database string) string {
	if database == "" {
		return implementation
	}
	return implementation + " [" + database + "]"
}

// NativeMemory is a JVM's native memory tracking summary (`jcmd PID
// VM.native_memory summary`): where its memory went, by category.
type NativeMemory struct {
	// ReservedBytes and CommittedBytes are the totals.
	ReservedBytes  int64 `json:"reserved_bytes"`
	CommittedBytes int64 `json:"committed_bytes"`
	// Categories are the JVM's own, in its order: Java Heap, Class,
	// Thread, Code, GC, Compiler, Internal, Symbol, ...
	Categories []MemoryCategory `json:"categories"`
	// Error says why no summary could be taken.
	Error string `json:"error,omitempty"`
}

// MemoryCategory is one category of a NativeMemory summary.
type MemoryCategory struct {
	Name           string `json:"name"`
	ReservedBytes  int64  `json:"reserved_bytes"`
	CommittedBytes int64  `json:"committed_bytes"`
}

// Contract is the contract check of one workload on one start, before
// its load: the contract suite's non-destructive checks ("full") and one
// iteration of the scenario with every response asserted, or that
// iteration alone ("quick").
type Contract struct {
	// Mode is the plan's verify: "full" or "quick".
	Mode string `json:"mode"`
	// Passed, Failed and Skipped count the suite's checks (0 with quick).
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Seconds is how long the checks took, the scenario's iteration and
	// the database reset after the suite included.
	Seconds float64 `json:"seconds"`
	// Failures are the failed checks, in the suite's order.
	Failures []CheckFailure `json:"failures,omitempty"`
	// Attempts is how often the suite ran: a suite that fails runs once
	// more, and the counts above are the last attempt's.
	Attempts int `json:"attempts,omitempty"`
	// FirstFailures are the first attempt's failures when the suite ran
	// twice.
	FirstFailures []CheckFailure `json:"first_failures,omitempty"`
}

// CheckFailure is one failed contract check.
type CheckFailure struct {
	Check  string `json:"check"`
	Detail string `json:"detail,omitempty"`
}

// WarmupRun is the record of one warm-up: how long it took to reach steady
// state, the requests it took, and its per-second curve.
type WarmupRun struct {
	// Auto reports a warm-up ended by the steady-state rule (or its cap);
	// otherwise it lasted a fixed time.
	Auto bool `json:"auto"`
	// Steady reports that the rule held before the cap (always true for a
	// fixed warm-up, which applies no rule).
	Steady bool `json:"steady"`
	// Seconds is the warm-up's length: with Auto and Steady, the time to
	// steady state.
	Seconds float64 `json:"seconds"`
	// Requests is how many requests completed during the warm-up.
	Requests int64 `json:"requests"`
	// Metric names the series the rule watched: "throughput" (req/s,
	// closed model) or "p50_ms" (open model).
	Metric string `json:"metric"`
	// Throughput is the completed requests of each second, and Series the
	// watched metric's values, from the first second on.
	Throughput []float64 `json:"throughput"`
	Series     []float64 `json:"series,omitempty"`
	// CompilerCPU is the share of one CPU (percent) the service's runtime
	// compiler threads used each second (a JVM's C1 and C2), where the
	// lab could see them; the rule waits until it is low as well.
	CompilerCPU []float64 `json:"compiler_cpu_percent,omitempty"`
	// Rule names the rule of an automatic warm-up (package warmup):
	// "compiler+trend" (a JIT whose compiler threads were watched),
	// "trend" (a JIT whose compiler could not be told apart, or threads
	// not seen) or "no-jit" (a fixed short warm-up). With Steady it ended
	// the warm-up; without, the cap did. Runtime is what the service's
	// threads showed: "hotspot", "v8", or empty for none.
	Rule    string `json:"rule,omitempty"`
	Runtime string `json:"runtime,omitempty"`
	// Window is the length (s) of the last window the rule judged: the
	// trend's, or the seconds of a no-jit warm-up. Rise is the series'
	// slope over it in the direction of warming (throughput rising,
	// latency falling), as a share of the window's mean per 10 s, and
	// RiseHigh its 95% interval's upper end; MaxRise is the rule's bound
	// on that upper end and on the interval's half-width.
	Window   int     `json:"window,omitempty"`
	Rise     float64 `json:"rise_per_10s,omitempty"`
	RiseHigh float64 `json:"rise_per_10s_high,omitempty"`
	MaxRise  float64 `json:"max_rise_per_10s,omitempty"`
	// CV is the window's coefficient of variation, for the record.
	CV float64 `json:"cv,omitempty"`
	// Noise is the machine's own per-second CV measured before the first
	// start (machine.noise.max_cv), beside the rule's figures.
	Noise float64 `json:"machine_noise,omitempty"`
	// Drift, MaxCV and MaxDrift are the figures of the rule before the
	// trend rule (a CV and a drift under thresholds), in older records.
	Drift    float64 `json:"drift,omitempty"`
	MaxCV    float64 `json:"max_cv,omitempty"`
	MaxDrift float64 `json:"max_drift,omitempty"`
}

// LevelRun is one load level of a ServiceRun.
type LevelRun struct {
	Level int    `json:"level"`
	Dir   string `json:"dir"`
	// Status is OK, Failed (the service died or the run could not
	// measure), Interrupted (cut short by a signal) or Skipped (an earlier
	// step failed, or the run was stopped before it).
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Total is the aggregate row over all steps.
	Total        load.LabelStats `json:"total"`
	TargetRate   float64         `json:"target_rate,omitempty"`
	AchievedRate float64         `json:"achieved_rate"`
	Late         int64           `json:"late_sends,omitempty"`
	Dropped      int64           `json:"dropped_sends,omitempty"`
	// Service, Database and Generator summarize the per-second samples.
	Service   Resources `json:"service"`
	Database  Resources `json:"database"`
	Generator Resources `json:"generator"`
	// GeneratorCPUs is how many CPUs the generator could use at once:
	// the CPUs it was pinned to, or its GOMAXPROCS where that was fewer.
	GeneratorCPUs int `json:"generator_cpus"`
	// GeneratorCPUPercent is the generator's mean CPU during the level in
	// percent of its GeneratorCPUs (100: every one of them busy), and
	// GeneratorBound whether it was over GeneratorBoundPercent: the
	// level's figures may then be the generator's, not the service's.
	GeneratorCPUPercent float64 `json:"generator_cpu_percent,omitempty"`
	GeneratorBound      bool    `json:"generator_bound,omitempty"`
	// Disturbance sums up what could have disturbed the level; nil when
	// the machine was not sampled.
	Disturbance *DisturbanceSummary `json:"disturbance,omitempty"`
	// Violations are invariant failures found in the database afterwards.
	Violations []Violation `json:"violations,omitempty"`
	// Writes compares the rows the level wrote with its answers (a
	// workload with a workloads/<w>/written.sql only).
	Writes Writes `json:"writes,omitempty"`
	// Thresholds are the plan's fail_if verdicts on this level.
	Thresholds []ThresholdVerdict `json:"thresholds,omitempty"`
	Warnings   []string           `json:"warnings,omitempty"`
}

// ThresholdVerdict is the verdict of one plan fail_if threshold on one level.
type ThresholdVerdict struct {
	// Expr is the threshold as the plan wrote it, e.g. "p99>200ms".
	Expr string `json:"expr"`
	// Measured is the metric's value (ms for latency metrics).
	Measured float64 `json:"measured"`
	// Crossed reports that the condition held: the run fails.
	Crossed bool `json:"crossed"`
	// Error is why it could not be measured (e.g. an unknown step label);
	// such a threshold counts as crossed.
	Error string `json:"error,omitempty"`
}

// CrossedThresholds lists every crossed threshold of a run, one line each:
// "go-stdlib bank level 50 trial 1: p99>200ms (measured 312.4)".
func CrossedThresholds(r *Run) []string {
	var out []string
	for _, sr := range r.Services {
		for _, lr := range sr.Levels {
			for _, t := range lr.Thresholds {
				if !t.Crossed {
					continue
				}
				m := fmt.Sprintf("measured %s", strconv.FormatFloat(t.Measured, 'f', -1, 64))
				if t.Error != "" {
					m = t.Error
				}
				out = append(out, fmt.Sprintf("%s %s level %d trial %d: %s (%s)", sr.Implementation, sr.Workload, lr.Level, sr.Trial, t.Expr, m))
			}
		}
	}
	return out
}

// DisturbanceSummary sums up a level's per-second disturbances.
type DisturbanceSummary struct {
	Seconds          int `json:"seconds"`
	DisturbedSeconds int `json:"disturbed_seconds"`
	// Flagged reports that more than DisturbedShare of the seconds were
	// disturbed: the level measured the machine as much as the service.
	Flagged               bool    `json:"flagged"`
	OtherServiceCPUMean   float64 `json:"other_cpu_service_cpus_mean"`
	OtherGeneratorCPUMean float64 `json:"other_cpu_generator_cpus_mean"`
	StealMean             float64 `json:"steal_percent_mean"`
	Load1Max              float64 `json:"load1_max"`
}

// SummarizeDisturbances sums up per-second disturbances.
func SummarizeDisturbances(ds map[int]Disturbance) *DisturbanceSummary {
	if len(ds) == 0 {
		return nil
	}
	out := &DisturbanceSummary{Seconds: len(ds)}
	for _, d := range ds {
		if d.Disturbed() {
			out.DisturbedSeconds++
		}
		out.OtherServiceCPUMean += d.OtherServiceCPU / float64(len(ds))
		out.OtherGeneratorCPUMean += d.OtherGeneratorCPU / float64(len(ds))
		out.StealMean += d.StealPercent / float64(len(ds))
		out.Load1Max = max(out.Load1Max, d.Load1)
	}
	out.Flagged = float64(out.DisturbedSeconds) > DisturbedShare*float64(out.Seconds)
	r := func(v float64) float64 { return math.Round(v*10) / 10 }
	out.OtherServiceCPUMean, out.OtherGeneratorCPUMean, out.StealMean = r(out.OtherServiceCPUMean), r(out.OtherGeneratorCPUMean), r(out.StealMean)
	return out
}

// Violation is one broken invariant the audit found in the database.
type Violation struct {
	Check  string // the audit query's name, e.g. "money"
	Detail string // what was found, e.g. "balances 100 != deposits 90"
	// Start is the start after whose shared rounds a comparison's audit
	// found it (0: a level's or a round's own, or not said).
	Start int `json:",omitempty"`
}

// Resources summarizes a process tree's samples over a level.
type Resources struct {
	CPUMean       float64 `json:"cpu_percent_mean"`
	CPUMax        float64 `json:"cpu_percent_max"`
	RSSPeakBytes  uint64  `json:"rss_peak_bytes"`
	ThreadsMax    int     `json:"threads_max"`
	FDsMax        int     `json:"fds_max"`
	CtxSwitchesPS float64 `json:"ctx_switches_per_s"`
}

// FileName makes s (a plan's name, an implementation's id, a setting's
// label) a file or folder name of a results folder: anything but letters,
// digits and "-_.+@" becomes "_".
func FileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == '+' || r == '@' {
			return r
		}
		return '_'
	}, s)
}

// WriteCount is one kind of row (a name of workloads/<w>/written.sql,
// "POST /transaction 200") over one measurement: the answers that said
// a row was committed, the rows the database gained, and the requests
// that could have written one without saying so (no answer, or in
// flight at either end).
type WriteCount struct {
	Answered int64 `json:"answered"`
	Written  int64 `json:"written"`
	Slack    int64 `json:"slack"`
}

// Lost is how many answers said committed with no row to show for it.
func (c WriteCount) Lost() int64 { return max(0, c.Answered-c.Written) }

// Extra is how many rows were written past the answers and the slack:
// rows for refused requests, or written twice.
func (c WriteCount) Extra() int64 { return max(0, c.Written-c.Answered-c.Slack) }

// Writes are a measurement's WriteCounts by kind of row.
type Writes map[string]WriteCount

// Add adds o's counts to w's, kind by kind; w may be nil.
func (w Writes) Add(o Writes) Writes {
	if len(o) == 0 {
		return w
	}
	if w == nil {
		w = Writes{}
	}
	for k, c := range o {
		s := w[k]
		s.Answered += c.Answered
		s.Written += c.Written
		s.Slack += c.Slack
		w[k] = s
	}
	return w
}
