package lab

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SummaryFile is the Markdown summary of a results folder.
const SummaryFile = "summary.md"

// SpreadWarning is the spread of throughput between trials, relative to
// their median, above which a result is called noisy.
const SpreadWarning = 0.10

// Cell is one implementation at one level of one workload, over trials.
type Cell struct {
	Implementation string
	Workload       string
	Level          int
	Levels         []*LevelRun   // one per trial that measured it
	Services       []*ServiceRun // the service runs they came from
}

// Cells groups a run's measured levels by workload, implementation and
// level, in plan order.
func Cells(r *Run) []*Cell {
	index := map[string]*Cell{}
	var out []*Cell
	for _, w := range r.Plan.Workloads {
		for _, im := range r.Plan.Implementations {
			for _, l := range r.Plan.Load.Levels {
				c := &Cell{Implementation: im.ID(), Workload: w.Name, Level: l}
				index[fmt.Sprintf("%s|%s|%d", w.Name, im.ID(), l)] = c
				out = append(out, c)
			}
		}
	}
	for _, sr := range r.Services {
		for _, lr := range sr.Levels {
			if c := index[fmt.Sprintf("%s|%s|%d", sr.Workload, sr.Implementation, lr.Level)]; c != nil && lr.Status == "ok" {
				c.Levels = append(c.Levels, lr)
				c.Services = append(c.Services, sr)
			}
		}
	}
	return out
}

// median returns the median of vs and their range; vs is reordered.
func median(vs []float64) (med, lo, hi float64) {
	if len(vs) == 0 {
		return 0, 0, 0
	}
	sort.Float64s(vs)
	n := len(vs)
	med = vs[n/2]
	if n%2 == 0 {
		med = (vs[n/2-1] + vs[n/2]) / 2
	}
	return med, vs[0], vs[n-1]
}

// stat is the median and range of f over the cell's trials.
func (c *Cell) stat(f func(*LevelRun) float64) (med, lo, hi float64) {
	vs := make([]float64, len(c.Levels))
	for i, l := range c.Levels {
		vs[i] = f(l)
	}
	return median(vs)
}

func (c *Cell) serviceStat(f func(*ServiceRun) float64) float64 {
	vs := make([]float64, len(c.Services))
	for i, s := range c.Services {
		vs[i] = f(s)
	}
	m, _, _ := median(vs)
	return m
}

// WriteSummary writes summary.md into dir.
func WriteSummary(dir string, r *Run) error {
	f, err := os.Create(filepath.Join(dir, SummaryFile))
	if err != nil {
		return err
	}
	defer f.Close()
	WriteTables(f, r)
	return nil
}

