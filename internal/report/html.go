package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// seriesPoints is how many points a time series keeps at most; longer
// runs are averaged down to it so the file stays small.
const seriesPoints = 600

// Option changes how WriteHTML draws a report.
type Option func(*options)

type options struct {
	p99Ms        float64
	errorPercent float64
	// acceptableSet is whether WithAcceptable was given; otherwise a
	// plan's objective (slo) is what is acceptable.
	acceptableSet bool
	// rejudge is whether the verdicts are judged again (WithRejudging).
	rejudge bool
}

func newOptions(opts []Option) options {
	o := options{p99Ms: DefaultAcceptableP99Ms, errorPercent: DefaultAcceptableErrorPercent}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithAcceptable sets what the headline calls acceptable: a median p99 at
// or under p99Ms and an error rate at or under errorPercent
// (DefaultAcceptableP99Ms, DefaultAcceptableErrorPercent).
func WithAcceptable(p99Ms, errorPercent float64) Option {
	return func(o *options) {
		o.acceptableSet = true
		if p99Ms > 0 {
			o.p99Ms = p99Ms
		}
		if errorPercent >= 0 {
			o.errorPercent = errorPercent
		}
	}
}

//go:embed report.html.tmpl
var pageTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"svg":   func(s string) template.HTML { return template.HTML(s) },
	"bytes": func(b uint64) string { return human.Bytes(float64(b)) },
}).Parse(pageTemplate))

// htmlPage is the template's model.
type htmlPage struct {
	S *Summary
	// NMTCols and NMTRows are the JVM native memory table (writeMemory's).
	NMTCols     []string
	NMTRows     [][]string
	Setup       string
	Kind        string
	StepCols    []string
	Workloads   []htmlWorkload
	Environment [][2]string
	Builds      [][]string
	BuildHead   []string
	Plan        string
	Command     string
	Colors      []swatch
	Charts      int
	ScalingHead []string
	// FitHead introduces the law's lines below the cores table.
	FitHead string
	// Faults are the plan's fault tests (run.json's faults).
	Faults    []*results.FaultTest
	FaultCols []string
	// Scorecards are the whole answer, first.
	Scorecards []htmlScorecard
}

type htmlCol struct{ Title string }

type swatch struct{ Name, Color string }

// figure is a chart with its caption.
// warmupChart draws the throughput of each implementation's first
// recorded warm-up on a workload, second by second: how long a fresh
// start takes to serve at its steady rate.
func warmupChart(id string, s *Summary, wl *Workload, colors map[string]string) (figure, bool) {
	ch := &chart{id: id, title: wl.Name + ": warm-up throughput after start (first trial)", xLabel: "seconds of warm-up", xInt: true, width: 560, wrapLegend: true}
	p := panel{yLabel: "throughput (req/s)", height: 200}
	jit := panel{yLabel: "JIT compiler (% of a CPU)", height: 90}
	seen := map[string]bool{}
	for _, r := range s.Warmups {
		if r.Workload != wl.Name || seen[r.Implementation] || len(r.Throughput) == 0 {
			continue
		}
		seen[r.Implementation] = true
		sr := series{name: r.Implementation, color: colors[r.Implementation]}
		for i, v := range r.Throughput {
			sr.xs, sr.ys = append(sr.xs, float64(i+1)), append(sr.ys, v)
		}
		p.lines = append(p.lines, sr)
		ch.legend = append(ch.legend, legendItem{fmt.Sprintf("%s: %s (startup %s)", r.Implementation, warmupText(r.WarmupRun), fmtSeconds(r.StartupSeconds)), colors[r.Implementation], ""})
		if slices.ContainsFunc(r.CompilerCPU, func(v float64) bool { return v > 0 }) {
			cs := series{name: r.Implementation, color: colors[r.Implementation]}
			for i, v := range r.CompilerCPU {
				cs.xs, cs.ys = append(cs.xs, float64(i+1)), append(cs.ys, v)
			}
			jit.lines = append(jit.lines, cs)
		}
	}
	if len(p.lines) == 0 {
		return figure{}, false
	}
	ch.panels = []panel{p}
	// The runtimes that compile while they serve: the rule waits for
	// their compiler to be quiet too.
	if len(jit.lines) > 0 {
		ch.panels = append(ch.panels, jit)
	}
	return figure{ch.title, template.HTML(ch.render())}, true
}

