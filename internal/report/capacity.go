package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
)

// CapacityRow is one arm's capacity at the plan's objective on one
// workload, as the capacity table shows it.
type CapacityRow struct {
	Implementation string `json:"implementation"`
	// Capacity says the rate and its interval, or the lower bound and
	// why ("18400 req/s [18100, 18700]").
	Capacity string  `json:"capacity"`
	Rate     float64 `json:"rate"`
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	// SearchRate is the search's own estimate beside a capacity that
	// held in every start (0: the capacity is the search's).
	SearchRate float64 `json:"search_rate,omitempty"`
	// PerCPU is the capacity per CPU of the service (0: not pinned).
	PerCPU     float64 `json:"per_cpu,omitempty"`
	LowerBound bool    `json:"lower_bound,omitempty"`
	// Failed is the lowest failing rate and FailedWhy what failed there.
	Failed    float64 `json:"failed,omitempty"`
	FailedWhy string  `json:"failed_why,omitempty"`
	// Starts and Probes count the searches behind it.
	Starts   int   `json:"starts"`
	Probes   int   `json:"probes"`
	RSSBytes int64 `json:"rss_bytes,omitempty"`
}

// SizingRow is what one arm needs for the plan's sizing load.
type SizingRow struct {
	Implementation string `json:"implementation"`
	results.Size
	// Text says it in words.
	Text string `json:"text"`
}

// applyCapacities makes a capacity run's capacities the headline,
// verdict and capacity table of their workloads, with the sizing.
func applyCapacities(r *results.Run, byWorkload map[string]*Workload, s *Summary) {
	p := r.Plan
	if p.Sizing != nil {
		s.SizingLoad = p.Sizing.String()
	}
	for _, c := range r.Capacities {
		wl := byWorkload[c.Workload]
		if wl == nil {
			continue
		}
		row := CapacityRow{Implementation: c.Arm, Capacity: wording.Capacity(c), Rate: c.Rate, Low: c.Low, High: c.High, SearchRate: c.SearchRate, LowerBound: c.LowerBound,
			Failed: c.Failed, FailedWhy: c.FailedWhy, Starts: len(c.Brackets), Probes: len(c.Probes), RSSBytes: c.RSSBytes}
		if c.CPUs > 0 {
			row.PerCPU = c.Rate / c.CPUs
		}
		wl.Capacities = append(wl.Capacities, row)
		wl.CapacityUnit = c.Units()
		for _, m := range c.Warnings {
			wl.Warnings = append(wl.Warnings, fmt.Sprintf("%s, capacity search: %s", c.Arm, m))
		}
		if p.Sizing != nil {
			sz := results.SizeFor(c, *p.Sizing)
			wl.Sizing = append(wl.Sizing, SizingRow{Implementation: c.Arm, Size: sz, Text: wording.Size(sz)})
		}
	}
	// A capacity run measures no level: its cells (the warm-up's level,
	// never measured) are left out of the tables.
	for _, wl := range byWorkload {
		if len(wl.Capacities) > 0 && !slices.ContainsFunc(wl.Cells, func(c *CellSummary) bool { return c.Trials > 0 }) {
			wl.Cells = nil
		}
	}
	for _, v := range r.CapacityVerdicts {
		wl := byWorkload[v.Workload]
		if wl == nil {
			continue
		}
		wl.Verdicts = nil
		starts, held, bisected := 0, false, false
		for _, row := range wl.Capacities {
			starts = max(starts, row.Starts)
		}
		for _, c := range r.Capacities {
			held = held || c.Workload == v.Workload && c.HeldPerStart()
			for _, b := range c.Brackets {
				bisected = bisected || c.Workload == v.Workload && b.HeldFailed > 0
			}
		}
		wl.VerdictBasis = fmt.Sprintf("capacity at %s: %s meeting it, bracketed and bisected in every arm in turn over %d fresh start(s); 95%% interval of each adjacent ratio, paired by start", v.Objective, capacityMeasure(wl.CapacityUnit, p), starts)
		if held {
			how := "stepping down from each start's search edge until a rate held"
			if bisected {
				how += ", then bisecting as long toward the rate above it that failed"
			}
			wl.VerdictBasis = fmt.Sprintf("capacity at %s: %s meeting it in sustained runs (capacity.confirm, %s), over %d fresh start(s) with every arm in turn; the mean of what held and its 95%% interval over starts, and of each adjacent ratio, paired by start", v.Objective, capacityMeasure(wl.CapacityUnit, p), how, starts)
		}
		wl.Verdicts = append(append(append(wl.Verdicts, wording.Verdict(&v.Verdict)...), v.LowerBounds...), wording.AddedStarts(v)...)
		wl.Headline = capacityHeadline(wl, v)
		wl.CapacityFound = len(v.Ranking) > 0
	}
}