// WriteTables writes the Markdown summary of r: one aggregate table per
// workload (JMeter's columns plus resources; the median over trials, with
// the range where there are several), then the warnings and failures.
func WriteTables(w io.Writer, r *Run) {
	p := r.Plan
	fmt.Fprintf(w, "# showdown: %s\n\n", p.Name)
	if p.Description != "" {
		fmt.Fprintf(w, "%s\n\n", p.Description)
	}
	unit := "Users"
	if p.Load.Model == "open" {
		unit = "Rate/s"
	}
	fmt.Fprintf(w, "%s model, %d s per level, %d trial(s); %s, %d CPUs; service on CPUs %q, generator on %q, databases on %q; limits: %s.\n\n",
		p.Load.Model, int(durationSeconds(p.Load.Duration)), p.Trials, r.Machine.CPUModel, r.Machine.CPUs,
		r.Placement.ServiceCPUs, r.Placement.GeneratorCPUs, r.Placement.DatabaseCPUs, describeLimits(r))
	if r.Interrupted {
		fmt.Fprintf(w, "**Interrupted:** the run was stopped early; the tables hold what was measured.\n\n")
	}
	multi := p.Trials > 1
	cells := Cells(r)
	for _, wl := range p.Workloads {
		fmt.Fprintf(w, "## %s\n\n", wl.Name)
		fmt.Fprintf(w, "| Implementation | %s | Samples | Average | Median | 90%% | 95%% | 99%% | Min | Max | Error %% | Throughput/s | CPU %% | Peak RSS | Threads | FDs | Startup | Artifact |\n", unit)
		fmt.Fprintf(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, c := range cells {
			if c.Workload != wl.Name {
				continue
			}
			if len(c.Levels) == 0 {
				fmt.Fprintf(w, "| %s | %d | not measured | | | | | | | | | | | | | | | |\n", c.Implementation, c.Level)
				continue
			}
			ms := func(f func(*LevelRun) float64) string {
				m, lo, hi := c.stat(f)
				if multi {
					return fmt.Sprintf("%s (%s–%s)", fmtMs(m), fmtMs(lo), fmtMs(hi))
				}
				return fmtMs(m)
			}
			med := func(f func(*LevelRun) float64) float64 { m, _, _ := c.stat(f); return m }
			tput := func() string {
				m, lo, hi := c.stat(func(l *LevelRun) float64 { return l.Total.Throughput })
				if multi {
					return fmt.Sprintf("%s (%s–%s)", fmtCount(m), fmtCount(lo), fmtCount(hi))
				}
				return fmtCount(m)
			}
			fmt.Fprintf(w, "| %s | %d | %.0f | %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %.0f | %s | %.0f | %.0f | %.2fs | %s |\n",
				c.Implementation, c.Level,
				med(func(l *LevelRun) float64 { return float64(l.Total.Samples) }),
				fmtMs(med(func(l *LevelRun) float64 { return l.Total.Latency.Mean })),
				fmtMs(med(func(l *LevelRun) float64 { return l.Total.Latency.P50 })),
				fmtMs(med(func(l *LevelRun) float64 { return l.Total.Latency.P90 })),
				fmtMs(med(func(l *LevelRun) float64 { return l.Total.Latency.P95 })),
				ms(func(l *LevelRun) float64 { return l.Total.Latency.P99 }),
				fmtMs(med(func(l *LevelRun) float64 { return l.Total.Latency.Min })),
				fmtMs(med(func(l *LevelRun) float64 { return l.Total.Latency.Max })),
				med(func(l *LevelRun) float64 { return l.Total.ErrorPercent }),
				tput(),
				med(func(l *LevelRun) float64 { return l.Service.CPUMean }),
				fmtBytes(uint64(med(func(l *LevelRun) float64 { return float64(l.Service.RSSPeakBytes) }))),
				med(func(l *LevelRun) float64 { return float64(l.Service.ThreadsMax) }),
				med(func(l *LevelRun) float64 { return float64(l.Service.FDsMax) }),
				c.serviceStat(func(s *ServiceRun) float64 { return s.StartupSeconds }),
				fmtBytes(uint64(c.serviceStat(func(s *ServiceRun) float64 { return float64(s.ArtifactBytes) }))),
			)
		}
		fmt.Fprintln(w)
	}
	warns := Warnings(r)
	if len(warns) > 0 {
		fmt.Fprintf(w, "## Warnings\n\n")
		for _, s := range warns {
			fmt.Fprintf(w, "- %s\n", s)
		}
		fmt.Fprintln(w)
	}
	var failed []*ServiceRun
	for _, sr := range r.Services {
		if sr.Status != "ok" {
			failed = append(failed, sr)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "## Failures\n\n")
		for _, sr := range failed {
			fmt.Fprintf(w, "### %s on %s, trial %d\n\n%s\n\n", sr.Implementation, sr.Workload, sr.Trial, sr.Reason)
			if sr.LogTail != "" {
				fmt.Fprintf(w, "```\n%s\n```\n\n", sr.LogTail)
			}
		}
	}
	fmt.Fprintf(w, "Reproduce: `%s`\n", r.Command)
}

func describeLimits(r *Run) string {
	l := r.Limits
	var parts []string
	if l.CPUQuota > 0 {
		parts = append(parts, fmt.Sprintf("%.2g CPU", l.CPUQuota))
	}
	if l.MemoryBytes > 0 {
		parts = append(parts, fmtBytes(uint64(l.MemoryBytes))+" memory")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ") + " (" + l.Mechanism + ")"
}

// Warnings lists everything a reader must know before trusting the
// tables: failures, invariant violations, errors, noisy trials, a
// saturated generator, limits that could not be applied.
func Warnings(r *Run) []string {
	out := append([]string(nil), r.Warnings...)
	for _, n := range r.Limits.Notes {
		out = append(out, "limits: "+n)
	}
	for _, sr := range r.Services {
		if sr.Status != "ok" {
			out = append(out, fmt.Sprintf("%s on %s, trial %d failed: %s", sr.Implementation, sr.Workload, sr.Trial, sr.Reason))
		}
		for _, lr := range sr.Levels {
			for _, v := range lr.Violations {
				out = append(out, fmt.Sprintf("INVARIANT FAILED: %s on %s at %d, trial %d: %s: %s", sr.Implementation, sr.Workload, lr.Level, sr.Trial, v.Check, v.Detail))
			}
			for _, wmsg := range lr.Warnings {
				out = append(out, fmt.Sprintf("%s on %s at %d, trial %d: %s", sr.Implementation, sr.Workload, lr.Level, sr.Trial, wmsg))
			}
		}
	}
	for _, c := range Cells(r) {
		if len(c.Levels) < 2 {
			continue
		}
		m, lo, hi := c.stat(func(l *LevelRun) float64 { return l.Total.Throughput })
		if m > 0 && (hi-lo)/m > SpreadWarning {
			out = append(out, fmt.Sprintf("%s on %s at %d: throughput varies %.0f%% between trials (%s–%s req/s): noisy", c.Implementation, c.Workload, c.Level, 100*(hi-lo)/m, fmtCount(lo), fmtCount(hi)))
		}
	}
	return out
}

func durationSeconds(d Duration) float64 { return float64(d) / 1e9 }
