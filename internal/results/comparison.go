package results

import (
	"fmt"
	"time"
)

// Comparison is a plan's implementations (its arms) at one workload and
// level, measured in interleaved rounds: every arm started and warmed,
// all kept alive, then round after round each arm measured once for a
// short interval in a fresh random order while the others are frozen, so
// the machine's drift moves every arm alike. Starts repeat this with
// fresh processes. Its Verdict is what the run concludes.
type Comparison struct {
	Workload string `json:"workload"`
	Level    int    `json:"level"`
	// Model is the load model: "closed" compares throughput, "open"
	// (where throughput is the offered rate) compares latency.
	Model string `json:"model"`
	// Arms are the implementation ids in plan order; an A/A arm is the
	// first implementation started a second time.
	Arms []string `json:"arms"`
	// RoundSeconds is each arm's measured interval in a round, after
	// SettleSeconds of load that are not counted.
	RoundSeconds  float64 `json:"round_seconds"`
	SettleSeconds float64 `json:"settle_seconds"`
	// Precision is the half-width every adjacent pair's interval is meant
	// to reach (0.03 is ±3%).
	Precision float64 `json:"precision"`
	// AtRate marks a comparison at one open-model rate (Level, req/s)
	// that a closed-model plan adds beside its levels (the plan's
	// at_rate): the same work for every arm, compared on latency, CPU
	// per request and memory. RateRule says how the rate was chosen
	// ("50% of python-fastapi's 2,410 req/s in start 1", or "the plan's").
	AtRate   bool   `json:"at_rate,omitempty"`
	RateRule string `json:"rate_rule,omitempty"`
	// Shape says how an open-model comparison's arrivals came
	// (load.OpenModel.Shape); Arrivals and Connections are its settings.
	Shape       string `json:"shape,omitempty"`
	Arrivals    string `json:"arrivals,omitempty"`
	Connections int    `json:"connections,omitempty"`
	// Contrast marks the same rate under a contrasting shape (at_rate's
	// contrast), measured to tell whether CPU per request ranks the
	// stacks or the traffic: the comparison of the same workload and rate
	// without it is the one it contrasts.
	Contrast bool `json:"contrast,omitempty"`
	// Busy marks the busy rate (at_rate's `busy`): a share of the
	// second-slowest arm's throughput, where latency differs; LeftOut
	// names the arms that could not carry it, with why, left out of its
	// rounds.
	Busy    bool              `json:"busy,omitempty"`
	LeftOut map[string]string `json:"left_out,omitempty"`
	// Database is the workload's database server and the CPUs it ran
	// on; nil for a workload without one.
	Database *DatabaseCPUs `json:"database,omitempty"`
	// Rounds in the order they ran, over every start.
	Rounds []Round `json:"rounds"`
	// Verdict is the ranking with an interval on every adjacent pair.
	Verdict *Verdict `json:"verdict,omitempty"`
	// Violations are the workload's invariants that failed in the audit
	// after a start's rounds.
	Violations []Violation `json:"violations,omitempty"`
	// Warnings are doubts about this comparison (a thawed arm that did
	// not settle, a start that failed).
	Warnings []string `json:"warnings,omitempty"`
}

// Round is one round of a Comparison: every live arm measured once.
type Round struct {
	// Start is the trial: the fresh start of every arm this round ran on.
	Start int `json:"start"`
	// Index numbers the rounds of one start from 1.
	Index int `json:"index"`
	// Arms are the arms' intervals in the order they were measured.
	Arms []ArmRound `json:"arms"`
	// Repeated are the intervals measured again because the machine
	// disturbed them (their Disturbed says how): kept for the record,
	// left out of the verdict; Arms holds the repeat.
	Repeated []ArmRound `json:"repeated,omitempty"`
}