type figure struct {
	Title string
	SVG   template.HTML
}

type htmlWorkload struct {
	W        *Workload
	Cols     []htmlCol
	Steps    [][]string
	StepCols []string
	Rows     []htmlRow
	Charts   []figure
	// Answer draws the verdict: the forest plot of each comparison's (or
	// the capacities') adjacent ratios, and each arm's figure round by
	// round.
	Answer []figure
	// Curve is the workload's main chart: latency against offered load.
	Curve []figure
	// Scaling are the cores table's rows.
	Scaling [][]string
	// Spectra holds one chart per level.
	Spectra []figure
	Cells   []htmlCell
}

type htmlRow struct {
	Impl string
	// Note marks the row (generator-bound).
	Note   string
	Color  string
	Level  int
	Values []template.HTML
	Best   bool
	None   bool
}

type htmlCell struct {
	ID    string
	Title string
	Note  string
	Chart template.HTML
	Color string
}

// WriteHTML writes the self-contained HTML report of res.
func WriteHTML(w io.Writer, res *Results, opts ...Option) error {
	s := Summarize(res, opts...)
	colors := map[string]string{}
	pg := &htmlPage{S: s, Setup: setupLine(res), Kind: res.Kind, Command: res.Run.Command, StepCols: stepColumns, ScalingHead: scalingHead, FitHead: fitHead}
	pg.NMTCols, pg.NMTRows = nativeMemoryTable(s)
	for i, im := range s.Implementations {
		colors[im] = colorOf(i)
		pg.Colors = append(pg.Colors, swatch{im, colorOf(i)})
	}
	for wi, wl := range s.Workloads {
		hw := htmlWorkload{W: wl}
		hw.StepCols, hw.Steps = stepTable(res, wl)
		cols := visibleColumns(wl)
		for _, c := range cols {
			hw.Cols = append(hw.Cols, htmlCol{metric(c.key).Title})
		}
		for _, c := range wl.Cells {
			row := htmlRow{Impl: c.Implementation, Note: c.GeneratorBound, Color: colors[c.Implementation], Level: c.Level, Best: c == wl.Best, None: c.Trials == 0}
			if c.Trials > 0 {
				for _, col := range cols {
					row.Values = append(row.Values, htmlCellText(c, col))
				}
			}
			hw.Rows = append(hw.Rows, row)
		}
		// The verdict drawn, first: each adjacent ratio with its interval,
		// and each arm's figure in every round.
		for ci, c := range wl.Comparisons {
			if f, ok := forestChart(fmt.Sprintf("w%d-forest%d", wi, ci), fmt.Sprintf("%s at %d %s: each adjacent ratio with its 95%% interval", c.Workload, c.Level, s.LevelUnit), c.Verdict); ok {
				hw.Answer = append(hw.Answer, f)
			}
			if f, ok := driftChart(fmt.Sprintf("w%d-drift%d", wi, ci), c, s.LevelUnit, colors); ok {
				hw.Answer = append(hw.Answer, f)
			}
		}
		for vi, v := range res.Run.CapacityVerdicts {
			if v.Workload != wl.Name {
				continue
			}
			if f, ok := forestChart(fmt.Sprintf("w%d-forestc%d", wi, vi), fmt.Sprintf("%s: each adjacent ratio of capacities at %s with its 95%% interval", wl.Name, v.Objective), &v.Verdict); ok {
				hw.Answer = append(hw.Answer, f)
			}
		}
		// With one level the charts against the level are one column of
		// dots: what each arm spent, side by side, replaces them.
		oneLevel := len(res.Run.Plan.Load.Levels) == 1
		if oneLevel {
			hw.Charts = resourceCharts(fmt.Sprintf("w%d", wi), s, wl, colors)
		} else {
			hw.Charts = levelCharts(fmt.Sprintf("w%d", wi), s, wl, colors)
		}
		if f, ok := scalingChart(fmt.Sprintf("w%d-cores", wi), wl, colors); ok {
			hw.Charts = append([]figure{f}, hw.Charts...)
		}
		if len(wl.Curves) > 0 {
			hw.Curve = []figure{curveChart(fmt.Sprintf("w%d-curve", wi), wl.Name, wl.Curves, objectiveOf(res.Run, wl.Name), colors)}
		}
		for _, r := range wl.Scaling {
			hw.Scaling = append(hw.Scaling, scalingCells(r))
		}
		if f, ok := warmupChart(fmt.Sprintf("w%d-warmup", wi), s, wl, colors); ok {
			hw.Charts = append(hw.Charts, f)
		}
		hw.Spectra = spectra(fmt.Sprintf("w%d", wi), res, s, wl, colors)
		for ci, c := range wl.Cells {
			if c.Trials == 0 || fewSeconds(res, c) {
				continue
			}
			hc := htmlCell{ID: fmt.Sprintf("w%dc%d", wi, ci), Color: colors[c.Implementation],
				Title: fmt.Sprintf("%s · %s · %d %s", c.Implementation, c.Workload, c.Level, s.LevelUnit)}
			ch, note := timeSeriesChart(hc.ID, res, s, c, colors[c.Implementation], seriesPoints)
			hc.Note = note
			if ch != "" {
				hc.Chart = template.HTML(ch)
			}
			hw.Cells = append(hw.Cells, hc)
		}
		pg.Workloads = append(pg.Workloads, hw)
	}
	if res.Run != nil && len(res.Run.Faults) > 0 {
		pg.Faults, pg.FaultCols = res.Run.Faults, results.FaultColumns
	}
	pg.Scorecards = scorecardPage(res, s, colors)
	pg.Environment, pg.BuildHead, pg.Builds = environment(res)
	if res.Kind == KindRun {
		b, _ := json.MarshalIndent(res.Run.Plan, "", "  ")
		pg.Plan = string(b)
	}
	pg.Charts = countCharts(pg)
	return page.Execute(w, pg)
}

