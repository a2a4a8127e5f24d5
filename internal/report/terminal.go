package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
)

// TerminalWidth is the width the terminal form of the answer keeps to.
const TerminalWidth = 100

// HasTerminalForm reports whether res has an answer WriteTerminal can
// write: a scorecard (interleaved rounds). Other runs print summary.md.
func HasTerminalForm(res *Results, opts ...Option) bool {
	return len(Summarize(res, opts...).Scorecards) > 0
}

// WriteTerminal writes the answer as a terminal shows it, every line at
// most width columns: the run's setup, then for each workload a narrow
// scorecard (a line per stack with its figures, * the best in its
// column) and the verdict's lines for each part of the question, each
// wrapped. summary.md and report.html keep the wide table with every
// ratio and interval.
func WriteTerminal(w io.Writer, res *Results, width int, opts ...Option) {
	s := Summarize(res, opts...)
	fmt.Fprintf(w, "showdown: %s\n%s\n", s.Name, wrap(setupLine(res)+".", width, ""))
	if s.Interrupted {
		fmt.Fprintf(w, "%s\n", wrap("Interrupted: the run was stopped early; this is what was measured.", width, ""))
	}
	for _, sc := range s.Scorecards {
		fmt.Fprintln(w)
		writeTerminalCard(w, res.Run, sc, s.LevelUnit, width)
	}
}

// terminalColumns are the narrow scorecard's columns: title, the wide
// scorecard's key, and how to shorten its cell.
var terminalColumns = []struct {
	title, key string
	width      int
}{
	{"throughput", "throughput", 14},
	{"p99 at R", "p99", 9},
	{"p99 busy", "p99_busy", 10},
	{"CPU/req", "cpu", 8},
	{"RSS at R", "rss_rate", 10},
	{"startup", "startup", 7},
	{"correct", "correct", 9},
}

// writeTerminalCard writes one workload's narrow scorecard and its
// verdict's lines.
func writeTerminalCard(w io.Writer, r *results.Run, sc *Scorecard, unit string, width int) {
	head := fmt.Sprintf("%s at %d %s", sc.Workload, sc.Level, unit)
	if sc.Rate > 0 {
		head += fmt.Sprintf("; R = %d req/s", sc.Rate)
		if sc.Shape != "" {
			head += " (" + sc.Shape + ")"
		}
	}
	if sc.BusyRate > 0 {
		head += fmt.Sprintf("; busy = %d req/s", sc.BusyRate)
	}
	fmt.Fprintf(w, "%s\n", wrap(head+"; * best in its column", width, ""))
	name := len("stack")
	for _, row := range sc.Rows {
		name = max(name, utf8.RuneCountInString(row.Stack))
	}
	line := pad("stack", name)
	for _, c := range terminalColumns {
		line += "  " + pad(c.title, c.width+1)
	}
	fmt.Fprintf(w, "%s\n", strings.TrimRight(line, " "))
	for _, row := range sc.Rows {
		line := pad(row.Stack, name)
		for _, c := range terminalColumns {
			mark := " "
			if row.Best[c.key] {
				mark = "*"
			}
			line += "  " + mark + pad(shortCell(c.key, row.Cell(c.key)), c.width)
		}
		fmt.Fprintf(w, "%s\n", strings.TrimRight(line, " "))
	}
	at, busy, _ := rateComparisons(r, sc.Workload)
	var level *results.Comparison
	for _, c := range r.Comparisons {
		if !c.AtRate && c.Workload == sc.Workload && c.Level == sc.Level && c.Verdict != nil {
			level = c
		}
	}
	say := func(label, text string) {
		if text != "" {
			fmt.Fprintf(w, "%s\n", wrap("- "+label+": "+text, width, "  "))
		}
	}
	if level != nil && len(level.Verdict.Ranking) > 0 {
		say("more users (throughput)", wording.Ranking(level.Verdict))
		say("bottleneck", wording.DatabaseBound(level.Verdict))
	}
	if at != nil {
		v := at.Verdict
		if len(v.Ranking) > 0 {
			say(fmt.Sprintf("faster at R (p99 at %d req/s)", at.Level), firstOf(wording.AgainstBest(v), wording.Ranking(v)))
		}
		say(fmt.Sprintf("fewer resources at R (CPU per request at %d req/s)", at.Level), cpuChain(v))
	}
	if busy != nil && len(busy.Verdict.Ranking) > 0 {
		text := firstOf(wording.AgainstBest(busy.Verdict), wording.Ranking(busy.Verdict))
		if len(busy.Verdict.Ranking) == 1 {
			text = "only " + busy.Verdict.Ranking[0] + " carried it"
		}
		say(fmt.Sprintf("under load (p99 at %d req/s)", busy.Level), text)
	}
	say("still correct", correctSummary(sc))
	for _, m := range sc.Missing {
		say("not answered", m)
	}
}

