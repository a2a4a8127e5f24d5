package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/internal/wording"
)

// Scorecard is a workload's whole answer, one row per stack and one
// column per part of the question: more users (throughput at the first
// level), faster (p99 at one rate), fewer resources (CPU per request
// and memory at that rate, memory at the level, startup, size) and
// still correct (the contract checks and the leak check). Every ratio
// is an adjacent pair's of its own ranking, with its 95% interval.
type Scorecard struct {
	Workload string `json:"workload"`
	// Level is the closed-model level the throughput column comes from,
	// Rate the rate of the latency and CPU columns (0: not measured, and
	// Missing says which parts this run cannot answer).
	Level    int    `json:"level"`
	Rate     int    `json:"rate,omitempty"`
	RateRule string `json:"rate_rule,omitempty"`
	// Shape is how the rate's arrivals came (results.Comparison.Shape),
	// and Contrast the contrasting shape its CPU ranking was held
	// against ("" when it was not).
	Shape    string `json:"shape,omitempty"`
	Contrast string `json:"contrast_shape,omitempty"`
	// BusyRate is the busy rate of the p99 under load column (0: not
	// measured), BusyRule how it was chosen.
	BusyRate int    `json:"busy_rate,omitempty"`
	BusyRule string `json:"busy_rule,omitempty"`
	// FloorMs is the generator's send lateness p99 at the rate: the
	// host's own floor under the p99 column.
	FloorMs float64 `json:"floor_ms,omitempty"`
	// Host is this host's own latency floor, measured before the run's
	// first start (nil in runs before it was).
	Host    *results.HostFloor `json:"host_floor,omitempty"`
	Rows    []ScorecardRow     `json:"rows"`
	Missing []string           `json:"missing,omitempty"`
	// Load is the plan's sizing load in words, and Sizing what each
	// stack needs to carry it, from its CPU per request and RSS at the
	// rate (empty without a sizing load or a rate).
	Load   string          `json:"sizing_load,omitempty"`
	Sizing []ScorecardSize `json:"sizing,omitempty"`
}

// ScorecardSize is what one stack needs to carry the plan's sizing
// load: cores from its CPU per request at the rate (the band of its
// starts), memory from its RSS at the rate (the band of its starts), and
// with the plan's prices their cost a month.
type ScorecardSize struct {
	Stack   string `json:"stack"`
	Cores   string `json:"cores"`
	Memory  string `json:"memory"`
	Monthly string `json:"monthly,omitempty"`
}

// sizeAt is what each stack of at needs for the load: a band of cores
// (requests a second × CPU seconds a request, the starts' lowest and
// highest), its RSS band, and with prices the cost a month of both.
func sizeAt(at *results.Comparison, stacks []string, s *plan.Sizing) []ScorecardSize {
	rate := s.RequestsPerSecond()
	var out []ScorecardSize
	for _, st := range stacks {
		f := figures(at.Verdict, st)
		if _, over := at.Verdict.Overloaded[st]; over || f.CPUPerRequest <= 0 {
			continue
		}
		lo, hi := f.CPULow, f.CPUHigh
		if lo <= 0 {
			lo, hi = f.CPUPerRequest, f.CPUPerRequest
		}
		cLo, cHi := rate*lo/1e6, rate*hi/1e6
		mLo, mHi := float64(f.RSSLow), float64(f.RSSHigh)
		if mLo == 0 {
			mLo, mHi = float64(f.RSSBytes), float64(f.RSSBytes)
		}
		sz := ScorecardSize{Stack: st, Cores: band(cLo, cHi, func(v float64) string { return fmt.Sprintf("%.2f", v) }) + " cores",
			Memory: band(mLo, mHi, human.Bytes)}
		if pr := s.Prices; pr != nil {
			month := func(cores, bytes float64) float64 {
				return (cores*pr.VCPUHour + bytes/(1<<30)*pr.GiBHour) * plan.HoursPerMonth
			}
			cur := pr.Currency
			if cur == "" {
				cur = "USD"
			}
			sz.Monthly = band(month(cLo, mLo), month(cHi, mHi), func(v float64) string { return fmt.Sprintf("%.2f", v) }) + " " + cur + " a month"
		}
		out = append(out, sz)
	}
	return out
}