func countCharts(pg *htmlPage) int {
	n := 0
	for _, w := range pg.Workloads {
		n += len(w.Charts) + len(w.Spectra) + len(w.Curve) + len(w.Answer)
		for _, c := range w.Cells {
			if c.Chart != "" {
				n++
			}
		}
	}
	return n
}

// minSeriesSeconds is the fewest seconds a cell's time series needs to be
// drawn: a 2 s level is two points, and says nothing second by second.
const minSeriesSeconds = 3

// fewSeconds reports whether every trial of a cell has fewer seconds of
// time series than minSeriesSeconds (none at all is left to the chart's
// note).
func fewSeconds(res *Results, c *CellSummary) bool {
	for _, lr := range c.cell.Levels {
		d := res.Detail(lr)
		if d.Series == nil || len(dropStragglers(d.Series).Rows) >= minSeriesSeconds {
			return false
		}
	}
	return true
}

// levelCharts draws throughput, p99, CPU and RSS against the load level,
// one line per implementation, the median with its min-max whisker.
func levelCharts(id string, s *Summary, wl *Workload, colors map[string]string) []figure {
	var levels []int
	seen := map[int]bool{}
	for _, c := range wl.Cells {
		if !seen[c.Level] {
			seen[c.Level] = true
			levels = append(levels, c.Level)
		}
	}
	sort.Ints(levels)
	pos := map[int]float64{}
	var cats []string
	for i, l := range levels {
		pos[l] = float64(i)
		cats = append(cats, fmt.Sprint(l))
	}
	type spec struct {
		key, title, yLabel string
		scale              float64
		fmt                func(float64) string
	}
	specs := []spec{
		{"throughput", "Throughput", "throughput (req/s)", 1, human.Count},
		{"p99_ms", "99th percentile latency", "p99 latency (ms)", 1, human.Ms},
		{"cpu_percent", "Service CPU (mean)", "CPU (% of one core)", 1, func(v float64) string { return fmt.Sprintf("%.0f%%", v) }},
		{"rss_peak_bytes", "Service peak RSS", "peak RSS (MiB)", 1 << 20, func(v float64) string { return human.Bytes(v * (1 << 20)) }},
	}
	var out []figure
	for k, sp := range specs {
		ch := &chart{id: fmt.Sprintf("%s-l%d", id, k), title: fmt.Sprintf("%s: %s vs load level", wl.Name, sp.title),
			xLabel: "load level (" + s.LevelUnit + ")", categories: cats, width: 560}
		p := panel{yLabel: sp.yLabel, height: 200}
		for _, im := range s.Implementations {
			sr := series{name: im, color: colors[im], marks: true}
			any := false
			for _, c := range wl.Cells {
				if c.Implementation != im {
					continue
				}
				v, ok := c.Values[sp.key]
				sr.xs = append(sr.xs, pos[c.Level])
				if !ok || c.Trials == 0 {
					sr.ys, sr.lo, sr.hi = append(sr.ys, math.NaN()), append(sr.lo, math.NaN()), append(sr.hi, math.NaN())
					sr.tips = append(sr.tips, "")
					continue
				}
				any = true
				sr.ys, sr.lo, sr.hi = append(sr.ys, v.Median/sp.scale), append(sr.lo, v.Min/sp.scale), append(sr.hi, v.Max/sp.scale)
				tip := fmt.Sprintf("%s at %d %s: %s", im, c.Level, s.LevelUnit, sp.fmt(v.Median/sp.scale))
				if c.Trials > 1 {
					tip += fmt.Sprintf(" (median of %d trials, %s–%s)", c.Trials, sp.fmt(v.Min/sp.scale), sp.fmt(v.Max/sp.scale))
				}
				sr.tips = append(sr.tips, tip)
			}
			if any {
				p.lines = append(p.lines, sr)
				ch.legend = append(ch.legend, legendItem{im, colors[im], ""})
			}
		}
		if !anyNonZero(p.lines) {
			continue // not measured (an import has no resources)
		}
		ch.panels = []panel{p}
		out = append(out, figure{ch.title, template.HTML(ch.render())})
	}
	return out
}