// shortCell is the figure at the head of a wide scorecard cell, without
// its ratio and interval (the verdict's lines say them), and a word for
// a cell that has none.
func shortCell(key, cell string) string {
	switch {
	case strings.HasPrefix(cell, "could not carry it"):
		return "overloaded"
	case strings.HasPrefix(cell, "left out"):
		return "left out"
	case strings.HasPrefix(cell, "not measured"), strings.HasPrefix(cell, "not ranked"):
		return "-"
	}
	if key == "correct" {
		var flags []string
		for _, f := range [][2]string{{"FAILED on", "FAILED"}, {"LEAK", "LEAK"}, {"ROWS", "ROWS"}, {"INVARIANT FAILED", "INVARIANT"}} {
			if strings.Contains(cell, f[0]) {
				flags = append(flags, f[1])
			}
		}
		if len(flags) > 0 {
			return strings.Join(flags, ",")
		}
		if strings.Contains(cell, "contract passed") {
			return "ok"
		}
		return "-"
	}
	head, _, _ := strings.Cut(cell, ";")
	head, _, _ = strings.Cut(head, " (")
	return strings.TrimSpace(head)
}

// correctSummary says the correctness column in a line: each stack that
// was flagged with its cell, or that none was, with the audits' counts
// where the workload's rows were held against its answers.
func correctSummary(sc *Scorecard) string {
	var flagged []string
	var writes results.Writes
	held, starts := 0, 0
	for _, row := range sc.Rows {
		if shortCell("correct", row.Correct) != "ok" {
			flagged = append(flagged, row.Stack+": "+row.Correct)
		}
		writes = writes.Add(row.Writes)
		held, starts = held+row.AuditHeld, starts+row.AuditStarts
	}
	if len(flagged) > 0 {
		return strings.Join(flagged, "; ")
	}
	out := "every stack passed its contract on every start, no leak"
	if len(writes) == 0 {
		return out
	}
	answered, lost, extra := writesTotals(writes)
	return out + fmt.Sprintf("; every stack's rows held against its answers (%s answered as written: %s lost, %s written past them); invariants held in %d of %d stack starts",
		answered, thousands(lost), thousands(extra), held, starts)
}

// cpuChain is the ranking on CPU per request at a rate, each pair's
// ratio after it: "rust-axum 2.04× [1.78, 2.34] java-helidon ≈
// node-http ...", with a pair whose order depends on the traffic's shape
// said so.
func cpuChain(v *results.Verdict) string {
	if len(v.CPURanking) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(v.CPURanking[0])
	for _, pr := range v.CPUPairs {
		switch {
		case shapeDepends(v, pr.Better, pr.Worse):
			fmt.Fprintf(&b, " ~ %s (depends on the traffic's shape)", pr.Worse)
		case pr.Significant:
			fmt.Fprintf(&b, " %.2f× [%.2f, %.2f] %s", pr.Ratio, pr.Low, pr.High, pr.Worse)
		default:
			fmt.Fprintf(&b, " ≈ %s", pr.Worse)
		}
	}
	return b.String()
}

// shapeDepends reports whether a and b's order in CPU per request turns
// with the traffic's shape.
func shapeDepends(v *results.Verdict, a, b string) bool {
	for _, f := range v.ShapeDepends {
		if (f.Cheaper == a && f.Dearer == b) || (f.Cheaper == b && f.Dearer == a) {
			return true
		}
	}
	return false
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// pad pads s with spaces to n columns (runes).
func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

// wrap breaks text at spaces into lines of at most width columns, the
// lines after the first indented by indent; a word longer than a line
// stands alone on its own.
func wrap(text string, width int, indent string) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
			if len(lines) > 0 {
				line = indent + word
			}
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = indent + word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
