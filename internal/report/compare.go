package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/stats"
)

// Compare settings. The test is Welch's two-sided t-test on the per-trial
// values: runs usually have 2 to 5 trials, and with 3 against 3 the exact
// Mann-Whitney U test cannot reach p < 0.1, so it would call every change
// noise; Welch's test works from 2 trials a side and does not assume equal
// variances. Its normality assumption is reasonable for per-trial
// throughput and percentiles of runs of many requests each.
const (
	// DefaultAlpha is the p-value under which a change is significant.
	DefaultAlpha = 0.05
	// NoiseThreshold is the relative change under which a comparison
	// without trials to test (one trial on a side) is shown as "~": the
	// typical spread between trials on a quiet machine.
	NoiseThreshold = 0.05
)

// CompareMetrics are the metrics compare reports, in order.
var CompareMetrics = []string{"throughput", "p50_ms", "p99_ms", "cpu_percent", "rss_peak_bytes"}

// Side is one column of a comparison: a name and its cells by key.
type Side struct {
	// Name is shown in the header (a folder, or a selector).
	Name  string
	cells map[cellKey]*CellSummary
	order []cellKey
	// interrupted names the levels a signal cut short, left out.
	interrupted []string
}

type cellKey struct {
	workload, name string
	level          int
}

// SideOf makes a comparison side of every measured cell of s.
func SideOf(name string, s *Summary) *Side {
	return sideWhere(name, s, func(c *CellSummary) (string, bool) { return c.Implementation, true })
}

func sideWhere(name string, s *Summary, keep func(*CellSummary) (string, bool)) *Side {
	sd := &Side{Name: name, cells: map[cellKey]*CellSummary{}, interrupted: s.InterruptedLevels}
	for _, wl := range s.Workloads {
		for _, c := range wl.Cells {
			if c.Trials == 0 {
				continue
			}
			n, ok := keep(c)
			if !ok {
				continue
			}
			k := cellKey{c.Workload, n, c.Level}
			if _, dup := sd.cells[k]; !dup {
				sd.order = append(sd.order, k)
			}
			sd.cells[k] = c
		}
	}
	return sd
}

// Selector picks implementations inside one run for --between: "key=value"
// matches the implementation's service, variant or id (key "service",
// "variant", "implementation"), a variant written "key=value", or an
// environment variable of the implementation (key matched without regard
// to case); a bare word matches an implementation id, service or variant.
type Selector struct{ Key, Value string }

// ParseSelector reads "key=value" or a bare implementation name.
func ParseSelector(s string) (Selector, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Selector{}, errors.New("empty selector")
	}
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return Selector{Value: s}, nil
	}
	return Selector{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)}, nil
}

func (sel Selector) String() string {
	if sel.Key == "" {
		return sel.Value
	}
	return sel.Key + "=" + sel.Value
}