func anyNonZero(lines []series) bool {
	for _, l := range lines {
		for _, y := range l.ys {
			if y != 0 && !math.IsNaN(y) {
				return true
			}
		}
	}
	return false
}

// spectrumQuantiles are the percentiles of the distribution charts: from
// 0 to 99.9999 in steps evenly spaced on the 1/(1-q) log scale.
func spectrumPoints(h *hdrhistogram.Histogram) (xs, ys []float64) {
	n := h.TotalCount()
	for i := 0; i <= 60; i++ {
		inv := math.Pow(10, float64(i)/10) // 1/(1-q)
		if inv > float64(n) && i > 0 {
			break
		}
		q := 100 * (1 - 1/inv)
		xs = append(xs, inv)
		ys = append(ys, float64(h.ValueAtQuantile(q))/1e6)
	}
	// The distribution ends at the maximum, one step further right.
	xs = append(xs, xs[len(xs)-1]*math.Pow(10, 0.1))
	ys = append(ys, float64(h.Max())/1e6)
	return xs, ys
}

// spectra draws, per level, the latency distribution of every
// implementation (all trials merged) on HdrHistogram's percentile scale.
func spectra(id string, res *Results, s *Summary, wl *Workload, colors map[string]string) []figure {
	levels, byLevel := measuredByLevel(wl)
	var out []figure
	for k, l := range levels {
		ch := &chart{id: fmt.Sprintf("%s-s%d", id, k), title: fmt.Sprintf("%s at %d %s: latency by percentile", wl.Name, l, s.LevelUnit),
			xLabel: "percentile (log scale of 1/(1−p))", xLog: true, width: 560, wrapLegend: true}
		p := panel{yLabel: "latency (ms, log)", height: 200, yLog: true, yFmt: num}
		maxInv := 1.0
		for _, c := range byLevel[l] {
			var merged *hdrhistogram.Histogram
			for _, lr := range c.cell.Levels {
				d := res.Detail(lr)
				if d.Latency == nil {
					continue
				}
				if merged == nil {
					merged = load.NewHistogram()
				}
				merged.Merge(d.Latency)
			}
			if merged == nil || merged.TotalCount() == 0 {
				continue
			}
			xs, ys := spectrumPoints(merged)
			tips := make([]string, len(xs))
			for i := range xs {
				tips[i] = fmt.Sprintf("%s: p%s = %s", c.Implementation, pctLabel(xs[i]), human.Ms(ys[i]))
				if i == len(xs)-1 {
					tips[i] = fmt.Sprintf("%s: max = %s", c.Implementation, human.Ms(ys[i]))
				}
			}
			maxInv = math.Max(maxInv, xs[len(xs)-1])
			p.lines = append(p.lines, series{name: c.Implementation, color: colors[c.Implementation], xs: xs, ys: ys, marks: true, tips: tips})
			ch.legend = append(ch.legend, legendItem{c.Implementation, colors[c.Implementation], ""})
		}
		if len(p.lines) == 0 {
			continue
		}
		for e := 0.0; math.Pow(10, e) <= maxInv*1.0001; e++ {
			ch.xTicks = append(ch.xTicks, tick{math.Pow(10, e), pctLabel(math.Pow(10, e))})
		}
		ch.panels = []panel{p}
		out = append(out, figure{ch.title, template.HTML(ch.render())})
	}
	return out
}