// ArmRound is one arm's measured interval in a round.
type ArmRound struct {
	Arm string `json:"arm"`
	// At is when the measured interval began.
	At         time.Time `json:"at"`
	Seconds    float64   `json:"seconds"`
	Throughput float64   `json:"throughput"`
	Samples    int64     `json:"samples"`
	Errors     int64     `json:"errors"`
	P50Ms      float64   `json:"p50_ms"`
	P99Ms      float64   `json:"p99_ms"`
	// LatenessP99Ms is the open model's send lateness p99 over the
	// interval: the generator's (and the host's) own share of P99Ms.
	LatenessP99Ms float64 `json:"lateness_p99_ms,omitempty"`
	// Writes compares the rows the round (its settle included) wrote
	// with its answers, on a workload that writes rows: the other arms
	// are frozen meanwhile, so the rows are this arm's alone. A pointer
	// keeps an ArmRound comparable.
	Writes *RoundWrites `json:"writes,omitempty"`
	// Queued counts the open model's sends that waited for a free
	// connection (every one busy: the service's backlog), Dropped those
	// never started before the interval ended.
	Queued  int64 `json:"queued_sends,omitempty"`
	Dropped int64 `json:"dropped_sends,omitempty"`
	// ServiceCPUSeconds is the CPU time the arm's process tree used from
	// just before to just after the interval (user+system, /proc): with
	// Samples, the CPU per request. 0: not read (older runs derive it
	// from ServiceCPU).
	ServiceCPUSeconds float64 `json:"service_cpu_seconds,omitempty"`
	// RSSBytes, Threads and FDs are the arm's process tree at the end of
	// the interval: what the leak check follows over a start's rounds.
	RSSBytes uint64 `json:"rss_bytes,omitempty"`
	Threads  int    `json:"threads,omitempty"`
	FDs      int    `json:"fds,omitempty"`
	// DBConnections counts the arm's process tree's established TCP
	// connections to the run's database servers at the end of the
	// interval (monitor.Connections): the leak check's fourth resource,
	// read only on a workload with a database.
	DBConnections int `json:"db_connections,omitempty"`
	// ServiceCPU is the arm's process tree's CPU during the interval, in
	// percent of one CPU; GeneratorCPU the generator's, in percent of all
	// of its CPUs.
	ServiceCPU   float64 `json:"service_cpu_percent"`
	GeneratorCPU float64 `json:"generator_cpu_percent"`
	// What else the machine did during the interval: the hypervisor's
	// steal time in percent of all CPUs, and the busy time of other
	// processes on the service's CPUs and on the generator's, in percent
	// of one CPU (every process's busy time there, less the service's or
	// the generator's own; the generator's CPUs also run the databases).
	// Negative: not measured.
	StealPercent      float64 `json:"steal_percent"`
	OtherServiceCPU   float64 `json:"other_service_cpu_percent"`
	OtherGeneratorCPU float64 `json:"other_generator_cpu_percent"`
	// DatabaseCPU is the CPU the workload's database server used during
	// the interval, its whole process tree (PostgreSQL's postmaster and a
	// backend per connection), in percent of one CPU: 150 is one and a
	// half CPUs busy. 0: the workload has no database, or it was not
	// read. Comparison.Database says which CPUs the server had.
	DatabaseCPU float64 `json:"database_cpu,omitempty"`
	// Disturbed says how the machine disturbed the interval, judged from
	// this record alone (rounds.Disturbed); such an interval is
	// measured again and left out of the verdict.
	Disturbed string `json:"disturbed,omitempty"`
	// SettleThroughput and SettleErrors are the uncounted load right
	// after the thaw.
	SettleThroughput float64 `json:"settle_throughput"`
	SettleErrors     int64   `json:"settle_errors,omitempty"`
	// Misbehaved says how the arm failed to settle after its thaw
	// (errors, a first second far below the interval); such a round is
	// left out of the verdict and reported.
	Misbehaved string `json:"misbehaved,omitempty"`
}