// BetweenSides splits one run into two sides by selectors. Cells are
// paired by service when several services match a side, else the one
// implementation of each side is paired with the other.
func BetweenSides(res *Results, a, b Selector) (*Side, *Side, error) {
	s := Summarize(res)
	match := func(sel Selector) map[string]string { // implementation -> service
		out := map[string]string{}
		// An implementation id written out matches that one alone.
		for _, im := range res.Run.Plan.Implementations {
			if im.ID() == sel.String() {
				out[im.ID()] = im.Service
				return out
			}
		}
		for _, im := range res.Run.Plan.Implementations {
			id := im.ID()
			ok := false
			switch strings.ToLower(sel.Key) {
			case "":
				ok = im.Service == sel.Value || im.Variant == sel.Value
			case "service":
				ok = im.Service == sel.Value
			case "variant":
				ok = im.Variant == sel.Value
			case "implementation", "impl", "id":
				ok = id == sel.Value
			default:
				ok = im.Variant == sel.String()
				for _, part := range strings.FieldsFunc(im.Variant, func(r rune) bool { return r == ',' || r == '+' || r == ';' }) {
					ok = ok || part == sel.String()
				}
				for k, v := range im.Env {
					ok = ok || (strings.EqualFold(k, sel.Key) && v == sel.Value)
				}
			}
			if ok {
				out[id] = im.Service
			}
		}
		return out
	}
	ma, mb := match(a), match(b)
	var errs []error
	for _, p := range []struct {
		sel Selector
		m   map[string]string
	}{{a, ma}, {b, mb}} {
		if len(p.m) == 0 {
			var ids []string
			for _, im := range res.Run.Plan.Implementations {
				ids = append(ids, im.ID())
			}
			errs = append(errs, fmt.Errorf("--between: %q matches no implementation of %s (there are: %s)", p.sel, res.Path, strings.Join(ids, ", ")))
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	single := len(ma) == 1 && len(mb) == 1
	key := func(m map[string]string) func(*CellSummary) (string, bool) {
		return func(c *CellSummary) (string, bool) {
			svc, ok := m[c.Implementation]
			if !ok {
				return "", false
			}
			if single {
				return a.String() + " → " + b.String(), true
			}
			return svc, true
		}
	}
	return sideWhere(a.String(), s, key(ma)), sideWhere(b.String(), s, key(mb)), nil
}

// Delta is the change of one metric of one cell from a base side.
type Delta struct {
	Workload string `json:"workload"`
	// Name is the implementation (or the pairing service with --between).
	Name   string `json:"name"`
	Level  int    `json:"level"`
	Metric string `json:"metric"`
	Base   Value  `json:"base"`
	Other  Value  `json:"other"`
	// Change is (other-base)/base of the medians.
	Change float64 `json:"change"`
	// P is the p-value of Welch's t-test; -1 when there were not two
	// trials on each side.
	P float64 `json:"p"`
	// Significant is false where the text shows "~".
	Significant bool `json:"significant"`
}

// CompareSides computes the deltas of every cell present on both sides.
func CompareSides(base, other *Side) []Delta {
	var out []Delta
	for _, k := range base.order {
		bc, oc := base.cells[k], other.cells[k]
		if oc == nil {
			continue
		}
		for _, m := range CompareMetrics {
			d := Delta{Workload: k.workload, Name: k.name, Level: k.level, Metric: m, Base: bc.Values[m], Other: oc.Values[m], P: -1}
			if d.Base.Median != 0 {
				d.Change = (d.Other.Median - d.Base.Median) / math.Abs(d.Base.Median)
			} else if d.Other.Median != 0 {
				d.Change = math.Inf(1)
			}
			if len(d.Base.Trials) >= 2 && len(d.Other.Trials) >= 2 {
				d.P = stats.WelchP(d.Base.Trials, d.Other.Trials)
				d.Significant = d.P < DefaultAlpha
			} else {
				d.Significant = math.Abs(d.Change) >= NoiseThreshold
			}
			out = append(out, d)
		}
	}
	return out
}

// WriteComparison writes deltas like benchstat: one table per metric, one
// row per cell, the median ± the spread of each side, the change and the
// test.
func WriteComparison(w io.Writer, base, other *Side, deltas []Delta) {
	fmt.Fprintf(w, "base: %s\nnew:  %s\n", base.Name, other.Name)
	seen := map[string]bool{} // both sides of --between come from one run
	for _, sd := range []*Side{base, other} {
		for _, l := range sd.interrupted {
			if !seen[l] {
				seen[l] = true
				fmt.Fprintf(w, "interrupted, not compared (%s): %s\n", sd.Name, l)
			}
		}
	}
	if len(deltas) == 0 {
		fmt.Fprintln(w, "\nno implementation x workload x level was measured on both sides")
		return
	}
	byMetric := map[string][]Delta{}
	for _, d := range deltas {
		byMetric[d.Metric] = append(byMetric[d.Metric], d)
	}
	noTest := false
	for _, m := range CompareMetrics {
		ds := byMetric[m]
		if len(ds) == 0 {
			continue
		}
		mt := metric(m)
		fmt.Fprintf(w, "\n%s (%s is better)\n", compareTitle(m), map[bool]string{true: "higher", false: "lower"}[mt.Higher])
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "workload\timplementation\tlevel\tbase\tnew\tchange\ttest\t\n")
		for _, d := range ds {
			change, test := "~", ""
			if d.Significant {
				change = fmtChange(d.Change)
			}
			if d.P >= 0 {
				test = fmt.Sprintf("p=%.3f n=%d+%d", d.P, len(d.Base.Trials), len(d.Other.Trials))
			} else {
				test = "no trials to test"
				noTest = true
				if !d.Significant {
					change = "~"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", d.Workload, d.Name, d.Level, fmtValue(m, d.Base), fmtValue(m, d.Other), change, test)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nmedian ± spread (max-min)/median over trials; Welch's t-test, ~ where p ≥ %.2f", DefaultAlpha)
	if noTest {
		fmt.Fprintf(w, "; with one trial on a side, ~ where the change is under %.0f%%", 100*NoiseThreshold)
	}
	fmt.Fprintln(w)
}

func compareTitle(m string) string {
	switch m {
	case "throughput":
		return "throughput (req/s)"
	case "p50_ms":
		return "median latency"
	case "p99_ms":
		return "p99 latency"
	case "cpu_percent":
		return "service CPU (% of a core)"
	case "rss_peak_bytes":
		return "service peak RSS"
	}
	return m
}

func fmtValue(m string, v Value) string {
	var s string
	switch m {
	case "p50_ms", "p99_ms":
		s = human.Ms(v.Median)
	case "rss_peak_bytes":
		s = human.Bytes(v.Median)
	case "cpu_percent":
		s = fmt.Sprintf("%.1f%%", v.Median)
	default:
		s = human.Count(v.Median)
	}
	if len(v.Trials) > 1 && v.Median != 0 {
		s += fmt.Sprintf(" ± %.0f%%", 100*(v.Max-v.Min)/math.Abs(v.Median))
	}
	return s
}

func fmtChange(c float64) string {
	if math.IsInf(c, 0) {
		return "+∞"
	}
	return fmt.Sprintf("%+.2f%%", 100*c)
}
