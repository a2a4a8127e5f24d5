package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
)

// Default thresholds of the headline: the most throughput at an acceptable
// latency, meaning a median p99 at or under DefaultAcceptableP99Ms and a
// median error rate at or under DefaultAcceptableErrorPercent.
const (
	DefaultAcceptableP99Ms        = 100
	DefaultAcceptableErrorPercent = 1
)

// SpreadWarning is the spread of throughput between trials, relative to
// their median, above which a result is called noisy.
const SpreadWarning = 0.10

// Metric is one number measured per trial of a cell.
type Metric struct {
	// Key names the metric in JSON, CSV and compare ("throughput").
	Key string
	// Title is the column heading, with its unit.
	Title string
	// Higher reports whether a higher value is better.
	Higher bool
	// Of reads the metric from one trial.
	Of func(*results.LevelRun, *results.ServiceRun) float64
}

// Metrics are the per-trial numbers every output knows, in table order.
var Metrics = []Metric{
	{"samples", "Samples", true, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return float64(l.Total.Samples) }},
	{"mean_ms", "Average ms", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return l.Total.Latency.Mean }},
	{"p50_ms", "Median ms", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return l.Total.Latency.P50 }},
	{"p90_ms", "90% ms", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return l.Total.Latency.P90 }},
	{"p95_ms", "95% ms", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return l.Total.Latency.P95 }},
	{"p99_ms", "99% ms", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return l.Total.Latency.P99 }},
	{"min_ms", "Min ms", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return l.Total.Latency.Min }},
	{"max_ms", "Max ms", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return l.Total.Latency.Max }},
	{"error_percent", "Error %", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return errorPercent(l) }},
	{"throughput", "Throughput/s", true, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return l.Total.Throughput }},
	{"received_kb_per_s", "Received KB/s", true, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return l.Total.ReceivedKBps }},
	{"cpu_percent", "CPU %", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return l.Service.CPUMean }},
	{"rss_peak_bytes", "Peak RSS", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return float64(l.Service.RSSPeakBytes) }},
	{"threads", "Threads", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return float64(l.Service.ThreadsMax) }},
	{"fds", "FDs", false, func(l *results.LevelRun, _ *results.ServiceRun) float64 { return float64(l.Service.FDsMax) }},
	{"startup_seconds", "Startup s", false, func(_ *results.LevelRun, s *results.ServiceRun) float64 { return s.StartupSeconds }},
	{"artifact_bytes", "Artifact", false, func(_ *results.LevelRun, s *results.ServiceRun) float64 { return float64(s.ArtifactBytes) }},
	{"image_bytes", "Image", false, func(_ *results.LevelRun, s *results.ServiceRun) float64 { return float64(s.ImageBytes) }},
}

// metric returns the metric of a key; it panics on an unknown key (a
// programming error).
func metric(key string) Metric {
	for _, m := range Metrics {
		if m.Key == key {
			return m
		}
	}
	panic("report: unknown metric " + key)
}

// Value is a metric over the trials of a cell: the median and range.
type Value struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Trials []float64 `json:"trials"`
}