// Verdict ranks a Comparison's arms and gives every adjacent pair the
// 95% interval of their ratio (stats.RoundRatioCI95: a random-effects
// model over starts and rounds, paired within each round).
type Verdict struct {
	// Metric is what is compared: "throughput" (more is better) or
	// "p99 latency" (less is better).
	Metric string `json:"metric"`
	// Ranking is the arms, best first.
	Ranking []string `json:"ranking"`
	// Pairs are the adjacent pairs of the ranking, in order.
	Pairs []PairRatio `json:"pairs"`
	// CPU compares the same adjacent pairs on service CPU per request.
	CPU []PairRatio `json:"cpu_per_request,omitempty"`
	// P99Best compares every ranked arm but the best with the best on
	// p99 (an open-model comparison), so a stack several times the best
	// is named as such even where its neighbours are close: Better is
	// the best arm, Ratio the arm's p99 over the best's.
	P99Best []PairRatio `json:"p99_against_best,omitempty"`
	// ShapeDepends lists the pairs whose order on CPU per request turns
	// between this comparison's shape and its contrast's, each beyond its
	// interval: the cost ranks the traffic there, not the stacks.
	ShapeDepends []ShapeFlip `json:"shape_depends,omitempty"`
	// CPURanking ranks the arms by their CPU per request, least first,
	// and CPUPairs gives each adjacent pair of it the ratio's interval
	// (a comparison at one rate, AtRate: the cost of the same work).
	CPURanking []string    `json:"cpu_ranking,omitempty"`
	CPUPairs   []PairRatio `json:"cpu_pairs,omitempty"`
	// Arms are each arm's own figures over the rounds the verdict kept:
	// the scorecard's cells.
	Arms []ArmFigures `json:"arm_figures,omitempty"`
	// Overloaded names the arms that could not carry a comparison's rate
	// (AtRate), with why; they are left out of its ranking.
	Overloaded map[string]string `json:"overloaded,omitempty"`
	// LatenessP99Ms is the generator's send lateness p99 over the
	// comparison's rounds (the median of its arms' rounds): the host's
	// and the generator's own floor under every p99 it compares. Pairs
	// whose p99s differ by less than it are not ranked by latency
	// (PairRatio.InsideFloor).
	LatenessP99Ms float64 `json:"lateness_p99_ms,omitempty"`
	// FloorTakesP99 reports a lateness over rounds.FloorShare of the
	// best arm's p99: the p99s measure the host as much as the services.
	FloorTakesP99 bool `json:"floor_takes_p99,omitempty"`
	// Leaks are the growth checks of every arm: RSS, threads, file
	// descriptors and (on a workload with a database) database
	// connections over the rounds of each start.
	Leaks []Growth `json:"leaks,omitempty"`
	// Repeated counts the arms' rounds the machine disturbed and that
	// were measured again at once; Disturbed those judged disturbed from
	// their records and left out (no repeat was left, or judged after).
	Repeated  int `json:"repeated,omitempty"`
	Disturbed int `json:"disturbed,omitempty"`
	// Busy counts the rounds judged disturbed but kept: more than a third
	// of their arm's rounds in the start were, so the machine was this
	// busy throughout (rounds.MaxLeftOut).
	Busy int `json:"busy,omitempty"`
	// BudgetSeconds is the plan's time budget, and Bought the half-width
	// of the widest adjacent pair it bought; NeedSeconds is about what
	// budget the variances measured say would bring every pair within
	// the precision (0: within it already; -1: no design of at most
	// trials_max starts reaches it).
	BudgetSeconds float64 `json:"budget_seconds,omitempty"`
	Bought        float64 `json:"bought,omitempty"`
	NeedSeconds   float64 `json:"need_seconds,omitempty"`
	// TookSeconds is the run's time when it overran the budget (0:
	// within it), SetupsSeconds what its OverranStarts' setups took of it.
	TookSeconds   float64 `json:"took_seconds,omitempty"`
	SetupsSeconds float64 `json:"setups_seconds,omitempty"`
	OverranStarts int     `json:"overran_starts,omitempty"`
	// AA is the machine checked against itself: the first
	// implementation against its own second start, when the plan asks.
	AA *PairRatio `json:"aa,omitempty"`
	// CPUAA is the same twins' CPU per request, at one rate: the twin is
	// left out of the CPU ranking, so this is the only place the
	// verdict judges the machine against itself on cost.
	CPUAA *PairRatio `json:"cpu_aa,omitempty"`
	// GeneratorBound lists the arms during whose rounds the generator
	// used more than GeneratorBoundPercent of its CPUs on average, with
	// that figure: their figures may be the generator's.
	GeneratorBound map[string]float64 `json:"generator_bound,omitempty"`
	// DatabaseBound lists the arms during whose rounds the workload's
	// database had no room left on its CPUs (DatabaseBoundPercent), with
	// the database's mean CPU over those rounds in percent of its CPUs:
	// their throughput is the database's, not the service's.
	// WithGenerator gives, where the database shares the generator's
	// CPUs, the two's mean CPU together over those CPUs for the same
	// arms; Database says which server and CPUs (the comparison's).
	DatabaseBound map[string]float64 `json:"database_bound,omitempty"`
	WithGenerator map[string]float64 `json:"database_with_generator,omitempty"`
	Database      *DatabaseCPUs      `json:"database,omitempty"`
	// Unresolved names the pairs whose interval is wider than the
	// precision, and what they would need.
	Unresolved []string `json:"unresolved,omitempty"`
	// MeasuredSeconds is the time spent in rounds (settling included).
	MeasuredSeconds float64 `json:"measured_seconds"`
	// FailIf is the plan's fail_if slower_than judged on every arm
	// against the baseline (rounds.Slower).
	FailIf []Slower `json:"fail_if,omitempty"`
}