// capacityMeasure says what a capacity in unit is: "the highest
// open-model rate", "the most closed-model users (think time 10ms)".
func capacityMeasure(unit string, p *plan.Plan) string {
	if unit == results.UnitUsers {
		return fmt.Sprintf("the most closed-model users (think time %v)", time.Duration(p.Load.ThinkTime))
	}
	return "the highest open-model rate"
}

// CapacityHead and FailedHead are the capacity table's headings of the
// capacity and of the lowest failing load, in the workload's unit.
func (wl *Workload) CapacityHead() string { return fmt.Sprintf("Capacity (%s)", wl.capacityUnit()) }

func (wl *Workload) FailedHead() string {
	if wl.capacityUnit() == results.UnitUsers {
		return "Fewest users failing"
	}
	return "Lowest failing rate"
}

func (wl *Workload) capacityUnit() string {
	if wl.CapacityUnit == "" {
		return results.UnitRate
	}
	return wl.CapacityUnit
}

// capacityHeadline says who serves the most within the objective: "At
// p99 ≤ 10ms, errors ≤ 0.1%, go-stdlib serves the most: 18400 req/s
// [18100, 18700]; by capacity: ...".
func capacityHeadline(wl *Workload, v *results.CapacityVerdict) string {
	if len(v.Ranking) == 0 {
		return fmt.Sprintf("no implementation met %s at any rate probed", v.Objective)
	}
	byArm := map[string]CapacityRow{}
	for _, row := range wl.Capacities {
		byArm[row.Implementation] = row
	}
	first := byArm[v.Ranking[0]]
	text := fmt.Sprintf("At %s, %s serves the most: %s", v.Objective, first.Implementation, first.Capacity)
	if len(v.Pairs) > 0 {
		text += "; by capacity: " + wording.Ranking(&v.Verdict)
	}
	return text
}

// writeCapacity writes a workload's capacity and sizing tables in
// Markdown.
func writeCapacity(w io.Writer, s *Summary, wl *Workload) {
	if len(wl.Capacities) == 0 {
		return
	}
	fmt.Fprintf(w, "| Implementation | %s | Per CPU | %s | Why it failed | Starts | Probes | RSS at capacity |\n|---|---|--:|--:|---|--:|--:|--:|\n", wl.CapacityHead(), wl.FailedHead())
	for _, row := range wl.Capacities {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d | %d | %s |\n", row.Implementation, row.Capacity, row.PerCPUText(), row.FailedText(),
			orDash(strings.ReplaceAll(row.FailedWhy, "|", "/")), row.Starts, row.Probes, row.RSSText())
	}
	fmt.Fprintln(w)
	if len(wl.Sizing) > 0 {
		fmt.Fprintf(w, "Sizing for %s (from each capacity's lower end):\n\n| Implementation | Rate (req/s) | Cores | Processes | Memory |\n|---|--:|--:|--:|--:|\n", s.SizingLoad)
		for _, r := range wl.Sizing {
			fmt.Fprintf(w, "| %s | %s | %s | %d | %s |\n", r.Implementation, human.Count(r.Rate), r.CoresText(), r.Instances, r.MemoryText())
		}
		fmt.Fprintln(w)
	}
}

// PerCPUText is the capacity per CPU, or a dash.
func (row CapacityRow) PerCPUText() string { return orDash(rateText(row.PerCPU)) }

// FailedText is the lowest failing rate, or a dash.
func (row CapacityRow) FailedText() string { return orDash(rateText(row.Failed)) }

// RSSText is the RSS at the highest passing probe, or a dash.
func (row CapacityRow) RSSText() string { return orDash(bytesText(row.RSSBytes)) }

// CoresText is the cores needed, or a dash when unknown.
func (r SizingRow) CoresText() string {
	if r.Cores <= 0 {
		return orDash("")
	}
	return fmt.Sprintf("%.2f", r.Cores)
}

// MemoryText is the memory needed, or a dash.
func (r SizingRow) MemoryText() string { return orDash(bytesText(r.MemoryBytes)) }

func rateText(v float64) string {
	if v <= 0 {
		return ""
	}
	return human.Count(v)
}

func bytesText(b int64) string {
	if b <= 0 {
		return ""
	}
	return human.Bytes(float64(b))
}