// pctLabel names the percentile of 1/(1-q): 1 -> "0", 10 -> "90", 100 -> "99".
func pctLabel(inv float64) string {
	q := 100 * (1 - 1/inv)
	for d := 0; d < 7; d++ {
		s := fmt.Sprintf("%.*f", d, q)
		var back float64
		fmt.Sscan(s, &back)
		if math.Abs(back-q) < 1e-9*math.Max(1, q) || d == 6 {
			return trimZeros(s) + "%"
		}
	}
	return fmt.Sprintf("%g%%", q)
}

// timeSeriesChart draws one cell's seconds: latency, throughput and
// errors, CPU, RSS, threads and FDs, stacked on one time axis, for the
// trial with the median throughput.
func timeSeriesChart(id string, res *Results, s *Summary, c *CellSummary, color string, maxPoints int) (string, string) {
	lc := c.cell
	idx := make([]int, len(lc.Levels))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return lc.Levels[idx[a]].Total.Throughput < lc.Levels[idx[b]].Total.Throughput })
	pick := idx[(len(idx)-1)/2]
	lr := lc.Levels[pick]
	note := ""
	if len(lc.Levels) > 1 {
		note = fmt.Sprintf("Trial %d of %d shown (the median throughput).", lc.Services[pick].Trial, len(lc.Levels))
	}
	d := res.Detail(lr)
	if d.Series == nil {
		msg := "No time series"
		if d.Err != nil {
			msg += ": " + d.Err.Error()
		}
		return "", strings.TrimSpace(note + " " + msg)
	}
	ser := downsample(dropStragglers(d.Series), maxPoints)
	t := ser.Col("second")
	col := func(name string, scale float64) []float64 {
		v := ser.Col(name)
		if v == nil {
			return nil
		}
		for i := range v {
			v[i] /= scale
		}
		return v
	}
	ch := &chart{id: id + "-ts", title: fmt.Sprintf("%s: every second", strings.ReplaceAll(c.Implementation+" · "+c.Workload, "", "")), xLabel: "seconds of measurement", xInt: true}
	add := func(p *panel, name, style string, ys []float64) {
		if ys == nil || allNaN(ys) {
			return
		}
		p.lines = append(p.lines, series{name: name, color: color, style: style, xs: t, ys: ys})
	}
	lat := panel{yLabel: "latency (ms, log)", height: 150, yLog: true}
	add(&lat, "p50", "thin", col("p50_ms", 1))
	add(&lat, "p99", "", col("p99_ms", 1))
	add(&lat, "max", "dot", col("max_ms", 1))
	tp := panel{yLabel: "req/s", height: 110}
	add(&tp, "throughput", "", col("throughput", 1))
	add(&tp, "errors/s", "dash", col("errors", 1))
	cpu := panel{yLabel: "CPU (%)", height: 110}
	add(&cpu, "service CPU", "", col("service_cpu_percent", 1))
	add(&cpu, "database CPU", "dash", col("db_cpu_percent", 1))
	add(&cpu, "generator CPU", "dashdot", col("generator_cpu_percent", 1))
	rss := panel{yLabel: "RSS (MiB)", height: 90}
	add(&rss, "service RSS", "", col("service_rss_kb", 1024))
	tf := panel{yLabel: "threads, FDs", height: 90}
	add(&tf, "threads", "", col("service_threads", 1))
	add(&tf, "FDs", "dash", col("service_fds", 1))
	act := panel{yLabel: "in flight", height: 70}
	add(&act, "in flight / active users", "thin", col("active", 1))
	for _, p := range []panel{lat, tp, cpu, rss, tf, act} {
		if len(p.lines) > 0 {
			ch.panels = append(ch.panels, p)
		}
	}
	// One legend entry per line style, naming the lines drawn in it.
	for _, style := range []string{"thin", "", "dot", "dash", "dashdot"} {
		var names []string
		for _, p := range ch.panels {
			for _, l := range p.lines {
				if l.style == style {
					names = append(names, l.name)
				}
			}
		}
		if len(names) > 0 {
			ch.legend = append(ch.legend, legendItem{strings.Join(names, ", "), color, style})
		}
	}
	// hover: one band per point with every value of that second
	for i := range ser.Rows {
		var parts []string
		parts = append(parts, fmt.Sprintf("second %s", num(t[i])))
		for j, name := range ser.Columns {
			if j == 0 || math.IsNaN(ser.Rows[i][j]) {
				continue
			}
			if l, ok := columnLabels[name]; ok {
				name = l
			}
			parts = append(parts, fmt.Sprintf("%s: %s", name, num(ser.Rows[i][j])))
		}
		ch.bandX = append(ch.bandX, t[i])
		ch.bandTips = append(ch.bandTips, strings.Join(parts, "\n"))
	}
	return ch.render(), note
}

