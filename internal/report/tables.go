package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/wording"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load/atomicfile"
)

// Formats WriteFormat knows.
const (
	FormatHTML     = "html"
	FormatMarkdown = "md"
	FormatJSON     = "json"
	FormatCSV      = "csv"
	// FormatTerminal is the answer as make run prints it (WriteTerminal),
	// for a run with a scorecard.
	FormatTerminal = "terminal"
)

// WriteFormat writes res in one of the formats (FormatHTML, ...).
func WriteFormat(w io.Writer, res *Results, format string, opts ...Option) error {
	switch format {
	case FormatHTML:
		return WriteHTML(w, res, opts...)
	case FormatMarkdown:
		return WriteMarkdown(w, res, opts...)
	case FormatJSON:
		return WriteJSON(w, res, opts...)
	case FormatCSV:
		return WriteCSV(w, res, opts...)
	case FormatTerminal:
		if !HasTerminalForm(res, opts...) {
			return fmt.Errorf("format terminal: this run has no scorecard (no interleaved rounds); use md")
		}
		WriteTerminal(w, res, TerminalWidth, opts...)
		return nil
	}
	return fmt.Errorf("unknown format %q (html, md, json, csv or terminal)", format)
}

// Files written into a results folder by WriteFiles.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "summary.md"
)