// ShapeFlip is a pair of arms whose order on CPU per request differs
// between two shapes of the same rate: Main has Cheaper cheaper under
// the comparison's shape, Contrast has Dearer cheaper under
// ContrastShape, both significant.
type ShapeFlip struct {
	Cheaper       string    `json:"cheaper"`
	Dearer        string    `json:"dearer"`
	Main          PairRatio `json:"main"`
	Contrast      PairRatio `json:"contrast"`
	ContrastShape string    `json:"contrast_shape"`
}

// PairRatio is how much better one arm is than the next: the ratio of
// Better's figure to Worse's (throughput) or Worse's to Better's
// (latency, CPU per request), so it is at least 1 when the ranking holds.
type PairRatio struct {
	Better string  `json:"better"`
	Worse  string  `json:"worse"`
	Ratio  float64 `json:"ratio"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	// HalfWidth is (High-Low)/2 relative to Ratio.
	HalfWidth float64 `json:"half_width"`
	Starts    int     `json:"starts"`
	Rounds    int     `json:"rounds"`
	// BetweenSD and WithinSD are the log ratio's estimated spread
	// between starts and between rounds (WithinSD from the mirrored pairs
	// of rounds: what a start's mean sees; stats.RoundRatio).
	BetweenSD float64 `json:"between_sd"`
	WithinSD  float64 `json:"within_sd"`
	// RoundSD is the per-round log ratio's own spread within a start,
	// before the mirrored pairs cancel what drifted between a round's arms.
	RoundSD float64 `json:"round_sd,omitempty"`
	// PairedSD reports that WithinSD comes from the mirrored pairs (a
	// start with two complete pairs or more); without it WithinSD is
	// RoundSD.
	PairedSD bool `json:"paired_sd,omitempty"`
	// Significant is whether the interval excludes 1.
	Significant bool `json:"significant"`
	// OneStart reports an interval from one start's rounds alone: the
	// machine's noise, not a second start's difference.
	OneStart bool `json:"one_start,omitempty"`
	// RoundsFloor is the half-width the interval would have were its
	// starts to differ only by the rounds' noise (stats.RoundsFloor);
	// recorded where it is wider than HalfWidth, which then does not
	// count as precise: the starts agreed by chance.
	RoundsFloor float64 `json:"rounds_floor,omitempty"`
	// Need estimates what would bring an unresolved pair within the
	// precision ("5 starts of 26 rounds"); empty when resolved.
	Need string `json:"need,omitempty"`
	// Dropped counts the pair's rounds left out as contaminated (far
	// from the comparison's robust fit, stats.RoundComparison).
	Dropped int `json:"dropped,omitempty"`
	// Arms is how many arms the interval's between-start variance was
	// learnt from (2: the pair alone), and DFPerStart the degrees of
	// freedom each start beyond the first adds (what Need plans with).
	Arms       int     `json:"arms,omitempty"`
	DFPerStart float64 `json:"df_per_start,omitempty"`
	// InsideFloor reports a latency pair whose p99s differ by less than
	// the host's own floor (Verdict.LatenessP99Ms): not ranked by it.
	InsideFloor bool `json:"inside_floor,omitempty"`
}

// ArmFigures are one arm's figures in a comparison, over the rounds the
// verdict kept: geometric means of throughput, p50, p99 and CPU per
// request, and the median RSS with its range over starts.
type ArmFigures struct {
	Arm           string  `json:"arm"`
	Throughput    float64 `json:"throughput"`
	P50Ms         float64 `json:"p50_ms"`
	P99Ms         float64 `json:"p99_ms"`
	CPUPerRequest float64 `json:"cpu_us_per_request"`
	// CPULow and CPUHigh are the lowest and highest start's geometric
	// mean of CPU per request.
	CPULow  float64 `json:"cpu_low_us,omitempty"`
	CPUHigh float64 `json:"cpu_high_us,omitempty"`
	// RSSBytes is the median of the rounds' RSS; RSSLow and RSSHigh the
	// lowest and highest start's median.
	RSSBytes uint64 `json:"rss_bytes,omitempty"`
	RSSLow   uint64 `json:"rss_low_bytes,omitempty"`
	RSSHigh  uint64 `json:"rss_high_bytes,omitempty"`
	Rounds   int    `json:"rounds"`
}

// Growth is one arm's check for a leak of one resource ("rss", "threads",
// "fds", "db_connections"): the slope over the rounds of each start (a common slope, each
// start its own intercept), per minute, with its 95% interval.
type Growth struct {
	Arm      string `json:"arm"`
	Resource string `json:"resource"`
	// PerMinute is the slope in the resource's unit (bytes, threads,
	// descriptors, connections) per minute; Low and High its 95% interval.
	PerMinute float64 `json:"per_minute"`
	Low       float64 `json:"low"`
	High      float64 `json:"high"`
	// Limit is the growth a minute above which a slope whose interval
	// excludes 0 is a leak.
	Limit float64 `json:"limit"`
	// Points and Minutes are the readings and the time they span.
	Points  int     `json:"points"`
	Minutes float64 `json:"minutes"`
	Leak    bool    `json:"leak"`
	// Settling marks a growth over the rounds that has stopped: the
	// slope over the later half of each start (LaterPerMinute) is at or
	// below the limit, as a heap that grows to its size under a new rate
	// and then stays. It is not a leak.
	Settling       bool    `json:"settling,omitempty"`
	LaterPerMinute float64 `json:"later_per_minute,omitempty"`
}

// GeneratorBoundPercent is the generator's CPU, in percent of its CPUs,
// above which an arm or a level is marked generator-bound.
const GeneratorBoundPercent = 80

// DatabaseBoundPercent is the database's mean CPU over an arm's rounds,
// in percent of the CPUs it is pinned to, above which the arm is marked
// database-bound: the server has no room left there, so the service
// waits on it and its throughput is the database's. It is the
// generator's line (GeneratorBoundPercent) for the same reason: past it
// the runnable work queues for the CPUs. Where the database shares the
// generator's CPUs (the placement of a small host), the two's CPU
// together over those CPUs is judged against it instead: those CPUs are
// full whoever fills them, and every request crosses both, so the
// throughput measures them, not the service; there an arm whose
// generator alone is over GeneratorBoundPercent is named generator-bound
// only.
const DatabaseBoundPercent = 80

// DatabaseCPUs is where a comparison's database server ran.
type DatabaseCPUs struct {
	// Engine names the server: "PostgreSQL" or "MariaDB".
	Engine string `json:"engine"`
	// CPUs is the placement's database_cpus (taskset's list form) and
	// Count how many CPUs that is; 0 when unknown (no verdict on it).
	CPUs  string `json:"cpus"`
	Count int    `json:"count"`
	// WithGenerator reports that they are the generator's CPUs too.
	WithGenerator bool `json:"with_generator,omitempty"`
}

// GeneratorNote is how the report marks a generator-bound level or cell:
// "generator-bound, generator 87% of 1 CPU".
func GeneratorNote(percent float64, cpus int) string {
	unit := "CPUs"
	if cpus == 1 {
		unit = "CPU"
	}
	return fmt.Sprintf("generator-bound, generator %.0f%% of %d %s", percent, cpus, unit)
}

// RoundWrites is what an arm round wrote against what it answered.
type RoundWrites struct {
	Counts Writes `json:"counts"`
	// Violations are what the comparison found: answers said committed
	// without a row, or rows past the answers.
	Violations []Violation `json:"violations,omitempty"`
}