func allNaN(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) {
			return false
		}
	}
	return true
}

// downsample averages consecutive rows so at most n remain (max columns
// keep their maximum).
func downsample(s *load.Series, n int) *load.Series {
	if len(s.Rows) <= n {
		return s
	}
	k := (len(s.Rows) + n - 1) / n
	out := &load.Series{Columns: s.Columns}
	for i := 0; i < len(s.Rows); i += k {
		end := min(i+k, len(s.Rows))
		row := make([]float64, len(s.Columns))
		for j, name := range s.Columns {
			acc, cnt := 0.0, 0
			for _, r := range s.Rows[i:end] {
				v := r[j]
				if math.IsNaN(v) {
					continue
				}
				if strings.HasPrefix(name, "max") || name == "p99_ms" || name == "second" {
					if cnt == 0 || v > acc {
						acc = v
					}
				} else {
					acc += v
				}
				cnt++
			}
			switch {
			case cnt == 0:
				row[j] = math.NaN()
			case strings.HasPrefix(name, "max") || name == "p99_ms" || name == "second":
				row[j] = acc
			default:
				row[j] = acc / float64(cnt)
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// environment lists the machine, tools, placement and builds (with the
// builds table's heading: an Image column when images were run).
func environment(res *Results) ([][2]string, []string, [][]string) {
	r := res.Run
	m := r.Machine
	env := [][2]string{{"Source", res.Kind + ": " + res.Path}}
	add := func(k, v string) {
		if v != "" {
			env = append(env, [2]string{k, v})
		}
	}
	if !r.Start.IsZero() {
		add("Start", r.Start.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if !r.End.IsZero() && !r.Start.IsZero() {
		add("Duration", r.End.Sub(r.Start).Round(1e9).String())
	}
	add("Host", m.Hostname)
	if m.CPUs > 0 {
		add("CPU", fmt.Sprintf("%s × %d", m.CPUModel, m.CPUs))
	}
	if m.MemoryBytes > 0 {
		add("Memory", human.Bytes(float64(m.MemoryBytes)))
	}
	add("OS", strings.TrimSpace(m.OS+" "+m.Kernel))
	add("cgroup", m.Cgroup)
	if m.GitCommit != "" {
		c := m.GitCommit
		if m.GitDirty {
			c += " (uncommitted changes)"
		}
		add("Git commit", c)
	}
	keys := make([]string, 0, len(m.Versions))
	for k := range m.Versions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(k, m.Versions[k])
	}
	if res.Kind == KindRun {
		add("Placement", fmt.Sprintf("service CPUs %q, generator %q, databases %q", r.Placement.ServiceCPUs, r.Placement.GeneratorCPUs, r.Placement.DatabaseCPUs))
		add("Limits", describeLimits(res))
		if n := describeNoise(m.Noise); n != "" {
			add("Machine noise", n)
		}
		db := r.Databases
		var dbs []string
		if db.Postgres {
			dbs = append(dbs, "PostgreSQL")
		}
		if db.MariaDB {
			dbs = append(dbs, "MariaDB")
		}
		if len(dbs) > 0 {
			add("Databases", fmt.Sprintf("%s; max_connections %d; seed %d; prepared in %.1f s", strings.Join(dbs, ", "), db.MaxConnections, db.Seed, db.PrepareSeconds))
		}
	}
	var builds [][]string
	images := false
	names := make([]string, 0, len(r.Builds))
	for k := range r.Builds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		b := r.Builds[n]
		st := "built"
		if b.Cached {
			st = "cached"
		}
		if b.Error != "" {
			st = "failed: " + b.Error
		}
		builds = append(builds, []string{n, human.Bytes(float64(b.ArtifactBytes)), fmt.Sprintf("%.1f s", b.Seconds), st})
		if b.ImageBytes > 0 {
			images = true
		}
	}
	head := []string{"Service", "Artifact", "Build time", "Status"}
	if images {
		head = []string{"Service", "Artifact", "Image", "Image size", "Build time", "Status"}
		for i, n := range names {
			b := r.Builds[n]
			size := ""
			if b.ImageBytes > 0 {
				size = human.Bytes(float64(b.ImageBytes))
			}
			builds[i] = append(builds[i][:2:2], b.Image, size, builds[i][2], builds[i][3])
		}
	}
	return env, head, builds
}

// htmlCellText is cellText with the range on a second, smaller line.
func htmlCellText(c *CellSummary, col tableColumn) template.HTML {
	v := c.Values[col.key]
	s := template.HTMLEscapeString(col.format(v.Median))
	if lo, hi := col.format(v.Min), col.format(v.Max); col.spread && c.Trials > 1 && lo != hi {
		s += "<br><small>" + template.HTMLEscapeString(lo+"–"+hi) + "</small>"
	}
	return template.HTML(s)
}

// dropStragglers leaves out a last interval shorter than half a second:
// the few requests that completed after the end, whose percentiles and
// rate would be drawn as a spike.
func dropStragglers(s *load.Series) *load.Series {
	n := len(s.Rows)
	req, tp := s.Col("requests"), s.Col("throughput")
	if n < 3 || req == nil || tp == nil {
		return s
	}
	if last := n - 1; tp[last] > 0 && req[last]/tp[last] < 0.5 {
		return &load.Series{Columns: s.Columns, Rows: s.Rows[:last]}
	}
	return s
}

// columnLabels name timeseries.csv's columns in hover texts.
var columnLabels = map[string]string{
	"requests": "requests", "errors": "errors", "throughput": "req/s",
	"p50_ms": "p50 ms", "p90_ms": "p90 ms", "p99_ms": "p99 ms", "max_ms": "max ms", "active": "in flight",
	"service_cpu_percent": "service CPU %", "service_rss_kb": "service RSS KiB", "service_threads": "threads",
	"service_fds": "FDs", "service_ctx_switches": "context switches", "db_cpu_percent": "database CPU %",
	"db_rss_kb": "database RSS KiB", "generator_cpu_percent": "generator CPU %",
}
