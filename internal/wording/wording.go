// Package wording is the one owner of the words a verdict is said in:
// a ratio with its interval, a ranking, a capacity, a size and a rate,
// a probe, a round, a contract check and a warm-up. The printed verdict,
// the progress lines, summary.md and report.html all call it, so the
// same number reads the same everywhere. Package results keeps the data.
package wording

import (
	"fmt"
	"math"
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
		return fmt.Sprintf("%s ≈ %s on %s: no significant difference (%.2f× %s)", p.Better, p.Worse, metric, p.Ratio, iv)
	}
	return fmt.Sprintf("%s %.2f× %s %s %s", p.Better, p.Ratio, p.Worse, iv, what)
}

// Verdict is the verdict's statements, in order: every adjacent pair,
// the generator-bound arms, the database-bound ones, the A/A check and what is not within the
// precision.
func Verdict(v *results.Verdict) []string {
	var out []string
	if len(v.Ranking) == 1 && len(v.Pairs) == 0 && v.AA == nil {
		out = append(out, "only "+v.Ranking[0]+" was measured: nothing to compare")
	}
	for _, pr := range v.Pairs {
		if pr.InsideFloor {
			out = append(out, InsideFloor(pr, v))
			continue
		}
		out = append(out, Pair(pr, v.Metric))
	}
	if l := AgainstBest(v); l != "" {
		out = append(out, l)
	}
	said := map[[2]string]bool{}
	for _, pr := range v.CPUPairs {
		if f, ok := flipOf(v, pr.Better, pr.Worse); ok {
			out = append(out, ShapeFlip(f))
			said[[2]string{f.Cheaper, f.Dearer}] = true
			continue
		}
		out = append(out, CPUPair(pr, v))
	}
	for _, f := range v.ShapeDepends {
		if !said[[2]string{f.Cheaper, f.Dearer}] {
			out = append(out, ShapeFlip(f))
		}
	}
	out = append(out, overloaded(v)...)
	if v.FloorTakesP99 {
		out = append(out, fmt.Sprintf("the generator's send lateness p99 (%s) is over a third of the best p99 (%s): at this rate the p99s measure this host as much as the services", human.Ms(v.LatenessP99Ms), human.Ms(bestP99(v))))
	}
	out = append(out, Leaks(v.Leaks)...)
	arms := make([]string, 0, len(v.GeneratorBound))
	for arm := range v.GeneratorBound {
		arms = append(arms, arm)
	}
	sort.Strings(arms)
	for _, arm := range arms {
		out = append(out, fmt.Sprintf("%s is generator-bound: the generator used %.0f%% of its CPUs during its rounds, so its figures may be the generator's", arm, v.GeneratorBound[arm]))
	}
	if l := DatabaseBound(v); l != "" {
		out = append(out, l)
	}
	if v.AA != nil {
		out = append(out, "A/A (the machine against itself): "+Pair(*v.AA, v.Metric))
	}
	if v.CPUAA != nil {
		out = append(out, "A/A on CPU per request: "+Pair(*v.CPUAA, "CPU per request"))
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
		if v.TookSeconds > 0 {
			b += fmt.Sprintf("; the run took %v, over the budget: its %d starts' setups (starting, checking and warming every arm) took %v of it, and the budget cannot cut a plan below its starts", dur(v.TookSeconds, time.Minute), v.OverranStarts, dur(v.SetupsSeconds, time.Minute))
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

// DatabaseBound says which arms' figures are their database's, "" for
// none: "PostgreSQL used 96% of CPU 1 during the rounds of every stack:
// throughput measures PostgreSQL, not the services; compare CPU per
// request and memory", or, where the database shares the generator's
// CPUs, what the two used of them together.
func DatabaseBound(v *results.Verdict) string {
	d := v.Database
	if d == nil || len(v.DatabaseBound) == 0 {
		return ""
	}
	arms := make([]string, 0, len(v.DatabaseBound))
	for arm := range v.DatabaseBound {
		arms = append(arms, arm)
	}
	sort.Strings(arms)
	who := "every stack"
	for _, arm := range v.Ranking {
		if _, ok := v.DatabaseBound[arm]; !ok {
			who = strings.Join(arms, ", ")
			break
		}
	}
	cpus := cpusOf(d)
	advice := "compare CPU per request and memory"
	if d.WithGenerator {
		return fmt.Sprintf("%s and the generator share %s and together used %s of it during the rounds of %s (%s %s): %s is full, so %s measures it, not the services; %s",
			d.Engine, cpus, percents(v.WithGenerator), who, d.Engine, percents(v.DatabaseBound), cpus, v.Metric, advice)
	}
	return fmt.Sprintf("%s used %s of %s during the rounds of %s: %s measures %s, not the services; %s",
		d.Engine, percents(v.DatabaseBound), cpus, who, v.Metric, d.Engine, advice)
}

// DatabaseNote marks a database-bound arm's figure, "" for an arm that
// is not: "database-bound: PostgreSQL 96% of CPU 1", or "database-bound:
// PostgreSQL and the generator 95% of CPU 1" where the two share it.
func DatabaseNote(v *results.Verdict, arm string) string {
	d := v.Database
	p, ok := v.DatabaseBound[arm]
	if d == nil || !ok {
		return ""
	}
	cpus := cpusOf(d)
	if w, ok := v.WithGenerator[arm]; ok && d.WithGenerator {
		return fmt.Sprintf("database-bound: %s and the generator %.0f%% of %s", d.Engine, w, cpus)
	}
	return fmt.Sprintf("database-bound: %s %.0f%% of %s", d.Engine, p, cpus)
}

// cpusOf names a database's CPUs: "CPU 1", "CPUs 2-3".
func cpusOf(d *results.DatabaseCPUs) string {
	if d.Count > 1 {
		return "CPUs " + d.CPUs
	}
	return "CPU " + d.CPUs
}

// percents says a set of percentages: "96%", or their range "88–96%".
func percents(m map[string]float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range m {
		lo, hi = min(lo, p), max(hi, p)
	}
	if math.Round(lo) == math.Round(hi) {
		return fmt.Sprintf("%.0f%%", hi)
	}
	return fmt.Sprintf("%.0f–%.0f%%", lo, hi)
}

// AgainstBest says every arm's p99 against the best's, in one line:
// "p99 against the best (rust-axum, 0.32 ms): python-fastapi 3.80×
// [2.95, 4.89], node-http ≈ (1.08× [0.93, 1.25])"; "" with fewer than
// three ranked arms (the one pair says it).
func AgainstBest(v *results.Verdict) string {
	if len(v.P99Best) < 2 {
		return ""
	}
	var parts []string
	for i := len(v.P99Best) - 1; i >= 0; i-- {
		pr := v.P99Best[i]
		switch {
		case pr.InsideFloor:
			parts = append(parts, fmt.Sprintf("%s ≈ (inside this host's floor)", pr.Worse))
		case pr.Significant:
			parts = append(parts, fmt.Sprintf("%s %.2f× [%.2f, %.2f]", pr.Worse, pr.Ratio, pr.Low, pr.High))
		default:
			parts = append(parts, fmt.Sprintf("%s ≈ (%.2f× [%.2f, %.2f])", pr.Worse, pr.Ratio, pr.Low, pr.High))
		}
	}
	return fmt.Sprintf("p99 against the best (%s, %s): %s", v.Ranking[0], human.Ms(bestP99(v)), strings.Join(parts, ", "))
}

// flipOf is the shape flip of the pair a, b in v, either way round.
func flipOf(v *results.Verdict, a, b string) (results.ShapeFlip, bool) {
	for _, f := range v.ShapeDepends {
		if (f.Cheaper == a && f.Dearer == b) || (f.Cheaper == b && f.Dearer == a) {
			return f, true
		}
	}
	return results.ShapeFlip{}, false
}

// ShapeFlip says a pair whose CPU order turns with the traffic's shape:
// "node-http against go-stdlib on CPU per request depends on the
// traffic's shape: node-http 1.12× [1.05, 1.19] cheaper under this
// shape, go-stdlib 1.08× [1.02, 1.15] cheaper under even arrivals over 1
// connection; not ranked".
func ShapeFlip(f results.ShapeFlip) string {
	return fmt.Sprintf("%s against %s on CPU per request depends on the traffic's shape: %s %.2f× [%.2f, %.2f] cheaper under this shape, %s %.2f× [%.2f, %.2f] cheaper under %s; not ranked",
		f.Cheaper, f.Dearer, f.Cheaper, f.Main.Ratio, f.Main.Low, f.Main.High, f.Dearer, f.Contrast.Ratio, f.Contrast.Low, f.Contrast.High, f.ContrastShape)
}

// BusyRule says how the busy rate was chosen: "50% of node-http's
// 38,000 req/s at 50 users in start 1 (the second-slowest)".
func BusyRule(share float64, second string, throughput float64, level int, unit string, start int) string {
	return RateRule(share, second, throughput, level, unit, start) + " (the second-slowest)"
}

// LeftOut says the arms left out of a busy rate: "; left out:
// python-fastapi (served 9,100 req/s ...)", "" for none.
func LeftOut(out map[string]string) string {
	if len(out) == 0 {
		return ""
	}
	arms := make([]string, 0, len(out))
	for arm := range out {
		arms = append(arms, arm)
	}
	sort.Strings(arms)
	for i, arm := range arms {
		arms[i] = fmt.Sprintf("%s (%s)", arm, out[arm])
	}
	return "; left out: " + strings.Join(arms, ", ")
}

// RateRule says how an automatic rate was chosen: "50% of
// python-fastapi's 2,410 req/s at 50 users in start 1".
func RateRule(share float64, slowest string, throughput float64, level int, unit string, start int) string {
	return fmt.Sprintf("%.0f%% of %s's %s req/s at %d %s in start %d", 100*share, slowest, human.Count(throughput), level, unit, start)
}

// figuresOf is arm's figures in v, zero when it has none.
func figuresOf(v *results.Verdict, arm string) results.ArmFigures {
	for _, f := range v.Arms {
		if f.Arm == arm {
			return f
		}
	}
	return results.ArmFigures{}
}

// bestP99 is the ranking's first arm's p99, 0 when unknown.
func bestP99(v *results.Verdict) float64 {
	if len(v.Ranking) == 0 {
		return 0
	}
	return figuresOf(v, v.Ranking[0]).P99Ms
}

// InsideFloor says a latency pair that differs by less than the host's
// own floor: "go-stdlib ≈ rust-axum on p99: 0.21 ms apart, inside this
// host's floor of 0.90 ms (not ranked; 1.15× [1.02, 1.30])".
func InsideFloor(p results.PairRatio, v *results.Verdict) string {
	a, b := figuresOf(v, p.Better).P99Ms, figuresOf(v, p.Worse).P99Ms
	return fmt.Sprintf("%s ≈ %s on p99: %s apart, inside this host's floor of %s (the generator's send lateness p99), so not ranked by it (%.2f× [%.2f, %.2f])",
		p.Better, p.Worse, human.Ms(b-a), human.Ms(v.LatenessP99Ms), p.Ratio, p.Low, p.High)
}

// CPUPair says a pair on CPU per request: "go-stdlib 1.20× node-http
// [1.10, 1.31] less CPU per request (141 µs against 169 µs)".
func CPUPair(p results.PairRatio, v *results.Verdict) string {
	a, b := figuresOf(v, p.Better).CPUPerRequest, figuresOf(v, p.Worse).CPUPerRequest
	if !p.Significant {
		return fmt.Sprintf("%s ≈ %s on CPU per request: no significant difference (%.2f× [%.2f, %.2f]; %.0f µs against %.0f µs)", p.Better, p.Worse, p.Ratio, p.Low, p.High, a, b)
	}
	return fmt.Sprintf("%s %.2f× %s [%.2f, %.2f] less CPU per request (%.0f µs against %.0f µs)", p.Better, p.Ratio, p.Worse, p.Low, p.High, a, b)
}

// overloaded says which arms could not carry a comparison's rate.
func overloaded(v *results.Verdict) []string {
	arms := make([]string, 0, len(v.Overloaded))
	for arm := range v.Overloaded {
		arms = append(arms, arm)
	}
	sort.Strings(arms)
	var out []string
	for _, arm := range arms {
		out = append(out, fmt.Sprintf("%s could not carry the rate (%s): not ranked at it", arm, v.Overloaded[arm]))
	}
	return out
}

// growthUnit writes an amount of a resource a leak check follows.
func growthUnit(resource string, v float64) string {
	switch resource {
	case "rss":
		if v < 0 {
			return "-" + human.Bytes(-v)
		}
		return human.Bytes(v)
	case "threads":
		return fmt.Sprintf("%.1f threads", v)
	case "db_connections":
		return fmt.Sprintf("%.1f database connections", v)
	}
	return fmt.Sprintf("%.1f FDs", v)
}

// Resource names a resource the leak check follows (results.Growth's
// Resource) as the reader knows it: "RSS", "threads", "FDs", "database
// connections".
func Resource(name string) string {
	switch name {
	case "rss":
		return "RSS"
	case "fds":
		return "FDs"
	case "db_connections":
		return "database connections"
	}
	return name
}

// Leaks says what the leak check found: each leak, or that no arm grew
// past the limits.
func Leaks(gs []results.Growth) []string {
	if len(gs) == 0 {
		return nil
	}
	var out, settling []string
	for _, g := range gs {
		if g.Leak {
			out = append(out, fmt.Sprintf("LEAK: %s grew by %s a minute [%s, %s] over %d rounds of %.1f minutes (limit %s a minute)",
				g.Arm, growthUnit(g.Resource, g.PerMinute), growthUnit(g.Resource, g.Low), growthUnit(g.Resource, g.High), g.Points, g.Minutes, growthUnit(g.Resource, g.Limit)))
		}
		if g.Settling {
			settling = append(settling, fmt.Sprintf("settling, not a leak: %s's %s grew by %s a minute [%s, %s] over %d rounds of %.1f minutes, by %s a minute over their later half (limit %s a minute)",
				g.Arm, Resource(g.Resource), growthUnit(g.Resource, g.PerMinute), growthUnit(g.Resource, g.Low), growthUnit(g.Resource, g.High), g.Points, g.Minutes,
				growthUnit(g.Resource, g.LaterPerMinute), growthUnit(g.Resource, g.Limit)))
		}
	}
	if len(out) == 0 {
		// The resources in the order the check follows them; database
		// connections only where some arm's were checked.
		var names, limits []string
		seen := map[string]bool{}
		for _, g := range gs {
			if !seen[g.Resource] {
				seen[g.Resource] = true
				names, limits = append(names, Resource(g.Resource)), append(limits, growthUnit(g.Resource, g.Limit))
			}
		}
		out = append(out, fmt.Sprintf("no leak: no arm's %s grew past %s a minute over its rounds (the whole 95%% interval above it)",
			orList(names), orList(limits)))
	}
	return append(out, settling...)
}

// orList joins xs as "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// Comparison is the printed verdict of a comparison: a heading, then
// its verdict's lines.
func Comparison(c *results.Comparison) []string {
	head := fmt.Sprintf("VERDICT %s at %d (%s model, %d rounds):", c.Workload, c.Level, c.Model, len(c.Rounds))
	switch {
	case c.Contrast:
		head = fmt.Sprintf("VERDICT %s at %s req/s under the contrasting shape, %s (%d rounds of %g s):", c.Workload, human.Count(float64(c.Level)), c.Shape, len(c.Rounds), c.RoundSeconds)
	case c.Busy:
		head = fmt.Sprintf("VERDICT %s at a busy rate, %s req/s (%s; %s; %d rounds of %g s%s):", c.Workload, human.Count(float64(c.Level)), c.RateRule, c.Shape, len(c.Rounds), c.RoundSeconds, LeftOut(c.LeftOut))
	case c.AtRate:
		head = fmt.Sprintf("VERDICT %s at one rate, %s req/s (%s; %s; %d rounds of %g s):", c.Workload, human.Count(float64(c.Level)), c.RateRule, firstOf(c.Shape, "even arrivals"), len(c.Rounds), c.RoundSeconds)
	case c.Shape != "":
		head = fmt.Sprintf("VERDICT %s at %d (%s model, %s, %d rounds):", c.Workload, c.Level, c.Model, c.Shape, len(c.Rounds))
	}
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
// "at least 52000 req/s (a lower bound: generator at 91% of its CPUs)";
// one confirmed in every start says what held: "held 46000 req/s
// [44100, 47900] (2 × 30 s in each start); the search's edge 51400".
func Capacity(c *results.Capacity) string {
	if c.HeldPerStart() && c.SearchRate > 0 {
		return heldCapacity(c)
	}
	var out string
	switch {
	case c.LowerBound && c.Low > 0:
		out = fmt.Sprintf("at least %s %s (a lower bound: %s)", Amount(c.Low, c.Units()), c.Units(), c.Reason)
	case c.Rate == 0 && c.Answer == results.AnswerBelowFloor:
		return "none: the objective is below this host's floor: " + c.Reason + floorSuffix(c)
	case c.Rate == 0 && c.Reason != "":
		return "none: " + c.Reason + floorSuffix(c)
	case c.Rate == 0:
		return "not measured"
	default:
		out = fmt.Sprintf("%s %s [%s, %s]", Amount(c.Rate, c.Units()), c.Units(), Amount(c.Low, c.Units()), Amount(c.High, c.Units()))
	}
	return out + Held(c) + floorSuffix(c)
}

// heldCapacity is Capacity of a capacity confirmed in every start whose
// search found an edge.
func heldCapacity(c *results.Capacity) string {
	u := c.Units()
	held, _ := heldStarts(c)
	switch {
	case c.LowerBound && c.Low > 0:
		return fmt.Sprintf("held at least %s %s (%s; a lower bound: %s)", Amount(c.Low, u), u, heldIn(c), c.Reason) + searchEdge(c) + heldWide(c) + floorSuffix(c)
	case c.Rate == 0:
		return "none held: " + c.Reason + searchEdge(c) + floorSuffix(c)
	case len(held) < 2:
		// One start's rate has no interval: Unsettled says so.
		return fmt.Sprintf("held %s %s", Amount(c.Rate, u), u) + Held(c) + floorSuffix(c)
	}
	return fmt.Sprintf("held %s %s [%s, %s]", Amount(c.Rate, u), u, Amount(c.Low, u), Amount(c.High, u)) + Held(c) + floorSuffix(c)
}

// searchEdge is "; the search's edge 51400" for a capacity confirmed in
// every start: the search's own estimate, kept beside what held.
func searchEdge(c *results.Capacity) string {
	if c.SearchRate <= 0 {
		return ""
	}
	u := c.Units()
	edge := "; the search's edge " + Amount(c.SearchRate, u)
	// The confirmation's bisection found, in a start, the lowest rate
	// above what held that failed as long: the sustained runs' edge,
	// which a short probe's edge lies above on a host that stalls.
	var failed []string
	secs := 0.0
	for _, b := range c.Brackets {
		if b.Confirmed && b.Held > 0 && b.HeldFailed > 0 {
			failed = append(failed, Amount(b.HeldFailed, u))
			secs = b.HeldSeconds
		}
	}
	if len(failed) == 0 {
		return edge
	}
	return fmt.Sprintf("%s in short probes; %.0f s runs failed at %s, just above what held", edge, secs, and(failed))
}

// heldStarts are the rates c's starts held, in start order, and how
// many starts were confirmed.
func heldStarts(c *results.Capacity) (held []float64, confirmed int) {
	for _, b := range c.Brackets {
		if b.Confirmed {
			confirmed++
			if b.Held > 0 {
				held = append(held, b.Held)
			}
		}
	}
	return held, confirmed
}

// Unsettled says why a capacity's held interval is too wide to use
// (results.Capacity.Unsettled): "two starts held 39000 and 44000 req/s,
// an interval [9000, 74000] wider than ±25%"; "" when it is not.
func Unsettled(c *results.Capacity) string { return unsettled(c, true) }

// unsettled is Unsettled, the interval's ends left out without
// withInterval (where the line already says them).
func unsettled(c *results.Capacity, withInterval bool) string {
	if !c.Unsettled() {
		return ""
	}
	u := c.Units()
	held, confirmed := heldStarts(c)
	var rates []string
	for _, r := range held {
		rates = append(rates, Amount(r, u))
	}
	who := number(len(held)) + " starts"
	switch {
	case len(held) == 1 && confirmed == 1:
		who = "one start"
	case len(held) < confirmed:
		who = fmt.Sprintf("%s of %s starts", number(len(held)), number(confirmed))
	}
	text := fmt.Sprintf("%s held %s %s", who, and(rates), u)
	iv := "an interval"
	if withInterval {
		iv += fmt.Sprintf(" [%s, %s]", Amount(c.Low, u), Amount(c.High, u))
	}
	switch {
	case len(held) < 2:
		return text + ", too few for an interval"
	case c.Low <= 0:
		return text + ", " + iv + " reaching zero"
	}
	return fmt.Sprintf("%s, %s wider than ±%.0f%%", text, iv, 100*results.HeldHalfWidth)
}

// number is n in words up to ten ("two"), in figures beyond.
func number(n int) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}

// ordinal is the n-th in words up to the tenth ("third"), "13th" beyond.
func ordinal(n int) string {
	words := []string{"", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}
	if n > 0 && n < len(words) {
		return words[n]
	}
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// and joins items as a sentence does: "a", "a and b", "a, b and c".
func and(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// floorSuffix is "; this host's own p99 floor: 1.4 ms" for a capacity
// whose search measured it; "" otherwise.
func floorSuffix(c *results.Capacity) string {
	if c.Floor == nil {
		return ""
	}
	return "; " + floorFigure(c.Floor)
}

func floorFigure(f *results.HostFloor) string {
	return "this host's own p99 floor: " + human.Ms(f.Ms())
}

// HostFloor says this host's own latency floor and how it was measured:
// "this host's own p99 floor: 1.4ms (a trivial server on CPU 0 at 200
// req/s for 3 s: p50 0.15ms, p99 1.4ms; the generator's send lateness
// p99 1.2ms)".
func HostFloor(f *results.HostFloor) string {
	return fmt.Sprintf("%s (%s: p50 %s, p99 %s; the generator's send lateness p99 %s)", floorFigure(f), f.Where(), human.Ms(f.P50Ms), human.Ms(f.P99Ms), human.Ms(f.LatenessP99Ms))
}

// FloorWarning says plainly, for a capacity whose objective this host's
// floor takes more than a third of (Capacity.AboveFloor), that it is a
// statement about the host, and which objective the host resolves; ""
// otherwise.
func FloorWarning(c *results.Capacity) string {
	if !c.AboveFloor || c.Floor == nil {
		return ""
	}
	return fmt.Sprintf("this host's own p99 floor (%s) takes more than a third of the objective (%s): a capacity at it says as much about this host as about the service; an objective this host can resolve: p99 ≤ %s",
		human.Ms(c.Floor.Ms()), c.Objective, human.Ms(c.ResolvableMs))
}

// Answer says which of the four answers a capacity search gave, with
// the probes that decided it, start by start: "a bracket: start 1 held
// at 7,966 req/s (p99 3.1ms) and failed at 8,048 req/s (p99 22ms >
// 5.0ms)"; "" for a capacity with no brackets.
func Answer(c *results.Capacity) string {
	u := c.Units()
	at := func(rate float64) string { return Amount(rate, u) + " " + u }
	var starts []string
	for _, b := range c.Brackets {
		held := ""
		if b.Pass > 0 {
			held = "held at " + at(b.Pass)
			if pr := probeAt(c, b.Start, b.Pass, true); pr != nil {
				held += fmt.Sprintf(" (p99 %s)", human.Ms(pr.P99Ms))
			}
		}
		failed := ""
		switch {
		case b.Fail > 0 && b.GeneratorLimited:
			failed = "the generator's load limited " + at(b.Fail) + " (" + b.Why + ")"
		case b.Fail > 0 && b.Pass == 0:
			failed = "failed at every " + noun(u) + " down to " + at(b.Fail) + " (" + firstOf(b.Why, b.Stopped) + ")"
		case b.Fail > 0:
			failed = "failed at " + at(b.Fail) + " (" + b.Why + ")"
		case b.Stopped != "":
			failed = b.Stopped
		}
		text := fmt.Sprintf("start %d %s", b.Start, strings.Join(nonEmpty(held, failed), " and "))
		if then := startHeld(c, b); then != "" {
			text += ", " + then
		}
		starts = append(starts, text)
	}
	if len(starts) == 0 {
		return ""
	}
	var head string
	switch c.Answered() {
	case results.AnswerBracket:
		head = "a bracket"
	case results.AnswerGeneratorBound:
		head = "a lower bound"
		for _, b := range c.Brackets {
			if b.GeneratorLimited {
				head = "a lower bound, the generator's load limited it"
			}
		}
	case results.AnswerBelowFloor:
		head = "the objective is below this host's floor"
		if c.Floor != nil {
			head += fmt.Sprintf(" (%s; an objective this host can resolve: p99 ≤ %s)", floorFigure(c.Floor), human.Ms(c.ResolvableMs))
		}
	case results.AnswerServiceFailed:
		head = "the service failed"
	}
	return head + ": " + strings.Join(starts, "; ")
}

// probeAt is the last probe of start at rate that passed (or failed).
func probeAt(c *results.Capacity, start int, rate float64, pass bool) *results.Probe {
	for i := len(c.Probes) - 1; i >= 0; i-- {
		if pr := &c.Probes[i]; pr.Start == start && pr.Rate == rate && pr.Pass == pass {
			return pr
		}
	}
	return nil
}

func noun(unit string) string {
	if unit == results.UnitUsers {
		return "number of users"
	}
	return "rate"
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Held says how a capacity's confirmation went: "; held 30 s at 60336",
// "; held 2 × 30 s at 60336" (runs in a row),
// "; held 30 s only at 57319 (not at 60336)", "; did not hold 30 s at
// 60336, 57319, 54453 or 51730"; "" without confirmation runs. For a
// capacity confirmed in every start, whose figure is what held: " (2 ×
// 30 s in each start); the search's edge 51400", and where its interval
// is too wide to use, why and that another start would narrow it.
func Held(c *results.Capacity) string {
	if c.HeldPerStart() && c.SearchRate > 0 {
		return heldPerStart(c)
	}
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
	held := fmt.Sprintf("%.0f s", c.HeldSeconds)
	if c.HeldRuns > 1 {
		held = fmt.Sprintf("%d × %.0f s", c.HeldRuns, c.HeldSeconds)
	}
	switch {
	case c.Held > 0 && len(failed) == 0:
		return fmt.Sprintf("; held %s at %s", held, Amount(c.Held, c.Units()))
	case c.Held > 0:
		return fmt.Sprintf("; held %s only at %s (not at %s)", held, Amount(c.Held, c.Units()), strings.Join(failed, ", "))
	}
	return fmt.Sprintf("; did NOT hold %.0f s at %s", secs, strings.Join(failed, ", "))
}

// heldPerStart is Held of a capacity confirmed in every start.
func heldPerStart(c *results.Capacity) string {
	return " (" + heldIn(c) + ")" + searchEdge(c) + heldWide(c)
}

// heldIn is "2 × 30 s in each start": how long the held rates held, and
// in how many of the confirmed starts.
func heldIn(c *results.Capacity) string {
	held, confirmed := heldStarts(c)
	runs := ""
	for _, b := range c.Brackets {
		if b.Held > 0 {
			runs = heldRuns(b)
			break
		}
	}
	if len(held) < confirmed {
		return fmt.Sprintf("%s in %s of %s starts", runs, number(len(held)), number(confirmed))
	}
	return runs + " in each start"
}

// heldWide is "; two starts held 39000 and 44000 req/s, an interval
// reaching zero: a third start would narrow this" for a capacity whose
// held interval is too wide to use; "" otherwise.
func heldWide(c *results.Capacity) string {
	why := unsettled(c, false)
	if why == "" {
		return ""
	}
	_, confirmed := heldStarts(c)
	next := ordinal(confirmed + 1)
	return "; " + why + ": " + article(next) + " " + next + " start would narrow this"
}

// article is "an" before a word said with a vowel first ("eighth",
// "11th", "18th"), "a" before others.
func article(w string) string {
	for _, p := range []string{"e", "8", "11", "18"} {
		if strings.HasPrefix(w, p) && (p != "11" && p != "18" || len(w) == 4) {
			return "an"
		}
	}
	return "a"
}

// heldRuns is "2 × 30 s", the runs in a row that held at b.Held.
func heldRuns(b results.Bracket) string {
	if b.HeldRuns > 1 {
		return fmt.Sprintf("%d × %.0f s", b.HeldRuns, b.HeldSeconds)
	}
	return fmt.Sprintf("%.0f s", b.HeldSeconds)
}

// startHeld is how start b's confirmation went, for Answer: "then held
// 2 × 30 s at 44067 req/s (not at 46386)", "then held at no rate from
// 46386 down to 33711 req/s"; "" when it ran none.
func startHeld(c *results.Capacity, b results.Bracket) string {
	if !b.Confirmed {
		return ""
	}
	u := c.Units()
	var failed []string
	seen := map[float64]bool{}
	lowest := 0.0
	for _, pr := range c.Confirmations {
		if pr.Start != b.Start || pr.Disturbed != "" {
			continue
		}
		if lowest == 0 || pr.Rate < lowest {
			lowest = pr.Rate
		}
		if !pr.Pass && pr.Rate != b.Held && !seen[pr.Rate] {
			seen[pr.Rate] = true
			failed = append(failed, Amount(pr.Rate, u))
		}
	}
	switch {
	case b.Held > 0 && len(failed) == 0:
		return fmt.Sprintf("then held %s at %s %s", heldRuns(b), Amount(b.Held, u), u)
	case b.Held > 0:
		return fmt.Sprintf("then held %s at %s %s (not at %s)", heldRuns(b), Amount(b.Held, u), u, strings.Join(failed, ", "))
	}
	return fmt.Sprintf("then held at no %s from %s down to %s %s", noun(u), Amount(b.Pass, u), Amount(lowest, u), u)
}

// AddedStarts are the lines that say how many starts a capacity
// verdict's run added past the plan's trials, then each and why:
// "start 3, as go-stdlib on string: two starts held 39000 and 44000
// req/s, an interval [9735, 73265] wider than ±25%"; none when it added
// none.
func AddedStarts(v *results.CapacityVerdict) []string {
	if v.AddedStarts == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("%s %s added past the plan's trials, a held interval being too wide to use (reaching zero, or wider than ±%.0f%%):",
		number(v.AddedStarts), plural(v.AddedStarts, "start", "starts"), 100*results.HeldHalfWidth)}
	for _, a := range v.Added {
		out = append(out, "  "+a)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
	for _, l := range append(append(Verdict(&v.Verdict), v.LowerBounds...), AddedStarts(v)...) {
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

// dur is seconds as a duration rounded to unit.
func dur(seconds float64, unit time.Duration) time.Duration {
	return time.Duration(seconds * float64(time.Second)).Round(unit)
}