func valueOf(vs []float64) Value {
	v := Value{Trials: vs}
	if len(vs) == 0 {
		return v
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	v.Median = s[n/2]
	if n%2 == 0 {
		v.Median = (s[n/2-1] + s[n/2]) / 2
	}
	v.Min, v.Max = s[0], s[n-1]
	return v
}

// CellSummary is what the tables say of one cell (a results.Cell): one
// implementation at one level of one workload, each metric over trials.
type CellSummary struct {
	// Implementation names the cell's series: the implementation id, and
	// with a database dimension its setting ("java-spring [sku_index=false]").
	Implementation string `json:"implementation"`
	// ID is the implementation id alone, and Database the setting's label.
	ID       string `json:"id,omitempty"`
	Database string `json:"database,omitempty"`
	Workload string `json:"workload"`
	Level    int    `json:"level"`
	// Trials counts the trials that measured the cell.
	Trials int `json:"trials"`
	// Values holds every metric by key; empty when nothing was measured.
	Values map[string]Value `json:"metrics,omitempty"`
	// Spread is the trial-to-trial spread of throughput and p99 (two
	// trials or more): mean, coefficient of variation, 95% interval.
	Spread map[string]Spread `json:"spread,omitempty"`
	// GeneratorBound marks a cell whose generator was over
	// results.GeneratorBoundPercent of its CPUs in a trial: "generator-bound,
	// generator 87% of 1 CPU" (the busiest trial; "in 1 of 3 trials" when
	// not in all). Its figures may be the generator's.
	GeneratorBound string `json:"generator_bound,omitempty"`
	cell           *results.Cell
}

// generatorBound is a cell's GeneratorBound mark ("" when no trial was).
func generatorBound(levels []*results.LevelRun) string {
	var worst *results.LevelRun
	n := 0
	for _, l := range levels {
		if !l.GeneratorBound {
			continue
		}
		n++
		if worst == nil || l.GeneratorCPUPercent > worst.GeneratorCPUPercent {
			worst = l
		}
	}
	if worst == nil {
		return ""
	}
	s := results.GeneratorNote(worst.GeneratorCPUPercent, worst.GeneratorCPUs)
	if n < len(levels) {
		s += fmt.Sprintf(" in %d of %d trials", n, len(levels))
	}
	return s
}

// Spread is a metric's mean over trials (fresh service starts), its
// coefficient of variation and the 95% confidence interval of the mean.
type Spread struct {
	Mean float64 `json:"mean"`
	CV   float64 `json:"cv"`
	Low  float64 `json:"ci95_low"`
	High float64 `json:"ci95_high"`
	N    int     `json:"n"`
}

func (s Spread) interval() stats.ConfidenceInterval {
	return stats.ConfidenceInterval{Mean: s.Mean, Low: s.Low, High: s.High, N: s.N}
}

// spreadKeys are the metrics whose spread a cell reports.
var spreadKeys = []string{"throughput", "p99_ms"}

// Get returns the median of a metric.
func (c *CellSummary) Get(key string) float64 { return c.Values[key].Median }

// Workload is the part of a summary about one workload.
type Workload struct {
	Name string `json:"name"`
	// Headline says who served the most at acceptable latency.
	Headline string `json:"headline"`
	// Best is the cell the headline names, if any.
	Best *CellSummary `json:"best,omitempty"`
	// Verdicts compare, level by level, the two implementations with the
	// most throughput: a winner only where their 95% intervals do not
	// overlap.
	Verdicts []string `json:"verdicts,omitempty"`
	// VerdictBasis says what the verdicts rest on; VerdictHeadline is the
	// interleaved comparisons' ranking, which becomes the Headline.
	VerdictBasis    string `json:"verdict_basis,omitempty"`
	VerdictHeadline string `json:"verdict_headline,omitempty"`
	// Recorded are the verdict's lines as the run recorded them, where
	// judging again (WithRejudging) changed them.
	Recorded []string `json:"recorded_verdicts,omitempty"`
	// Comparisons are the run's interleaved comparisons of this workload.
	Comparisons []*results.Comparison `json:"-"`
	// Capacities are each implementation's capacity at the plan's
	// objective, and Sizing what each needs for the plan's sizing load.
	Capacities []CapacityRow `json:"capacities,omitempty"`
	Sizing     []SizingRow   `json:"sizing,omitempty"`
	// CapacityUnit is what the capacities count: "req/s" or "users".
	CapacityUnit string `json:"capacity_unit,omitempty"`
	// CapacityFound is whether some implementation met the objective:
	// the headline then names a capacity.
	CapacityFound bool           `json:"-"`
	Cells         []*CellSummary `json:"cells"`
	// Scaling is the cores table of a plan with cores, and Crossings
	// where one stack's figure passes another's as cores grow.
	Scaling   []ScalingRow `json:"scaling,omitempty"`
	Crossings []Crossing   `json:"crossings,omitempty"`
	// ScalingFit are the Universal Scalability Law's lines below the
	// cores table (scalingFit): each stack's fit, where the fitted curves
	// cross, and the cores the plan's sizing load needs.
	ScalingFit []string `json:"scaling_fit,omitempty"`
	// Curves are the latency-load curves: from capacity searches' probes,
	// or an open-model plan's levels.
	Curves   []Curve  `json:"curves,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Summary is everything the tables say about a run: the content of the
// JSON output, and the model of the Markdown and HTML ones.
type Summary struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Kind        string    `json:"kind"`
	Model       string    `json:"model"`
	LevelUnit   string    `json:"level_unit"`
	Trials      int       `json:"trials"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	Command     string    `json:"command,omitempty"`
	Interrupted bool      `json:"interrupted,omitempty"`
	// Implementations in plan order: the order of colours.
	Implementations []string    `json:"implementations"`
	Workloads       []*Workload `json:"workloads"`
	// Warnings concern the run as a whole.
	Warnings []string `json:"warnings,omitempty"`
	// Failures are the service runs that failed.
	Failures []Failure `json:"failures,omitempty"`
	// InterruptedLevels name the levels a signal cut short ("go-stdlib
	// bank at 50 users, trial 1: interrupted after 3.2s of 30s"): their
	// files hold what was measured, the tables leave them out.
	InterruptedLevels []string `json:"interrupted_levels,omitempty"`
	// Warmups are the warm-ups of every service start and workload.
	Warmups []WarmupRow `json:"warmups,omitempty"`
	// Memory is the RSS of every start and workload before warm-up,
	// after it and after load, with the JVM's native memory summary.
	Memory []MemoryRow `json:"memory,omitempty"`
	// Published sets the source experiments' figures beside this run's.
	Published []PublishedRow `json:"published,omitempty"`
	// Thresholds are the plan's fail_if verdicts, one per level checked.
	Thresholds []ThresholdRow `json:"thresholds,omitempty"`
	// SizingLoad is the plan's sizing load in words.
	SizingLoad string `json:"sizing_load,omitempty"`
	// Scorecards are the whole answer, one per workload compared in
	// interleaved rounds: the first thing summary.md and report.html say.
	Scorecards []*Scorecard `json:"scorecards,omitempty"`
}

// ThresholdRow is one fail_if threshold checked on one level.
type ThresholdRow struct {
	Implementation string `json:"implementation"`
	Workload       string `json:"workload"`
	Level          int    `json:"level"`
	Trial          int    `json:"trial"`
	results.ThresholdVerdict
}

// Verdict is "CROSSED" or "ok".
func (t ThresholdRow) Verdict() string {
	if t.Crossed {
		return "CROSSED"
	}
	return "ok"
}

// Measure is the measured value, or why there is none.
func (t ThresholdRow) Measure() string { return thresholdMeasure(t.ThresholdVerdict) }

func thresholdMeasure(t results.ThresholdVerdict) string {
	if t.Error != "" {
		return t.Error
	}
	return "measured " + strconv.FormatFloat(t.Measured, 'f', -1, 64)
}

// WarmupRow is one warm-up: how long it took to reach steady state and
// the requests it took, beside the service's startup time.
type WarmupRow struct {
	Implementation string  `json:"implementation"`
	Workload       string  `json:"workload"`
	Trial          int     `json:"trial"`
	StartupSeconds float64 `json:"startup_seconds"`
	*results.WarmupRun
}

// MemoryRow is the memory of one start on one workload, as the sources
// read it: RSS before warm-up, after warm-up, after load, and for a JVM
// with native memory tracking its summary by category.
type MemoryRow struct {
	Implementation string                `json:"implementation"`
	Workload       string                `json:"workload"`
	Trial          int                   `json:"trial"`
	RSSIdleBytes   uint64                `json:"rss_before_warmup_bytes"`
	RSSWarmBytes   uint64                `json:"rss_after_warmup_bytes"`
	RSSAfterBytes  uint64                `json:"rss_after_load_bytes"`
	NativeMemory   *results.NativeMemory `json:"native_memory,omitempty"`
}

// Failure is one failed service run.
type Failure struct {
	Implementation string `json:"implementation"`
	Workload       string `json:"workload"`
	Trial          int    `json:"trial"`
	Reason         string `json:"reason"`
	LogTail        string `json:"log_tail,omitempty"`
	// Checks are the contract checks it failed before its load, each
	// "name: detail".
	Checks []string `json:"failed_checks,omitempty"`
}

// applyObjective makes a plan's objective (slo) the acceptable latency,
// unless WithAcceptable said otherwise: its p99 limit (or its highest
// percentile's when it has no p99) and its error rate.
func applyObjective(o *options, p *plan.Plan) {
	slo := p.SLO
	if slo == nil || o.acceptableSet || len(slo.Percentiles) == 0 {
		return
	}
	limit, ok := slo.Limit(99)
	if !ok {
		limit = time.Duration(slo.Percentiles[len(slo.Percentiles)-1].Limit)
	}
	o.p99Ms = float64(limit) / 1e6
	o.errorPercent = 100 * float64(slo.Errors)
}

// Summarize computes the summary of loaded results.
func Summarize(res *Results, opts ...Option) *Summary {
	o := newOptions(opts)
	if o.rejudge {
		res.Rejudge()
	}
	r := res.Run
	p := r.Plan
	applyObjective(&o, p)
	s := &Summary{Name: p.Name, Description: p.Description, Kind: res.Kind, Model: p.Load.Model, Trials: p.Trials,
		Start: r.Start, End: r.End, Command: r.Command, Interrupted: r.Interrupted}
	s.LevelUnit = levelUnit(p.Load.Model)
	for _, sr := range r.Services {
		// The starts measured: more than the plan's trials where the
		// rounds asked for more.
		s.Trials = max(s.Trials, sr.Trial)
	}
	s.Implementations = append(s.Implementations, p.ArmIDs(len(r.Kubernetes) > 0)...)
	byWorkload := map[string]*Workload{}
	for _, w := range p.Workloads {
		wl := &Workload{Name: w.Name}
		byWorkload[w.Name] = wl
		s.Workloads = append(s.Workloads, wl)
	}
	s.addCells(r, byWorkload)
	// Warnings: the run's own, then per workload.
	s.Warnings = append(s.Warnings, r.Warnings...)
	for _, n := range r.Limits.Notes {
		s.Warnings = append(s.Warnings, "limits: "+n)
	}
	for _, sr := range r.Services {
		if wl := byWorkload[sr.Workload]; wl != nil {
			s.addService(sr, wl)
		}
	}
	for _, wl := range s.Workloads {
		for _, c := range wl.Cells {
			if c.Trials < 2 {
				continue
			}
			v := c.Values["throughput"]
			if v.Median > 0 && (v.Max-v.Min)/v.Median > SpreadWarning {
				wl.Warnings = append(wl.Warnings, fmt.Sprintf("%s at %d %s: throughput varies %.0f%% between trials (%s–%s req/s): noisy", c.Implementation, c.Level, s.LevelUnit, 100*(v.Max-v.Min)/v.Median, human.Count(v.Min), human.Count(v.Max)))
			}
		}
		wl.Best, wl.Headline = headline(wl, s.LevelUnit, o)
		wl.Verdicts = verdicts(wl, s.LevelUnit)
		wl.VerdictBasis = "throughput across fresh starts"
	}
	if len(r.Comparisons) > 0 {
		for _, wl := range s.Workloads {
			wl.Verdicts = nil
		}
		applyComparisons(r, byWorkload, s.LevelUnit)
	}
	if len(r.Capacities) > 0 {
		applyCapacities(r, byWorkload, s)
	}
	s.Scorecards = scorecards(r)
	if res.rejudged {
		for _, wl := range s.Workloads {
			if len(wl.Verdicts) > 0 {
				wl.VerdictBasis += "; " + RejudgedNote
				wl.Recorded = recordedLines(res, wl.Name, wl.Verdicts)
			}
		}
	}
	s.Published = published(p, byWorkload)
	for _, wl := range s.Workloads {
		wl.Scaling = scalingRows(r, wl)
		wl.Crossings = crossings(wl.Scaling)
		wl.ScalingFit = scalingFit(r, wl)
		wl.Curves = curves(r, wl, s.Implementations)
	}
	return s
}

// addCells summarises every cell of r (implementation × workload ×
// level over its trials) into its workload: the metrics' medians and
// ranges, and with two trials or more their spread.
func (s *Summary) addCells(r *results.Run, byWorkload map[string]*Workload) {
	for _, lc := range results.Cells(r) {
		c := &CellSummary{Implementation: lc.Name(), ID: lc.Implementation, Database: lc.Database, Workload: lc.Workload, Level: lc.Level, Trials: len(lc.Levels), cell: lc}
		if !slices.Contains(s.Implementations, c.Implementation) {
			s.Implementations = append(s.Implementations, c.Implementation)
		}
		if len(lc.Levels) > 0 {
			c.GeneratorBound = generatorBound(lc.Levels)
			c.Values = map[string]Value{}
			for _, m := range Metrics {
				vs := make([]float64, len(lc.Levels))
				for i, l := range lc.Levels {
					vs[i] = round(m.Of(l, lc.Services[i]))
				}
				c.Values[m.Key] = valueOf(vs)
			}
			if len(lc.Levels) > 1 {
				c.Spread = map[string]Spread{}
				for _, k := range spreadKeys {
					vs := c.Values[k].Trials
					iv := stats.CI95(vs)
					c.Spread[k] = Spread{Mean: round(iv.Mean), CV: round(stats.CV(vs)), Low: round(iv.Low), High: round(iv.High), N: iv.N}
				}
			}
		}
		if wl := byWorkload[c.Workload]; wl != nil {
			wl.Cells = append(wl.Cells, c)
		}
	}
}

// addService adds what one service record says beyond its figures: its
// warm-up and memory rows, a contract passed on a second attempt, a
// failure or an interrupt, and its levels' interruptions, failed
// invariants, thresholds, warnings and errors, as warnings of wl.
func (s *Summary) addService(sr *results.ServiceRun, wl *Workload) {
	if sr.Warmup != nil {
		s.Warmups = append(s.Warmups, WarmupRow{sr.Name(), sr.Workload, sr.Trial, sr.StartupSeconds, sr.Warmup})
		if sr.Warmup.Auto && !sr.Warmup.Steady {
			wl.Warnings = append(wl.Warnings, fmt.Sprintf("%s, trial %d: NOT STEADY after the %.0f s warm-up cap; its figures were taken while it was still warming up", sr.Name(), sr.Trial, sr.Warmup.Seconds))
		}
	}
	if sr.RSSIdleBytes > 0 || sr.NativeMemory != nil {
		s.Memory = append(s.Memory, MemoryRow{sr.Name(), sr.Workload, sr.Trial, sr.RSSIdleBytes, sr.RSSWarmBytes, sr.RSSAfterBytes, sr.NativeMemory})
	}
	if c := sr.Contract; c != nil && sr.Status == results.OK && len(c.FirstFailures) > 0 {
		var names []string
		for _, f := range c.FirstFailures {
			names = append(names, f.Check)
		}
		wl.Warnings = append(wl.Warnings, fmt.Sprintf("%s, trial %d: the contract passed on the second attempt; the first failed %s", sr.Name(), sr.Trial, strings.Join(names, "; ")))
	}
	switch sr.Status {
	case results.OK:
	case results.Interrupted:
		wl.Warnings = append(wl.Warnings, fmt.Sprintf("INTERRUPTED: %s, trial %d: %s", sr.Name(), sr.Trial, sr.Reason))
	default:
		f := Failure{Implementation: sr.Name(), Workload: sr.Workload, Trial: sr.Trial, Reason: sr.Reason, LogTail: sr.LogTail}
		if sr.Contract != nil {
			for _, c := range sr.Contract.Failures {
				f.Checks = append(f.Checks, strings.TrimSuffix(c.Check+": "+c.Detail, ": "))
			}
		}
		s.Failures = append(s.Failures, f)
		wl.Warnings = append(wl.Warnings, fmt.Sprintf("%s, trial %d failed: %s", sr.Name(), sr.Trial, sr.Reason))
	}
	for _, lr := range sr.Levels {
		if lr.Status == results.Interrupted {
			what := fmt.Sprintf("%s %s at %d %s, trial %d: %s", sr.Name(), sr.Workload, lr.Level, s.LevelUnit, sr.Trial, lr.Reason)
			s.InterruptedLevels = append(s.InterruptedLevels, what)
			wl.Warnings = append(wl.Warnings, "INTERRUPTED: "+what+"; left out of the tables (its files hold what was measured)")
		}
		for _, v := range lr.Violations {
			wl.Warnings = append(wl.Warnings, fmt.Sprintf("INVARIANT FAILED: %s at %d %s, trial %d: %s: %s", sr.Name(), lr.Level, s.LevelUnit, sr.Trial, v.Check, v.Detail))
		}
		for _, th := range lr.Thresholds {
			s.Thresholds = append(s.Thresholds, ThresholdRow{sr.Name(), sr.Workload, lr.Level, sr.Trial, th})
			if th.Crossed {
				wl.Warnings = append(wl.Warnings, fmt.Sprintf("THRESHOLD CROSSED: %s at %d %s, trial %d: %s (%s)", sr.Name(), lr.Level, s.LevelUnit, sr.Trial, th.Expr, thresholdMeasure(th)))
			}
		}
		for _, m := range lr.Warnings {
			wl.Warnings = append(wl.Warnings, fmt.Sprintf("%s at %d %s, trial %d: %s", sr.Name(), lr.Level, s.LevelUnit, sr.Trial, m))
		}
		if lr.Status == results.OK && lr.Total.Errors > 0 {
			wl.Warnings = append(wl.Warnings, fmt.Sprintf("%s at %d %s, trial %d: %.2f%% errors (%d of %d)%s", sr.Name(), lr.Level, s.LevelUnit, sr.Trial, errorPercent(lr), lr.Total.Errors, lr.Total.Samples, topReason(lr)))
		}
	}
}

// verdicts compare, at each level, the two implementations with the most
// mean throughput, naming a winner only when their 95% confidence
// intervals across trials do not overlap.
func verdicts(wl *Workload, unit string) []string {
	levels, byLevel := measuredByLevel(wl)
	mean := func(c *CellSummary) float64 {
		if sp, ok := c.Spread["throughput"]; ok {
			return sp.Mean
		}
		return c.Get("throughput")
	}
	var out []string
	for _, l := range levels {
		cs := byLevel[l]
		if len(cs) < 2 {
			continue
		}
		sort.SliceStable(cs, func(i, j int) bool { return mean(cs[i]) > mean(cs[j]) })
		a, b := cs[0], cs[1]
		sa, okA := a.Spread["throughput"]
		sb, okB := b.Spread["throughput"]
		switch {
		case !okA || !okB:
			out = append(out, fmt.Sprintf("at %d %s: no verdict, %s and %s were not measured on two fresh starts or more (trials: 3, or auto)", l, unit, a.Implementation, b.Implementation))
		case !sa.interval().Overlaps(sb.interval()):
			out = append(out, fmt.Sprintf("at %d %s: %s serves more than %s, %s vs %s req/s (mean, 95%% interval and CV of %d and %d fresh starts)",
				l, unit, a.Implementation, b.Implementation, describeSpread(sa), describeSpread(sb), sa.N, sb.N))
		default:
			out = append(out, fmt.Sprintf("at %d %s: no significant difference between %s and %s, %s vs %s req/s (95%% intervals overlap)",
				l, unit, a.Implementation, b.Implementation, describeSpread(sa), describeSpread(sb)))
		}
	}
	return out
}

// measuredByLevel groups a workload's measured cells by level, levels in
// ascending order.
func measuredByLevel(wl *Workload) ([]int, map[int][]*CellSummary) {
	var levels []int
	byLevel := map[int][]*CellSummary{}
	for _, c := range wl.Cells {
		if c.Trials == 0 {
			continue
		}
		if _, ok := byLevel[c.Level]; !ok {
			levels = append(levels, c.Level)
		}
		byLevel[c.Level] = append(byLevel[c.Level], c)
	}
	sort.Ints(levels)
	return levels, byLevel
}

// describeSpread prints a mean, its 95% interval (a rate is never
// negative) and the CV: "7570 (7276–7865, CV 2.0%)".
func describeSpread(s Spread) string {
	return fmt.Sprintf("%s (%s–%s, CV %.1f%%)", human.Count(s.Mean), human.Count(max(0, s.Low)), human.Count(s.High), 100*s.CV)
}

// errorPercent is computed from the counts: summary.json's error_percent
// holds a fraction in some engine versions despite its name.
func errorPercent(l *results.LevelRun) float64 {
	if l.Total.Samples == 0 {
		return 0
	}
	return 100 * float64(l.Total.Errors) / float64(l.Total.Samples)
}

func topReason(lr *results.LevelRun) string {
	if len(lr.Total.Reasons) == 0 {
		return ""
	}
	return fmt.Sprintf(", mostly %q", lr.Total.Reasons[0].Reason)
}

func levelUnit(model string) string {
	if model == "open" {
		return "req/s"
	}
	return "users"
}

// headline finds the cell with the most throughput at acceptable latency,
// and says so with the runner-up at its own best level.
func headline(wl *Workload, unit string, o options) (*CellSummary, string) {
	best := map[string]*CellSummary{}
	var order []string
	measured := false
	for _, c := range wl.Cells {
		if c.Trials == 0 {
			continue
		}
		measured = true
		if c.Get("p99_ms") > o.p99Ms || c.Get("error_percent") > o.errorPercent {
			continue
		}
		b, ok := best[c.Implementation]
		if !ok {
			order = append(order, c.Implementation)
		}
		if !ok || c.Get("throughput") > b.Get("throughput") {
			best[c.Implementation] = c
		}
	}
	if !measured {
		return nil, "nothing was measured"
	}
	if len(order) == 0 {
		var top *CellSummary
		for _, c := range wl.Cells {
			if c.Trials > 0 && (top == nil || c.Get("throughput") > top.Get("throughput")) {
				top = c
			}
		}
		return nil, fmt.Sprintf("no implementation kept p99 ≤ %s with ≤ %s%% errors at any level; the most throughput was %s's %s req/s at %d %s (p99 %s, %.2f%% errors)",
			human.Ms(o.p99Ms), trimZeros(fmt.Sprintf("%.2f", o.errorPercent)), top.Implementation, human.Count(top.Get("throughput")), top.Level, unit, human.Ms(top.Get("p99_ms")), top.Get("error_percent"))
	}
	sort.SliceStable(order, func(i, j int) bool { return best[order[i]].Get("throughput") > best[order[j]].Get("throughput") })
	w := best[order[0]]
	res := ""
	if w.Get("rss_peak_bytes") > 0 {
		res = fmt.Sprintf(", CPU %.0f%%, peak RSS %s", w.Get("cpu_percent"), human.Bytes(w.Get("rss_peak_bytes")))
	}
	text := fmt.Sprintf("%s served the most at acceptable latency: %s req/s at %d %s (p99 %s, %.2f%% errors%s)",
		w.Implementation, human.Count(w.Get("throughput")), w.Level, unit, human.Ms(w.Get("p99_ms")), w.Get("error_percent"), res)
	if len(order) > 1 {
		var others []string
		single := w.Trials < 2
		for _, im := range order[1:] {
			c := best[im]
			if c.Trials < 2 {
				single = true
			}
			others = append(others, fmt.Sprintf("%s %s req/s at %d %s", im, human.Count(c.Get("throughput")), c.Level, unit))
		}
		text += "; then " + strings.Join(others, ", ")
		if single {
			text += " (single trials in sequence, not a ranking: the verdict below says what differs)"
		}
	}
	return w, text
}

func round(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1e3) / 1e3
}

// LevelTable reports whether wl has a table of levels: a capacity run
// measures none (its table is the capacities'), every other run does.
func (wl *Workload) LevelTable() bool { return len(wl.Cells) > 0 || len(wl.Capacities) == 0 }