// band writes lo–hi, or one figure when they read the same.
func band(lo, hi float64, say func(float64) string) string {
	if say(lo) == say(hi) {
		return say(lo)
	}
	return say(lo) + "–" + say(hi)
}

// ScorecardRow is one stack's cells. Each cell is its text; Best marks
// the columns in which it is best (by the column's key).
type ScorecardRow struct {
	Stack      string `json:"stack"`
	Throughput string `json:"throughput"`
	P99        string `json:"p99_at_rate"`
	P99Busy    string `json:"p99_at_busy_rate"`
	CPU        string `json:"cpu_per_request_at_rate"`
	RSSAtRate  string `json:"rss_at_rate"`
	RSSAtLevel string `json:"rss_at_level"`
	Idle       string `json:"rss_idle"`
	Startup    string `json:"startup"`
	Size       string `json:"size"`
	Correct    string `json:"correct"`
	// Writes are the rows the audits held against the stack's answers,
	// and AuditHeld of AuditStarts the starts whose invariants held (a
	// workload whose rows are counted only).
	Writes      results.Writes  `json:"writes,omitempty"`
	AuditHeld   int             `json:"audit_held,omitempty"`
	AuditStarts int             `json:"audit_starts,omitempty"`
	Best        map[string]bool `json:"best,omitempty"`
}

// ScorecardColumns are the scorecard's columns: key, title.
var ScorecardColumns = [][2]string{
	{"throughput", "More users: throughput"},
	{"p99", "Faster: p99 at the rate"},
	{"p99_busy", "p99 under load"},
	{"cpu", "Fewer resources: CPU per request at the rate"},
	{"rss_rate", "RSS at the rate"},
	{"rss_level", "RSS at the level"},
	{"idle", "RSS idle"},
	{"startup", "Startup"},
	{"size", "Size"},
	{"correct", "Still correct"},
}

// Cell is the row's text of column key.
func (r ScorecardRow) Cell(key string) string {
	switch key {
	case "throughput":
		return r.Throughput
	case "p99":
		return r.P99
	case "p99_busy":
		return r.P99Busy
	case "cpu":
		return r.CPU
	case "rss_rate":
		return r.RSSAtRate
	case "rss_level":
		return r.RSSAtLevel
	case "idle":
		return r.Idle
	case "startup":
		return r.Startup
	case "size":
		return r.Size
	}
	return r.Correct
}

// scorecards are the run's scorecards, one per workload with an
// interleaved comparison at a closed-model level.
func scorecards(r *results.Run) []*Scorecard {
	if r == nil {
		return nil
	}
	var out []*Scorecard
	for _, c := range r.Comparisons {
		if c.AtRate || c.Model == "open" || c.Verdict == nil || len(c.Verdict.Ranking) == 0 {
			continue
		}
		if slices.ContainsFunc(out, func(s *Scorecard) bool { return s.Workload == c.Workload }) {
			continue // the first level answers "more users"
		}
		out = append(out, scorecardOf(r, c))
	}
	return out
}

