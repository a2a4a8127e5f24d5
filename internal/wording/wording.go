// Package wording is the one owner of the words a verdict is said in:
// a ratio with its interval, a ranking, a capacity, a size and a rate,
// a probe, a round, a contract check and a warm-up. The printed verdict,
// the progress lines, summary.md and report.html all call it, so the
// same number reads the same everywhere. Package results keeps the data.
package wording

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/load"
)

// Pair says one pair of a verdict: "rust-axum 2.08× go-stdlib [2.01,
// 2.15] throughput", or that there is no significant difference.
func Pair(p results.PairRatio, metric string) string {
	what := metric
	if metric != "throughput" && metric != "capacity" {
		what = "lower " + metric
	}
	iv := fmt.Sprintf("[%.2f, %.2f]", p.Low, p.High)
	if p.OneStart {
		iv += " (one start: the machine's noise only)"
	}
	if !p.Significant {
		return fmt.Sprintf("%s ≈ %s: no significant difference (%.2f× %s)", p.Better, p.Worse, p.Ratio, iv)
	}
	return fmt.Sprintf("%s %.2f× %s %s %s", p.Better, p.Ratio, p.Worse, iv, what)
}

// Verdict is the verdict's statements, in order: every adjacent pair,
// the generator-bound arms, the A/A check and what is not within the
// precision.
func Verdict(v *results.Verdict) []string {
	var out []string
	if len(v.Ranking) == 1 && len(v.Pairs) == 0 && v.AA == nil {
		out = append(out, "only "+v.Ranking[0]+" was measured: nothing to compare")
	}
	for _, pr := range v.Pairs {
		out = append(out, Pair(pr, v.Metric))
	}
	arms := make([]string, 0, len(v.GeneratorBound))
	for arm := range v.GeneratorBound {
		arms = append(arms, arm)
	}
	sort.Strings(arms)
	for _, arm := range arms {
		out = append(out, fmt.Sprintf("%s is generator-bound: the generator used %.0f%% of its CPUs during its rounds, so its figures may be the generator's", arm, v.GeneratorBound[arm]))
	}
	if v.AA != nil {
		out = append(out, "A/A (the machine against itself): "+Pair(*v.AA, v.Metric))
	}
	if v.Repeated > 0 || v.Disturbed > 0 {
		out = append(out, fmt.Sprintf("the machine disturbed %d arm rounds (steal time, other processes, a starved service: each round's record says which): %d measured again at once, %d left out", v.Repeated+v.Disturbed, v.Repeated, v.Disturbed))
	}
	if v.Busy > 0 {
		out = append(out, fmt.Sprintf("%d more arm rounds were disturbed but kept: the machine was that busy through most of their start, so these figures measure a busy machine", v.Busy))
	}
	if v.BudgetSeconds > 0 {
		b := fmt.Sprintf("the budget of %v bought ±%.1f%% on the widest adjacent pair", time.Duration(v.BudgetSeconds*float64(time.Second)).Round(time.Second), 100*v.Bought)
		switch {
		case v.NeedSeconds > 0:
			b += fmt.Sprintf("; about %v would bring every pair within the precision", time.Duration(v.NeedSeconds*float64(time.Second)).Round(time.Minute))
		case v.NeedSeconds < 0:
			b += "; within trials_max starts no budget would bring every pair within the precision (the starts differ too much: each pair below says how many starts would)"
		}
		out = append(out, b)
	}
	for _, u := range v.Unresolved {
		out = append(out, "not within the precision: "+u)
	}
	for _, s := range v.FailIf {
		out = append(out, Slower(s))
	}
	return out
}

// Comparison is the printed verdict of a comparison: a heading, then
// its verdict's lines.
func Comparison(c *results.Comparison) []string {
	head := fmt.Sprintf("VERDICT %s at %d (%s model, %d rounds):", c.Workload, c.Level, c.Model, len(c.Rounds))
	if c.Verdict == nil || len(c.Verdict.Ranking) == 0 {
		return []string{head + " no verdict: no round was measured"}
	}
	out := []string{head}
	for _, l := range Verdict(c.Verdict) {
		out = append(out, "  "+l)
	}
	return out
}