// WriteFiles writes report.html and summary.md of the results at path
// into dir (for a results folder, itself) and returns their paths. Each
// file is rendered in memory first, so a failure leaves no half file.
func WriteFiles(dir, path string, opts ...Option) ([]string, error) {
	res, err := Load(path)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range []struct{ name, format string }{{HTMLFile, FormatHTML}, {MarkdownFile, FormatMarkdown}} {
		var b bytes.Buffer
		if err := WriteFormat(&b, res, f.format, opts...); err != nil {
			return paths, err
		}
		p := filepath.Join(dir, f.name)
		if err := atomicfile.WriteFile(p, b.Bytes(), 0o644); err != nil {
			return paths, fmt.Errorf("writing the report: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// WriteJSON writes the summary of res as indented JSON.
func WriteJSON(w io.Writer, res *Results, opts ...Option) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Summarize(res, opts...))
}

// WriteCSV writes one row per implementation x workload x level x trial,
// with every metric as a column, for spreadsheets.
func WriteCSV(w io.Writer, res *Results, opts ...Option) error {
	s := Summarize(res, opts...)
	cw := csv.NewWriter(w)
	head := []string{"workload", "implementation", "level", "level_unit", "trial"}
	for _, m := range Metrics {
		head = append(head, m.Key)
	}
	cw.Write(head)
	for _, wl := range s.Workloads {
		for _, c := range wl.Cells {
			for t := 0; t < c.Trials; t++ {
				row := []string{c.Workload, c.Implementation, strconv.Itoa(c.Level), s.LevelUnit, strconv.Itoa(c.cell.Services[t].Trial)}
				for _, m := range Metrics {
					row = append(row, strconv.FormatFloat(c.Values[m.Key].Trials[t], 'f', -1, 64))
				}
				cw.Write(row)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// tableColumn is one column of the aggregate table.
type tableColumn struct {
	key string
	// spread shows the range over trials after the median.
	spread bool
	format func(float64) string
}

func tableColumns() []tableColumn {
	ms := func(v float64) string { return human.Ms(v) }
	n0 := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	return []tableColumn{
		{"samples", false, n0},
		{"mean_ms", false, ms},
		{"p50_ms", true, ms},
		{"p90_ms", false, ms},
		{"p95_ms", false, ms},
		{"p99_ms", true, ms},
		{"min_ms", false, ms},
		{"max_ms", false, ms},
		{"error_percent", false, func(v float64) string { return fmt.Sprintf("%.2f", v) }},
		{"throughput", true, human.Count},
		{"received_kb_per_s", false, human.Count},
		{"cpu_percent", true, func(v float64) string { return fmt.Sprintf("%.0f", v) }},
		{"rss_peak_bytes", true, human.Bytes},
		{"threads", false, n0},
		{"fds", false, n0},
		{"startup_seconds", false, func(v float64) string { return fmt.Sprintf("%.2fs", v) }},
		{"artifact_bytes", false, human.Bytes},
		{"image_bytes", false, human.Bytes},
	}
}

// alwaysShown are the columns every table keeps; the others (resources,
// startup, artifact, image) are left out when no cell of the table has them, as
// for an import.
var alwaysShown = map[string]bool{"samples": true, "mean_ms": true, "p50_ms": true, "p90_ms": true, "p95_ms": true,
	"p99_ms": true, "min_ms": true, "max_ms": true, "error_percent": true, "throughput": true}

// visibleColumns returns the columns of a workload's table.
func visibleColumns(wl *Workload) []tableColumn {
	var out []tableColumn
	for _, c := range tableColumns() {
		keep := alwaysShown[c.key]
		for _, cell := range wl.Cells {
			keep = keep || cell.Values[c.key].Max != 0
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// cellText formats one table cell: the median, and the range over trials
// for the columns that show it when there are several trials.
func cellText(c *CellSummary, col tableColumn) string {
	v := c.Values[col.key]
	s := col.format(v.Median)
	if lo, hi := col.format(v.Min), col.format(v.Max); col.spread && c.Trials > 1 && lo != hi {
		s += " (" + lo + "–" + hi + ")"
	}
	return s
}

// WriteMarkdown writes summary.md: per workload the headline, the
// aggregate table (JMeter's columns plus resources, the median over trials
// with the range for the main figures), then warnings and failures.
func WriteMarkdown(w io.Writer, res *Results, opts ...Option) error {
	s := Summarize(res, opts...)
	r := res.Run
	fmt.Fprintf(w, "# showdown: %s\n\n", s.Name)
	if s.Description != "" {
		fmt.Fprintf(w, "%s\n\n", s.Description)
	}
	fmt.Fprintf(w, "%s.\n\n", setupLine(res))
	if s.Interrupted {
		fmt.Fprintf(w, "**Interrupted:** the run was stopped early; the tables hold what was measured.\n\n")
	}
	writeScorecards(w, s)
	for _, wl := range s.Workloads {
		cols := visibleColumns(wl)
		fmt.Fprintf(w, "## %s\n\n", wl.Name)
		fmt.Fprintf(w, "**%s.**\n\n", wl.Headline)
		if len(wl.Verdicts) > 0 {
			fmt.Fprintf(w, "Verdict (%s):\n\n", wl.VerdictBasis)
			for _, v := range wl.Verdicts {
				fmt.Fprintf(w, "- %s\n", v)
			}
			fmt.Fprintln(w)
		}
		if len(wl.Recorded) > 0 {
			fmt.Fprintf(w, "The verdict as the run recorded it (its own version's estimator):\n\n")
			for _, v := range wl.Recorded {
				fmt.Fprintf(w, "- %s\n", v)
			}
			fmt.Fprintln(w)
		}
		writeCapacity(w, s, wl)
		if wl.LevelTable() {
			fmt.Fprintf(w, "| Implementation | %s |", titleCase(s.LevelUnit))
			for _, c := range cols {
				fmt.Fprintf(w, " %s |", metric(c.key).Title)
			}
			fmt.Fprintf(w, "\n|---|--:|%s\n", strings.Repeat("--:|", len(cols)))
			for _, c := range wl.Cells {
				name := c.Implementation
				if c.GeneratorBound != "" {
					name += " (" + c.GeneratorBound + ")"
				}
				fmt.Fprintf(w, "| %s | %d |", name, c.Level)
				if c.Trials == 0 {
					fmt.Fprintf(w, " not measured |%s\n", strings.Repeat(" |", len(cols)-1))
					continue
				}
				for _, col := range cols {
					fmt.Fprintf(w, " %s |", cellText(c, col))
				}
				fmt.Fprintln(w)
			}
			fmt.Fprintln(w)
		}
		if s.Trials > 1 && wl.LevelTable() {
			fmt.Fprintf(w, "Median of %d trials; (min–max) for median, p99, throughput, CPU and RSS.\n\n", s.Trials)
		}
		writeStepTable(w, res, wl)
		writeScaling(w, wl)
		if len(wl.Warnings) > 0 {
			fmt.Fprintf(w, "Warnings:\n\n")
			for _, m := range wl.Warnings {
				fmt.Fprintf(w, "- %s\n", m)
			}
			fmt.Fprintln(w)
		}
	}
	writeWarmups(w, s)
	writeMemory(w, s)
	if len(s.Published) > 0 {
		fmt.Fprintf(w, "## Published figures beside ours\n\n| Source | Workload | %s | Metric | Published | Ours (median) | Ranking reproduces | Ratio 1st/2nd published | ours | our 95%% interval | published ratio inside |\n|---|---|--:|---|---|---|---|--:|--:|---|---|\n", titleCase(s.LevelUnit))
		for _, r := range s.Published {
			var pub, ours []string
			for _, id := range r.PublishedRanking {
				pub = append(pub, fmt.Sprintf("%s %g", id, r.Figures[id]))
				if v, ok := r.Ours[id]; ok {
					ours = append(ours, fmt.Sprintf("%s %g", id, round(v)))
				}
			}
			pr, or := r.Ratio()
			src := r.Source
			if r.Database != "" {
				src += " (" + r.Database + ")"
			}
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", src, r.Workload, r.Level, r.Metric, strings.Join(pub, ", "), strings.Join(ours, ", "), r.Reproduces, pr, or, orDash(r.IntervalText()), r.PublishedInside)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Our interval is the 95%% confidence interval of the ratio of the per-trial figures (fresh starts) by Fieller's theorem, with Student's t at the Welch-Satterthwaite degrees of freedom.\n\n")
		for _, r := range s.Published {
			if r.Note != "" {
				fmt.Fprintf(w, "- %s: %s\n", r.Source, r.Note)
			}
		}
		fmt.Fprintln(w)
	}
	if len(s.Thresholds) > 0 {
		fmt.Fprintf(w, "## Thresholds (fail_if)\n\n| Implementation | Workload | %s | Trial | Threshold | Verdict | Value |\n|---|---|--:|--:|---|---|---|\n", titleCase(s.LevelUnit))
		for _, t := range s.Thresholds {
			fmt.Fprintf(w, "| %s | %s | %d | %d | `%s` | %s | %s |\n", t.Implementation, t.Workload, t.Level, t.Trial, t.Expr, t.Verdict(), t.Measure())
		}
		fmt.Fprintln(w)
	}
	if len(s.Warnings) > 0 {
		fmt.Fprintf(w, "## Warnings\n\n")
		for _, m := range s.Warnings {
			fmt.Fprintf(w, "- %s\n", m)
		}
		fmt.Fprintln(w)
	}
	if len(s.Failures) > 0 {
		fmt.Fprintf(w, "## Failures\n\n")
		for _, f := range s.Failures {
			fmt.Fprintf(w, "### %s on %s, trial %d\n\n%s\n\n", f.Implementation, f.Workload, f.Trial, f.Reason)
			if len(f.Checks) > 0 {
				fmt.Fprintf(w, "Failed contract checks:\n\n")
				for _, c := range f.Checks {
					fmt.Fprintf(w, "- %s\n", strings.ReplaceAll(c, "\n", " "))
				}
				fmt.Fprintln(w)
			}
			if f.LogTail != "" {
				fmt.Fprintf(w, "```\n%s\n```\n\n", strings.TrimRight(f.LogTail, "\n"))
			}
		}
	}
	if r.Command != "" {
		fmt.Fprintf(w, "Reproduce: `%s`\n", r.Command)
	}
	return nil
}

// writeScorecards writes each workload's scorecard: one row per stack,
// one column per part of the question, the best in each column in bold.
func writeScorecards(w io.Writer, s *Summary) {
	for _, sc := range s.Scorecards {
		fmt.Fprintf(w, "## The answer: %s\n\n", sc.Workload)
		fmt.Fprintf(w, "%s.\n\n", ScorecardBasis(sc, s.LevelUnit))
		fmt.Fprintf(w, "| Stack |")
		for _, c := range ScorecardColumns {
			fmt.Fprintf(w, " %s |", c[1])
		}
		fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(ScorecardColumns)))
		for _, r := range sc.Rows {
			fmt.Fprintf(w, "| %s |", r.Stack)
			for _, c := range ScorecardColumns {
				if r.Best[c[0]] {
					fmt.Fprintf(w, " **%s** |", r.Cell(c[0]))
				} else {
					fmt.Fprintf(w, " %s |", r.Cell(c[0]))
				}
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
		if len(sc.Sizing) > 0 {
			fmt.Fprintf(w, "What %s costs each stack, from its CPU per request and RSS at %s req/s (the band of its starts). This is one core of this machine at one rate: more cores and higher rates are the cores plans' (bench/cores.yaml) and the capacity plans' (plans/capacity.yaml) to measure.\n\n| Stack | Cores | Memory |", sc.Load, human.Count(float64(sc.Rate)))
			priced := sc.Sizing[0].Monthly != ""
			if priced {
				fmt.Fprintf(w, " Cost |")
			}
			fmt.Fprintf(w, "\n|---|--:|--:|%s\n", map[bool]string{true: "--:|", false: ""}[priced])
			for _, z := range sc.Sizing {
				fmt.Fprintf(w, "| %s | %s | %s |", z.Stack, z.Cores, z.Memory)
				if priced {
					fmt.Fprintf(w, " %s |", z.Monthly)
				}
				fmt.Fprintln(w)
			}
			fmt.Fprintln(w)
		}
		for _, m := range sc.Missing {
			fmt.Fprintf(w, "- Not answered by this run: %s.\n", m)
		}
		if len(sc.Missing) > 0 {
			fmt.Fprintln(w)
		}
	}
}

// ScorecardBasis says what a scorecard's columns rest on.
func ScorecardBasis(sc *Scorecard, levelUnit string) string {
	b := fmt.Sprintf("Throughput at %d %s; each ratio is the stack's over the next in that column's ranking, with its 95%% interval over fresh starts and interleaved rounds; the best in each column is in bold", sc.Level, levelUnit)
	if sc.Rate > 0 {
		b += fmt.Sprintf(". p99 (from the intended send time), CPU per request (the service's whole process tree) and RSS at %s req/s for every stack (%s), %s", human.Count(float64(sc.Rate)), sc.RateRule, firstNonEmpty(sc.Shape, "even arrivals"))
		if sc.Contrast != "" {
			b += fmt.Sprintf("; CPU per request measured again under %s, and a pair whose order turns there says \"depends on the shape\"", sc.Contrast)
		}
		if sc.FloorMs > 0 {
			b += fmt.Sprintf("; the generator's send lateness p99 in those rounds: %s (pairs closer than it are not ranked by p99)", human.Ms(sc.FloorMs))
		}
		if sc.Host != nil {
			b += "; " + wording.HostFloor(sc.Host)
		}
	}
	if sc.BusyRate > 0 {
		b += fmt.Sprintf(". p99 under load at %s req/s (%s), the stacks that could not carry it left out", human.Count(float64(sc.BusyRate)), sc.BusyRule)
	}
	return b + ". RSS is the median over the rounds (the range of the starts' medians); idle RSS and startup (to the first healthy answer) the median over starts (their range); size is the build's artifact"
}

// writeWarmups writes the warm-up table: per start and workload, the time
// to steady state and the requests it took, beside the startup time.
func writeWarmups(w io.Writer, s *Summary) {
	if len(s.Warmups) == 0 {
		return
	}
	fmt.Fprintf(w, "## Warm-up\n\n")
	fmt.Fprintf(w, "| Implementation | Workload | Trial | Startup s | Warm-up | Requests | Last 10 s req/s |\n|---|---|--:|--:|---|--:|--:|\n")
	for _, r := range s.Warmups {
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %d | %s |\n", r.Implementation, r.Workload, r.Trial, fmtSeconds(r.StartupSeconds), warmupText(r.WarmupRun), r.Requests, human.Count(tailMean(r.Throughput, 10)))
	}
	fmt.Fprintln(w)
}

// warmupText says how a warm-up ended.
func warmupText(wu *results.WarmupRun) string {
	switch {
	case !wu.Auto:
		return fmt.Sprintf("%s fixed", fmtSeconds(wu.Seconds))
	case wu.Steady:
		return fmt.Sprintf("steady after %s", fmtSeconds(wu.Seconds))
	}
	return fmt.Sprintf("**not steady** after %s (cap)", fmtSeconds(wu.Seconds))
}

// tailMean is the mean of the last n values (fewer if there are fewer).
func tailMean(xs []float64, n int) float64 {
	if len(xs) == 0 {
		return 0
	}
	if len(xs) > n {
		xs = xs[len(xs)-n:]
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// setupLine describes the run in one sentence.
func setupLine(res *Results) string {
	r := res.Run
	p := r.Plan
	parts := []string{fmt.Sprintf("%s: %s model, %s per level, %d trial(s)", res.Kind, orDash(p.Load.Model), fmtSeconds(float64(p.Load.Duration)/1e9), max(p.Trials, trialsRun(res.Run)))}
	if p.SLO != nil && len(r.Capacities) > 0 && len(p.Load.Levels) > 0 {
		probes := "open-model probes"
		if p.Capacity.Model == "closed" {
			probes = fmt.Sprintf("closed-model probes of users thinking %v", time.Duration(p.Load.ThinkTime))
		}
		parts[0] = fmt.Sprintf("%s: capacity at %s (%s bisected to %v), warmed at %d %s, %d start(s)", res.Kind, p.SLO.String(), probes, p.Capacity.Resolution,
			p.Load.Levels[0], levelUnit(p.Load.Model), max(p.Trials, trialsRun(res.Run)))
	}
	if r.Machine.CPUModel != "" {
		parts = append(parts, fmt.Sprintf("%s, %d CPUs", r.Machine.CPUModel, r.Machine.CPUs))
	}
	if res.Kind == KindRun {
		parts = append(parts, fmt.Sprintf("service on CPUs %q, generator on %q, databases on %q", r.Placement.ServiceCPUs, r.Placement.GeneratorCPUs, r.Placement.DatabaseCPUs))
		parts = append(parts, "limits: "+describeLimits(res))
		if n := describeNoise(r.Machine.Noise); n != "" {
			parts = append(parts, "machine noise: "+n)
		}
	}
	return strings.Join(parts, "; ")
}

// describeNoise says how much the machine's own speed varied from second
// to second before the run, per CPU; "" when it was not measured.
func describeNoise(f *results.NoiseFloor) string {
	if f == nil || len(f.CPUs) == 0 {
		return ""
	}
	parts := make([]string, len(f.CPUs))
	for i, c := range f.CPUs {
		parts[i] = fmt.Sprintf("CPU %d %.0f%%", c, f.CV[i]*100)
	}
	return fmt.Sprintf("per-second CV %s (a memory-bound probe on each CPU at once for %d s, nothing else running)", strings.Join(parts, ", "), f.Seconds)
}

func describeLimits(res *Results) string {
	l := res.Run.Limits
	var parts []string
	if l.CPUQuota > 0 {
		parts = append(parts, fmt.Sprintf("%.2g CPU", l.CPUQuota))
	}
	if l.MemoryBytes > 0 {
		parts = append(parts, human.Bytes(float64(l.MemoryBytes))+" memory")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ") + " (" + l.Mechanism + ")"
}

func fmtSeconds(s float64) string {
	if s == float64(int64(s)) {
		return fmt.Sprintf("%d s", int64(s))
	}
	return fmt.Sprintf("%.1f s", s)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// stepColumns are the columns of the per-step (per-label) table, JMeter's
// aggregate report; a plan run's table starts with the implementation and
// the level (stepCellColumns).
var (
	stepColumns     = []string{"Label", "Samples", "Average", "Median", "90%", "95%", "99%", "Min", "Max", "Error %", "Throughput/s"}
	stepCellColumns = []string{"Implementation", "Level"}
)

// stepTable returns the per-step table of a workload: its columns and its
// formatted rows. A plan run gets a row per implementation, level and
// step, over the cell's trials (the error rate of all their samples, min
// and max over all, the other figures the median of the trials, as in the
// main table); a one-level
// result (an import or an attack) a row per step when it has more than
// one.
func stepTable(res *Results, wl *Workload) ([]string, [][]string) {
	if res.Kind != KindRun {
		return stepColumns, stepRows(res, wl)
	}
	var rows [][]string
	for _, c := range wl.Cells {
		if c.cell == nil || len(c.cell.Levels) == 0 {
			continue
		}
		type acc struct {
			samples, errors          int64
			min, max                 float64
			mean, p50, p90, p95, p99 []float64
			tput, count              []float64
		}
		var order []string
		byLabel := map[string]*acc{}
		for _, lr := range c.cell.Levels {
			for _, l := range res.Detail(lr).Labels {
				a := byLabel[l.Label]
				if a == nil {
					a = &acc{min: l.Latency.Min}
					byLabel[l.Label] = a
					order = append(order, l.Label)
				}
				a.samples += l.Samples
				a.count = append(a.count, float64(l.Samples))
				a.errors += l.Errors
				a.min, a.max = min(a.min, l.Latency.Min), max(a.max, l.Latency.Max)
				a.mean, a.p50, a.p90 = append(a.mean, l.Latency.Mean), append(a.p50, l.Latency.P50), append(a.p90, l.Latency.P90)
				a.p95, a.p99, a.tput = append(a.p95, l.Latency.P95), append(a.p99, l.Latency.P99), append(a.tput, l.Throughput)
			}
		}
		for _, label := range order {
			a := byLabel[label]
			ep := 0.0
			if a.samples > 0 {
				ep = 100 * float64(a.errors) / float64(a.samples)
			}
			med := func(vs []float64) float64 { return valueOf(vs).Median }
			rows = append(rows, []string{c.Implementation, strconv.Itoa(c.Level), label, fmt.Sprintf("%.0f", med(a.count)),
				human.Ms(med(a.mean)), human.Ms(med(a.p50)), human.Ms(med(a.p90)), human.Ms(med(a.p95)), human.Ms(med(a.p99)),
				human.Ms(a.min), human.Ms(a.max), fmt.Sprintf("%.2f", ep), human.Count(med(a.tput))})
		}
	}
	return append(append([]string(nil), stepCellColumns...), stepColumns...), rows
}

// stepRows returns the per-step rows of a one-level result (an import or
// an attack), formatted, when it has more than one step.
func stepRows(res *Results, wl *Workload) [][]string {
	if len(wl.Cells) != 1 || wl.Cells[0].cell == nil || len(wl.Cells[0].cell.Levels) != 1 {
		return nil
	}
	d := res.Detail(wl.Cells[0].cell.Levels[0])
	if len(d.Labels) < 2 {
		return nil
	}
	var rows [][]string
	for _, l := range d.Labels {
		ep := 0.0
		if l.Samples > 0 {
			ep = 100 * float64(l.Errors) / float64(l.Samples)
		}
		rows = append(rows, []string{l.Label, strconv.FormatInt(l.Samples, 10), human.Ms(l.Latency.Mean), human.Ms(l.Latency.P50), human.Ms(l.Latency.P90),
			human.Ms(l.Latency.P95), human.Ms(l.Latency.P99), human.Ms(l.Latency.Min), human.Ms(l.Latency.Max), fmt.Sprintf("%.2f", ep), human.Count(l.Throughput)})
	}
	return rows
}

func writeStepTable(w io.Writer, res *Results, wl *Workload) {
	cols, rows := stepTable(res, wl)
	if rows == nil {
		return
	}
	fmt.Fprintf(w, "Per step:\n\n| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", 1+len(cols)-len(stepColumns))+strings.Repeat("--:|", len(stepColumns)-1))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

// writeMemory writes the memory table: per start and workload the RSS
// before warm-up, after it and after load, and with native memory
// tracking the JVM's committed memory by category.
func writeMemory(w io.Writer, s *Summary) {
	if len(s.Memory) == 0 {
		return
	}
	fmt.Fprintf(w, "## Memory\n\n| Implementation | Workload | Trial | RSS before warm-up | after warm-up | after load |\n|---|---|--:|--:|--:|--:|\n")
	for _, m := range s.Memory {
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s |\n", m.Implementation, m.Workload, m.Trial, human.Bytes(float64(m.RSSIdleBytes)), human.Bytes(float64(m.RSSWarmBytes)), human.Bytes(float64(m.RSSAfterBytes)))
	}
	fmt.Fprintln(w)
	cats, rows := nativeMemoryTable(s)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "JVM native memory tracking after load, committed:\n\n| Implementation | Workload | Trial | Total | %s |\n|---|---|--:|%s\n", strings.Join(cats, " | "), strings.Repeat("--:|", len(cats)+1))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

// nativeMemoryTable lays the native memory summaries out as a table: the
// categories (union, in the JVM's order) and one row per summary.
func nativeMemoryTable(s *Summary) ([]string, [][]string) {
	var cats []string
	for _, m := range s.Memory {
		if m.NativeMemory == nil {
			continue
		}
		for _, c := range m.NativeMemory.Categories {
			if !slices.Contains(cats, c.Name) {
				cats = append(cats, c.Name)
			}
		}
	}
	var rows [][]string
	for _, m := range s.Memory {
		nm := m.NativeMemory
		if nm == nil {
			continue
		}
		row := []string{m.Implementation, m.Workload, strconv.Itoa(m.Trial), human.Bytes(float64(nm.CommittedBytes))}
		if nm.Error != "" {
			row[3] = "not taken: " + nm.Error
		}
		for _, name := range cats {
			v := "-"
			for _, c := range nm.Categories {
				if c.Name == name {
					v = human.Bytes(float64(c.CommittedBytes))
				}
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return cats, rows
}

// trialsRun is the most fresh starts any implementation had.
func trialsRun(r *results.Run) int {
	n := 0
	for _, sr := range r.Services {
		n = max(n, sr.Trial)
	}
	return n
}

// firstNonEmpty is the first of ss that is not empty.
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