// scorecardOf is workload's scorecard from its comparison c at a level
// and, where the run has one, its first comparison at a rate.
func scorecardOf(r *results.Run, c *results.Comparison) *Scorecard {
	sc := &Scorecard{Workload: c.Workload, Level: c.Level, Host: r.Machine.HostFloor}
	at, busy, contrast := rateComparisons(r, c.Workload)
	if at == nil {
		sc.Missing = append(sc.Missing, "faster and CPU per request: this run drove no rate common to every stack (a plan's at_rate)")
	} else {
		sc.Rate, sc.RateRule, sc.FloorMs, sc.Shape = at.Level, at.RateRule, at.Verdict.LatenessP99Ms, at.Shape
		if contrast != nil && contrast.Level == at.Level {
			sc.Contrast = contrast.Shape
		}
	}
	if busy != nil {
		sc.BusyRate, sc.BusyRule = busy.Level, busy.RateRule
	}

	v := c.Verdict
	stacks := slices.Clone(v.Ranking)
	for _, arm := range c.Arms {
		if !slices.Contains(stacks, arm) && slices.ContainsFunc(v.Arms, func(f results.ArmFigures) bool { return f.Arm == arm }) {
			stacks = append(stacks, arm)
		}
	}
	if v.AA != nil && len(c.Arms) > 0 {
		stacks = slices.DeleteFunc(stacks, func(s string) bool { return s == c.Arms[len(c.Arms)-1] })
	}
	{
		if at != nil && r.Plan != nil && r.Plan.Sizing != nil {
			sc.Load = r.Plan.Sizing.String()
			sc.Sizing = sizeAt(at, stacks, r.Plan.Sizing)
		}
	}
	best := map[string]string{}
	best["throughput"] = first(v.Ranking)
	if busy != nil {
		best["p99_busy"] = first(busy.Verdict.Ranking)
	}
	if at != nil {
		best["p99"] = first(at.Verdict.Ranking)
		best["cpu"] = first(at.Verdict.CPURanking)
		best["rss_rate"] = least(stacks, func(s string) float64 { return float64(figures(at.Verdict, s).RSSBytes) })
	}
	best["rss_level"] = least(stacks, func(s string) float64 { return float64(figures(v, s).RSSBytes) })
	runs := map[string][]*results.ServiceRun{}
	for _, sr := range r.Services {
		if sr.Workload == c.Workload {
			runs[sr.Implementation] = append(runs[sr.Implementation], sr)
		}
	}
	best["idle"] = least(stacks, func(s string) float64 {
		return medianOf(runs[s], func(sr *results.ServiceRun) float64 { return float64(sr.RSSIdleBytes) })
	})
	best["startup"] = least(stacks, func(s string) float64 {
		return medianOf(runs[s], func(sr *results.ServiceRun) float64 { return sr.StartupSeconds })
	})
	best["size"] = least(stacks, func(s string) float64 { return sizeOf(runs[s]) })
	leaks := map[string][]string{}
	for _, x := range []*results.Comparison{c, at, busy, contrast} {
		if x == nil {
			continue
		}
		for _, g := range x.Verdict.Leaks {
			// Named as the reader knows it ("database connections"),
			// once where both comparisons found it.
			if name := wording.Resource(g.Resource); g.Leak && !slices.Contains(leaks[g.Arm], name) {
				leaks[g.Arm] = append(leaks[g.Arm], name)
			}
		}
	}
	for _, s := range stacks {
		row := ScorecardRow{Stack: s, Best: map[string]bool{}}
		f := figures(v, s)
		row.Throughput = fmt.Sprintf("%s req/s%s", human.Count(f.Throughput), nextText(v.Pairs, s))
		if n := wording.DatabaseNote(v, s); n != "" {
			row.Throughput += " (" + n + ")"
		}
		if at != nil {
			fa := figures(at.Verdict, s)
			switch why, over := at.Verdict.Overloaded[s]; {
			case over:
				row.P99, row.CPU = "could not carry it: "+why, "not ranked"
			case fa.Rounds == 0:
				row.P99, row.CPU = "not measured", "not measured"
			default:
				row.P99 = fmt.Sprintf("%s (p50 %s)%s%s", human.Ms(fa.P99Ms), human.Ms(fa.P50Ms), nextText(at.Verdict.Pairs, s), bestText(at.Verdict, s))
				row.CPU = fmt.Sprintf("%.0f µs%s%s", fa.CPUPerRequest, nextText(at.Verdict.CPUPairs, s), shapeText(at.Verdict, s))
			}
			row.RSSAtRate = rssText(fa)
		} else {
			row.P99, row.CPU, row.RSSAtRate = "not measured", "not measured", "not measured"
		}
		row.P99Busy = busyText(busy, s)
		row.RSSAtLevel = rssText(f)
		row.Idle = rangeText(runs[s], func(sr *results.ServiceRun) float64 { return float64(sr.RSSIdleBytes) }, func(v float64) string { return human.Bytes(v) })
		row.Startup = rangeText(runs[s], func(sr *results.ServiceRun) float64 { return sr.StartupSeconds }, func(v float64) string { return fmt.Sprintf("%.2f s", v) })
		if b := sizeOf(runs[s]); b > 0 {
			row.Size = human.Bytes(b)
		} else {
			row.Size = "unknown"
		}
		row.Correct = correctText(runs[s], leaks[s], len(c.Verdict.Leaks) > 0)
		if a, w, held, starts := audited(r, c.Workload, s, runs[s]); a != "" {
			row.Correct += "; " + a
			row.Writes, row.AuditHeld, row.AuditStarts = w, held, starts
		}
		for key, b := range best {
			if b == s {
				row.Best[key] = true
			}
		}
		sc.Rows = append(sc.Rows, row)
	}
	return sc
}