// Ranking is the ranking as a chain of adjacent ratios: "rust-axum
// 2.08× [2.01, 2.15] go-stdlib ≈ java-helidon (no significant
// difference)".
func Ranking(v *results.Verdict) string {
	var b strings.Builder
	b.WriteString(v.Ranking[0])
	if len(v.Pairs) == 0 && v.AA == nil {
		b.WriteString(" alone")
	}
	for _, pr := range v.Pairs {
		if pr.Significant {
			fmt.Fprintf(&b, " %.2f× [%.2f, %.2f] %s", pr.Ratio, pr.Low, pr.High, pr.Worse)
		} else {
			fmt.Fprintf(&b, " ≈ %s (no significant difference, %.2f× [%.2f, %.2f])", pr.Worse, pr.Ratio, pr.Low, pr.High)
		}
	}
	if v.AA != nil {
		claim := "no difference claimed"
		if v.AA.Significant {
			claim = "a difference claimed: read the verdict with care"
		}
		fmt.Fprintf(&b, "; A/A %.3f× [%.3f, %.3f], %s", v.AA.Ratio, v.AA.Low, v.AA.High, claim)
	}
	return b.String()
}

// Capacity says a capacity in one line: "18400 req/s [18100, 18700]",
// "at least 52000 req/s (a lower bound: generator at 91% of its CPUs)".
func Capacity(c *results.Capacity) string {
	var out string
	switch {
	case c.LowerBound && c.Low > 0:
		out = fmt.Sprintf("at least %s %s (a lower bound: %s)", Amount(c.Low, c.Units()), c.Units(), c.Reason)
	case c.Rate == 0 && c.Reason != "":
		return "none: " + c.Reason
	case c.Rate == 0:
		return "not measured"
	default:
		out = fmt.Sprintf("%s %s [%s, %s]", Amount(c.Rate, c.Units()), c.Units(), Amount(c.Low, c.Units()), Amount(c.High, c.Units()))
	}
	return out + Held(c)
}

// Held says how a capacity's confirmation went: "; held 30 s at 60336",
// "; held 30 s only at 57319 (not at 60336)", "; did not hold 30 s at
// 60336, 57319, 54453 or 51730"; "" without confirmation runs.
func Held(c *results.Capacity) string {
	if len(c.Confirmations) == 0 {
		return ""
	}
	var failed []string
	for _, pr := range c.Confirmations {
		if !pr.Pass && pr.Disturbed == "" && pr.Rate != c.Held {
			failed = append(failed, Amount(pr.Rate, c.Units()))
		}
	}
	secs := c.Confirmations[len(c.Confirmations)-1].Seconds
	switch {
	case c.Held > 0 && len(failed) == 0:
		return fmt.Sprintf("; held %.0f s at %s", c.HeldSeconds, Amount(c.Held, c.Units()))
	case c.Held > 0:
		return fmt.Sprintf("; held %.0f s only at %s (not at %s)", c.HeldSeconds, Amount(c.Held, c.Units()), strings.Join(failed, ", "))
	}
	return fmt.Sprintf("; did NOT hold %.0f s at %s", secs, strings.Join(failed, ", "))
}

// Amount writes a load in unit: users as whole numbers, rates as
// human.Count does.
func Amount(v float64, unit string) string {
	if unit == results.UnitUsers {
		return fmt.Sprintf("%.0f", v)
	}
	return human.Count(v)
}

// CapacityVerdict is the printed verdict of capacities: a heading, then its statements.
func CapacityVerdict(v *results.CapacityVerdict) []string {
	head := fmt.Sprintf("VERDICT %s: capacity at %s:", v.Workload, v.Objective)
	if len(v.Ranking) == 0 {
		return []string{head + " no verdict: no capacity was found"}
	}
	out := []string{head}
	for _, l := range append(Verdict(&v.Verdict), v.LowerBounds...) {
		out = append(out, "  "+l)
	}
	return out
}

// Size says what carrying a load takes, in words.
func Size(sz results.Size) string {
	if sz.Instances == 0 {
		return "no capacity to size from"
	}
	cores := "cores unknown (the service was not pinned)"
	if sz.Cores > 0 {
		cores = fmt.Sprintf("%.2f cores", sz.Cores)
	}
	text := fmt.Sprintf("%s; %d process(es) of %s: %s", cores, sz.Instances, human.Bytes(float64(sz.MemoryBytes)/float64(sz.Instances)), human.Bytes(float64(sz.MemoryBytes)))
	if sz.LowerBound {
		text += " (at most: its capacity is a lower bound)"
	}
	return text
}

// SizeLine is one arm's sizing line of the progress output.
func SizeLine(c *results.Capacity, sz results.Size) string {
	return fmt.Sprintf("%s on %s: %s", c.Arm, c.Workload, Size(sz))
}