func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}

// least is the stack whose figure is least and positive, "" for none.
func least(stacks []string, fig func(string) float64) string {
	best, bv := "", math.Inf(1)
	for _, s := range stacks {
		if v := fig(s); v > 0 && v < bv {
			best, bv = s, v
		}
	}
	return best
}

// figures are arm's figures in v.
func figures(v *results.Verdict, arm string) results.ArmFigures {
	for _, f := range v.Arms {
		if f.Arm == arm {
			return f
		}
	}
	return results.ArmFigures{}
}

// nextText is arm's pair with the next of its ranking: "; 1.34×
// [1.18, 1.53] over go-stdlib", "; ≈ go-stdlib (1.02× [0.97, 1.08])",
// or "" for the last.
func nextText(pairs []results.PairRatio, arm string) string {
	for _, p := range pairs {
		if p.Better != arm {
			continue
		}
		switch {
		case p.InsideFloor:
			return fmt.Sprintf("; ≈ %s (inside the host's floor)", p.Worse)
		case !p.Significant:
			return fmt.Sprintf("; ≈ %s (%.2f× [%.2f, %.2f])", p.Worse, p.Ratio, p.Low, p.High)
		}
		return fmt.Sprintf("; %.2f× [%.2f, %.2f] over %s", p.Ratio, p.Low, p.High, p.Worse)
	}
	return ""
}

// rssText is an arm's median RSS over its rounds with the range of its
// starts' medians.
func rssText(f results.ArmFigures) string {
	if f.RSSBytes == 0 {
		return "not measured"
	}
	if f.RSSLow == f.RSSHigh {
		return human.Bytes(float64(f.RSSBytes))
	}
	return fmt.Sprintf("%s (%s–%s)", human.Bytes(float64(f.RSSBytes)), human.Bytes(float64(f.RSSLow)), human.Bytes(float64(f.RSSHigh)))
}

// medianOf is the median of fig over the records (0 for none).
func medianOf(srs []*results.ServiceRun, fig func(*results.ServiceRun) float64) float64 {
	var xs []float64
	for _, sr := range srs {
		if v := fig(sr); v > 0 {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	return stats.Median(xs)
}

// rangeText is the median of fig over the starts with their range.
func rangeText(srs []*results.ServiceRun, fig func(*results.ServiceRun) float64, say func(float64) string) string {
	m := medianOf(srs, fig)
	if m == 0 {
		return "not measured"
	}
	lo, hi := math.Inf(1), 0.0
	for _, sr := range srs {
		if v := fig(sr); v > 0 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if say(lo) == say(hi) {
		return say(m)
	}
	return fmt.Sprintf("%s (%s–%s)", say(m), say(lo), say(hi))
}

// sizeOf is a stack's artifact (or image, where one was built) in bytes.
func sizeOf(srs []*results.ServiceRun) float64 {
	for _, sr := range srs {
		if sr.ImageBytes > 0 {
			return float64(sr.ImageBytes)
		}
		if sr.ArtifactBytes > 0 {
			return float64(sr.ArtifactBytes)
		}
	}
	return 0
}

// correctText says whether a stack passed its contract checks on every
// start and whether the leak check found growth.
func correctText(srs []*results.ServiceRun, leaks []string, checked bool) string {
	starts, passed, failed := 0, 0, 0
	for _, sr := range srs {
		starts++
		switch {
		case sr.Contract != nil && sr.Contract.Failed == 0 && sr.Status != results.Failed:
			passed++
		case sr.Status == results.Failed || sr.Contract != nil && sr.Contract.Failed > 0:
			failed++
		}
	}
	var parts []string
	switch {
	case failed > 0:
		parts = append(parts, fmt.Sprintf("FAILED on %d of %d starts", failed, starts))
	case passed > 0:
		parts = append(parts, fmt.Sprintf("contract passed on %d of %d starts", passed, starts))
	default:
		parts = append(parts, "contract not checked")
	}
	switch {
	case len(leaks) > 0:
		parts = append(parts, "LEAK: "+strings.Join(leaks, ", ")+" grew")
	case checked:
		parts = append(parts, "no leak")
	default:
		parts = append(parts, "leaks not checked")
	}
	return strings.Join(parts, "; ")
}

// rateComparisons are workload's first judged comparisons at a rate:
// at R, at the busy rate, and at R under the contrasting shape (each nil
// when the run has none).
func rateComparisons(r *results.Run, workload string) (at, busy, contrast *results.Comparison) {
	for _, x := range r.Comparisons {
		if !x.AtRate || x.Workload != workload || x.Verdict == nil {
			continue
		}
		switch {
		case x.Busy:
			busy = cmpOr(busy, x)
		case x.Contrast:
			contrast = cmpOr(contrast, x)
		default:
			at = cmpOr(at, x)
		}
	}
	return at, busy, contrast
}

// cmpOr is the first of a comparison kind: a, or x when a is nil.
func cmpOr(a, x *results.Comparison) *results.Comparison {
	if a != nil {
		return a
	}
	return x
}

// bestText is arm's p99 against the best's where the best is not its
// neighbour: "; 3.80× [2.95, 4.89] the best's", "" otherwise.
func bestText(v *results.Verdict, arm string) string {
	for i, p := range v.P99Best {
		if p.Worse != arm || i == 0 {
			continue // the best's neighbour: its pair says it
		}
		switch {
		case p.InsideFloor:
			return "; ≈ the best (inside the host's floor)"
		case !p.Significant:
			return fmt.Sprintf("; ≈ the best (%.2f× [%.2f, %.2f])", p.Ratio, p.Low, p.High)
		}
		return fmt.Sprintf("; %.2f× [%.2f, %.2f] the best's", p.Ratio, p.Low, p.High)
	}
	return ""
}

// shapeText names the stacks whose CPU order against arm turns with the
// traffic's shape: "; depends on the shape against go-stdlib".
func shapeText(v *results.Verdict, arm string) string {
	var others []string
	for _, f := range v.ShapeDepends {
		switch arm {
		case f.Cheaper:
			others = append(others, f.Dearer)
		case f.Dearer:
			others = append(others, f.Cheaper)
		}
	}
	if len(others) == 0 {
		return ""
	}
	return "; depends on the shape against " + strings.Join(others, ", ")
}

// busyText is arm's cell at the busy rate: its p99 against the best's,
// why it was left out, or "not measured".
func busyText(busy *results.Comparison, arm string) string {
	if busy == nil {
		return "not measured"
	}
	if why, ok := busy.LeftOut[arm]; ok {
		return "left out: " + why
	}
	v := busy.Verdict
	if why, over := v.Overloaded[arm]; over {
		return "could not carry it: " + why
	}
	fa := figures(v, arm)
	if fa.Rounds == 0 {
		return "not measured"
	}
	t := fmt.Sprintf("%s (p50 %s)", human.Ms(fa.P99Ms), human.Ms(fa.P50Ms))
	if first(v.Ranking) == arm {
		return t + "; the best"
	}
	for _, p := range v.P99Best {
		if p.Worse != arm {
			continue
		}
		switch {
		case p.InsideFloor:
			return t + "; ≈ the best (inside the host's floor)"
		case !p.Significant:
			return t + fmt.Sprintf("; ≈ the best (%.2f× [%.2f, %.2f])", p.Ratio, p.Low, p.High)
		}
		return t + fmt.Sprintf("; %.2f× [%.2f, %.2f] the best's", p.Ratio, p.Low, p.High)
	}
	return t
}

// auditText is what the database's audits found for stack on workload,
// where its rows are counted against its answers (workloads/<w>/
// written.sql): the rows its answers said committed over its levels and
// every round of every start (each measured with the other stacks
// frozen, so the rows are its own), how many had no row to show or were
// written past them, and in how many starts the invariants held after
// its own levels (each on a reset database) and after the rounds it
// shared (an audit of those is held against a stack only when none of
// the stacks sharing them broke the same invariant alone). "" for a
// workload whose rows are not counted.
func auditText(r *results.Run, workload, stack string, runs []*results.ServiceRun) string {
	text, _, _, _ := audited(r, workload, stack, runs)
	return text
}

// audited is auditText with the counts it says: the rows, and the
// starts whose invariants held of those audited.
func audited(r *results.Run, workload, stack string, runs []*results.ServiceRun) (string, results.Writes, int, int) {
	var writes results.Writes
	starts, held := 0, 0
	broken := map[string]bool{}
	for _, sr := range runs {
		starts++
		ok := sr.Status != results.Failed
		for _, lr := range sr.Levels {
			writes = writes.Add(lr.Writes)
			for _, v := range lr.Violations {
				if !strings.HasPrefix(v.Check, "written") {
					ok, broken[v.Check] = false, true
				}
			}
		}
		for _, c := range r.Comparisons {
			if c.Workload != workload || !slices.Contains(c.Arms, stack) {
				continue
			}
			for _, v := range c.Violations {
				if v.Start == sr.Trial && !brokeAlone(r, workload, c.Arms, sr.Trial, v.Check) {
					ok, broken[v.Check+" (after the rounds it shared, by none alone)"] = false, true
				}
			}
		}
		if ok {
			held++
		}
	}
	for _, c := range r.Comparisons {
		if c.Workload != workload {
			continue
		}
		for _, rd := range c.Rounds {
			for _, a := range rd.Arms {
				if a.Arm == stack && a.Writes != nil {
					writes = writes.Add(a.Writes.Counts)
				}
			}
		}
	}
	if len(writes) == 0 {
		return "", nil, 0, 0
	}
	answered, lost, extra := writesTotals(writes)
	out := fmt.Sprintf("%s answered as written: %s lost, %s written past the answers", answered, thousands(lost), thousands(extra))
	if lost > 0 || extra > 0 {
		out = "ROWS " + out
	}
	switch {
	case len(broken) > 0:
		names := make([]string, 0, len(broken))
		for n := range broken {
			names = append(names, n)
		}
		sort.Strings(names)
		out += fmt.Sprintf("; INVARIANT FAILED in %d of %d starts: %s", starts-held, starts, strings.Join(names, ", "))
	case starts > 0:
		out += fmt.Sprintf("; invariants held in %d of %d starts", held, starts)
	}
	return out, writes, held, starts
}

// brokeAlone reports whether one of arms broke invariant check at its
// own level of workload in start trial: the audit after the rounds they
// shared then has its culprit, and the others are not marked for it.
func brokeAlone(r *results.Run, workload string, arms []string, trial int, check string) bool {
	for _, sr := range r.Services {
		if sr.Workload != workload || sr.Trial != trial || !slices.Contains(arms, sr.Implementation) {
			continue
		}
		for _, lr := range sr.Levels {
			if slices.ContainsFunc(lr.Violations, func(v results.Violation) bool { return v.Check == check }) {
				return true
			}
		}
	}
	return false
}

// writesTotals says the rows answered of each kind of w, in the kinds'
// order ("970,332 POST /client/new/{balance}, 482,626 POST
// /transaction"), and sums what was lost and written past the answers.
func writesTotals(w results.Writes) (answered string, lost, extra int64) {
	kinds := make([]string, 0, len(w))
	for k := range w {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, thousands(w[k].Answered)+" "+writtenLabel(k))
		lost += w[k].Lost()
		extra += w[k].Extra()
	}
	return strings.Join(parts, ", "), lost, extra
}

// writtenLabel is a kind of row as the cell names it: its request,
// without the status ("POST /transaction 200": "POST /transaction").
func writtenLabel(kind string) string {
	if i := strings.LastIndexByte(kind, ' '); i > 0 {
		return kind[:i]
	}
	return kind
}

// thousands prints n with a comma every three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