// Probe is a probe's progress line; unit is its capacity's.
func Probe(pr results.Probe, unit string) string {
	verdict := "pass"
	switch {
	case pr.GeneratorLimited:
		verdict = "GENERATOR-LIMITED: " + pr.Why
	case !pr.Pass:
		verdict = "fail: " + pr.Why
	}
	return fmt.Sprintf("%s %s (achieved %s req/s): p50 %s, p99 %s, p99.9 %s, errors %s, lateness p99 %s, service CPU %.0f%%, generator %.0f%%: %s",
		Amount(pr.Rate, unit), unit, human.Count(pr.Achieved), human.Ms(pr.P50Ms), human.Ms(pr.P99Ms), human.Ms(pr.P999Ms), plan.Fraction(pr.ErrorRate),
		human.Ms(pr.LatenessP99Ms), pr.ServiceCPU, pr.GeneratorCPU, verdict)
}

// Round is one progress line of a round: each arm's figure in
// the order measured.
func Round(r results.Round, model string) string {
	var parts []string
	for _, a := range r.Arms {
		v := fmt.Sprintf("%s %s req/s", a.Arm, human.Count(a.Throughput))
		if model == "open" {
			v = fmt.Sprintf("%s p99 %s", a.Arm, human.Ms(a.P99Ms))
		}
		if a.Misbehaved != "" {
			v += " (misbehaved)"
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, ", ")
}

// Contract says how a contract check went, for the progress lines.
func Contract(c *results.Contract) string {
	if c.Mode == plan.VerifyQuick {
		return fmt.Sprintf("(quick: one iteration of the scenario) passed in %.1fs", c.Seconds)
	}
	if c.Attempts > 1 {
		return fmt.Sprintf("passed on the second attempt: %d checks, %d skipped, in %.1fs (the first failed %d)", c.Passed, c.Skipped, c.Seconds, len(c.FirstFailures))
	}
	return fmt.Sprintf("passed: %d checks, %d skipped, in %.1fs", c.Passed, c.Skipped, c.Seconds)
}

// Warmup says how a warm-up ended, for the progress lines.
func Warmup(wu *results.WarmupRun) string {
	switch {
	case !wu.Auto:
		return fmt.Sprintf("%.0fs (fixed), %d requests", wu.Seconds, wu.Requests)
	case wu.Steady:
		return fmt.Sprintf("steady after %.0fs, %d requests (%s)", wu.Seconds, wu.Requests, ruleFigures(wu))
	}
	return fmt.Sprintf("NOT STEADY after %.0fs (the cap), %d requests (%s)", wu.Seconds, wu.Requests, ruleFigures(wu))
}

// ruleFigures are the steady-state rule's figures over the warm-up's
// last window: the rule, the trend and its interval's upper end against
// the bound and, for a JIT compiler watched, its threads' CPU. Records
// from before the trend rule give their CV and drift.
func ruleFigures(wu *results.WarmupRun) string {
	var s string
	switch wu.Rule {
	case "":
		s = fmt.Sprintf("CV %.1f%%, drift %.1f%%", 100*wu.CV, 100*wu.Drift)
	case "no-jit":
		return fmt.Sprintf("no JIT: a fixed %d s", wu.Window)
	default:
		s = fmt.Sprintf("%s: rise %+.1f%% per 10 s over %d s, at most %+.1f%% (bound %.1f%%)", wu.Rule, 100*wu.Rise, wu.Window, 100*wu.RiseHigh, 100*wu.MaxRise)
	}
	if n := len(wu.CompilerCPU); n > 0 && wu.Rule != "trend" {
		s += fmt.Sprintf(", JIT compiler %.0f%% of a CPU", stats.Mean(wu.CompilerCPU[max(0, n-stats.DefaultSteadyWindow):]))
	}
	return s
}

// Level is a measured level's progress line: "48213 req/s, p50 0.91ms,
// p99 3.2ms, errors 0.00%, CPU 99%, RSS 12.3 MiB", and its invariant
// failures.
func Level(lr *results.LevelRun) string {
	t := lr.Total
	msg := fmt.Sprintf("%s req/s, p50 %s, p99 %s, errors %.2f%%, CPU %.0f%%, RSS %s",
		human.Count(t.Throughput), human.Ms(t.Latency.P50), human.Ms(t.Latency.P99),
		t.ErrorPercent, lr.Service.CPUMean, human.Bytes(float64(lr.Service.RSSPeakBytes)))
	if len(lr.Violations) > 0 {
		msg += fmt.Sprintf(", %d INVARIANT FAILURES", len(lr.Violations))
	}
	return msg
}

// Live is the load's figures on the live status line: "48213 req/s · 0
// errors · p99 3.2ms".
func Live(p load.Progress) string {
	return fmt.Sprintf("%s req/s · %d errors · p99 %s", human.Count(p.Rate), p.Errors, human.Ms(float64(p.P99)/1e6))
}
