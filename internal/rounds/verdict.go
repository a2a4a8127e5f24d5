package rounds

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/workloads"
)

// Judge ranks a comparison's arms from its rounds and gives every
// adjacent pair its ratio's interval; nil before any round.
func Judge(c *results.Comparison, p *plan.Plan) *results.Verdict {
	twin := ""
	if p.Rounds.AA && len(c.Arms) >= 2 {
		twin = c.Arms[len(c.Arms)-1]
	}
	v := JudgeWith(c, c.Precision, twin)
	if v != nil {
		v.FailIf = Slower(c, p)
	}
	return v
}

// figures are one arm's per-round values, by start and round, 0 where
// the arm has none (not measured, misbehaved).
type figures [][]float64

// collect gathers each arm's figure per start and round with pick.
func collect(c *results.Comparison, pick func(results.ArmRound) float64) (map[string]figures, []int) {
	var starts []int
	for _, r := range c.Rounds {
		if !slices.Contains(starts, r.Start) {
			starts = append(starts, r.Start)
		}
	}
	out := map[string]figures{}
	for _, arm := range c.Arms {
		f := make(figures, len(starts))
		out[arm] = f
	}
	for _, r := range c.Rounds {
		si := slices.Index(starts, r.Start)
		for _, a := range r.Arms {
			f, ok := out[a.Arm]
			if !ok {
				continue
			}
			for len(f[si]) < r.Index {
				f[si] = append(f[si], 0)
			}
			if why, busy := disturbed(c, a, r.Start); a.Misbehaved == "" && (why == "" || busy) {
				f[si][r.Index-1] = pick(a)
			}
		}
	}
	// Pad every start to its longest so rounds pair by index.
	for si := range starts {
		n := 0
		for _, f := range out {
			n = max(n, len(f[si]))
		}
		for _, f := range out {
			for len(f[si]) < n {
				f[si] = append(f[si], 0)
			}
		}
	}
	return out, starts
}

// geoMean is the geometric mean of the positive values of f (0 for none).
func (f figures) geoMean() float64 {
	var xs []float64
	for _, s := range f {
		xs = append(xs, s...)
	}
	return orZero(stats.GeoMean(xs))
}

// JudgeWith is judge with the precision and the A/A twin arm ("" for
// none) given.
func JudgeWith(c *results.Comparison, precision float64, twin string) *results.Verdict {
	if len(c.Rounds) == 0 {
		return nil
	}
	open := c.Model == "open"
	v := &results.Verdict{Metric: "throughput"}
	pick := func(a results.ArmRound) float64 { return a.Throughput }
	if open {
		v.Metric = "p99 latency"
		pick = func(a results.ArmRound) float64 { return a.P99Ms }
	}
	figs, _ := collect(c, pick)
	for _, r := range c.Rounds {
		v.Repeated += len(r.Repeated)
		for _, a := range r.Arms {
			why, busy := disturbed(c, a, r.Start)
			switch {
			case a.Misbehaved != "" || why == "":
			case busy:
				v.Busy++
			default:
				v.Disturbed++
			}
		}
	}
	cpu, _ := collect(c, cpuPerRequest)
	k := kept(c)
	v.Arms = armFigures(c, k)
	v.Overloaded = overloaded(c, k)
	v.Leaks = Growths(c)
	for i, g := range v.Leaks {
		if _, over := v.Overloaded[g.Arm]; over && g.Leak {
			// An arm that could not carry the rate grows by its backlog:
			// named as overloaded, not as leaking.
			v.Leaks[i].Leak = false
		}
	}
	if open {
		v.LatenessP99Ms = latenessFloor(k)
	}
	gen := map[string][]float64{}
	for _, r := range c.Rounds {
		for _, a := range r.Arms {
			v.MeasuredSeconds += a.Seconds + c.SettleSeconds
			gen[a.Arm] = append(gen[a.Arm], a.GeneratorCPU)
		}
	}
	for arm, g := range gen {
		if m := stats.Mean(g); m > results.GeneratorBoundPercent {
			if v.GeneratorBound == nil {
				v.GeneratorBound = map[string]float64{}
			}
			v.GeneratorBound[arm] = math.Round(m)
		}
	}
	v.Database = c.Database
	v.DatabaseBound, v.WithGenerator = databaseBound(c)
	for _, arm := range c.Arms {
		if _, over := v.Overloaded[arm]; arm != twin && !over && figs[arm].geoMean() > 0 {
			v.Ranking = append(v.Ranking, arm)
		}
	}
	sort.SliceStable(v.Ranking, func(i, j int) bool {
		a, b := figs[v.Ranking[i]].geoMean(), figs[v.Ranking[j]].geoMean()
		if open {
			return a < b
		}
		return a > b
	})
	maxRounds := max(plan.MinRounds, roundsPerStart(c)*4)
	// One estimator over every arm's rounds (the A/A twin's included):
	// each pair's between-start variance is learnt from the whole
	// comparison where its own arms do not show more (stats.RoundComparison).
	thr, cpuCmp := stats.NewRoundComparison(figs), stats.NewRoundComparison(cpu)
	pair := func(better, worse string, cmp *stats.RoundComparison, num, den string) results.PairRatio {
		r := cmp.Ratio(num, den)
		pr := results.PairRatio{Better: better, Worse: worse, Ratio: r.Ratio, Low: r.Low, High: r.High,
			HalfWidth: r.HalfWidth(), Starts: r.Starts, Rounds: r.Rounds, BetweenSD: r.BetweenSD, WithinSD: r.WithinSD, RoundSD: r.RoundSD, PairedSD: r.Paired,
			Significant: r.Significant(), OneStart: r.Within, Dropped: r.Dropped, Arms: r.Arms, DFPerStart: r.DFPerStart}
		if math.IsNaN(pr.HalfWidth) {
			pr.HalfWidth = 0
		}
		if f := r.RoundsFloor(); f > pr.HalfWidth {
			pr.RoundsFloor = f
		}
		if !r.Precise(precision) {
			if s, n, ok := r.Need(precision, maxRounds); ok {
				pr.Need = fmt.Sprintf("about %d starts of %d rounds", s, n)
			} else {
				pr.Need = fmt.Sprintf("more than 50 starts of %d rounds (the starts differ by %.1f%%)", maxRounds, 100*math.Expm1(r.BetweenSD))
			}
		}
		return pr
	}
	for i := 0; i+1 < len(v.Ranking); i++ {
		a, b := v.Ranking[i], v.Ranking[i+1]
		var pr results.PairRatio
		if open {
			pr = pair(a, b, thr, b, a)
		} else {
			pr = pair(a, b, thr, a, b)
		}
		if open && v.LatenessP99Ms > 0 && figs[b].geoMean()-figs[a].geoMean() < v.LatenessP99Ms {
			pr.InsideFloor = true
		}
		v.Pairs = append(v.Pairs, pr)
		if pr.Need != "" && !c.AtRate {
			v.Unresolved = append(v.Unresolved, fmt.Sprintf("%s against %s: %s, %s would reach ±%.0f%%", a, b, width(pr), pr.Need, 100*precision))
		}
		v.CPU = append(v.CPU, pair(a, b, cpuCmp, b, a))
	}
	if open {
		// Every arm against the best, not only its neighbour: at a light
		// rate neighbours are close, and a stack several times the best
		// would go unsaid.
		for _, arm := range v.Ranking[min(1, len(v.Ranking)):] {
			best := v.Ranking[0]
			pr := pair(best, arm, thr, arm, best)
			pr.InsideFloor = v.LatenessP99Ms > 0 && figs[arm].geoMean()-figs[best].geoMean() < v.LatenessP99Ms
			v.P99Best = append(v.P99Best, pr)
		}
	}
	if open && len(v.Ranking) > 0 && v.LatenessP99Ms > 0 {
		best := figs[v.Ranking[0]].geoMean()
		v.FloorTakesP99 = best > 0 && v.LatenessP99Ms > FloorShare*best
	}
	if c.AtRate {
		// The cost of the same work, ranked on its own: least CPU per
		// request first.
		for _, arm := range v.Ranking {
			if cpu[arm].geoMean() > 0 {
				v.CPURanking = append(v.CPURanking, arm)
			}
		}
		sort.SliceStable(v.CPURanking, func(i, j int) bool { return cpu[v.CPURanking[i]].geoMean() < cpu[v.CPURanking[j]].geoMean() })
		for i := 0; i+1 < len(v.CPURanking); i++ {
			a, b := v.CPURanking[i], v.CPURanking[i+1]
			pr := pair(a, b, cpuCmp, b, a)
			v.CPUPairs = append(v.CPUPairs, pr)
			if pr.Need != "" {
				v.Unresolved = append(v.Unresolved, fmt.Sprintf("%s against %s on CPU per request: %s, %s would reach ±%.0f%%", a, b, width(pr), pr.Need, 100*precision))
			}
		}
	}
	if twin != "" && len(c.Arms) >= 2 {
		aa := pair(c.Arms[0], twin, thr, c.Arms[0], twin)
		v.AA = &aa
		if c.AtRate && cpu[c.Arms[0]].geoMean() > 0 && cpu[twin].geoMean() > 0 {
			ca := pair(c.Arms[0], twin, cpuCmp, twin, c.Arms[0])
			v.CPUAA = &ca
		}
	}
	return v
}

// roundsPerStart is the most rounds any start of c ran.
func roundsPerStart(c *results.Comparison) int {
	n := 0
	for _, r := range c.Rounds {
		n = max(n, r.Index)
	}
	return n
}

// disturbed says how the machine disturbed a's round in start, from its
// record: measured again at the time (Disturbed set) or judged now
// against the arm's usual CPU in the start. The verdict leaves it out,
// unless more than MaxLeftOut of the arm's rounds in the start were so
// (busy: the machine was this busy throughout).
func disturbed(c *results.Comparison, a results.ArmRound, start int) (why string, busy bool) {
	judge := func(x results.ArmRound) string {
		if x.Disturbed != "" {
			return x.Disturbed
		}
		return Disturbed(x, TypicalCPU(c, x.Arm, start), workloads.Database(c.Workload) != workloads.NoDatabase)
	}
	if why = judge(a); why == "" {
		return "", false
	}
	n, bad := 0, 0
	for _, r := range c.Rounds {
		if r.Start != start {
			continue
		}
		for _, x := range r.Arms {
			if x.Arm == a.Arm && x.Misbehaved == "" {
				n++
				if judge(x) != "" {
					bad++
				}
			}
		}
	}
	return why, float64(bad) > MaxLeftOut*float64(n)
}

// width is an unresolved pair's half-width as the verdict says it: the
// interval's, and where its starts agreed by chance, what the rounds'
// noise allows from that many starts.
func width(pr results.PairRatio) string {
	if pr.RoundsFloor > pr.HalfWidth {
		return fmt.Sprintf("±%.1f%%, but the rounds' noise alone allows no better than ±%.1f%% from %d starts (they agreed by chance)", 100*pr.HalfWidth, 100*pr.RoundsFloor, pr.Starts)
	}
	return fmt.Sprintf("±%.1f%%", 100*pr.HalfWidth)
}

// ShapeDependence finds the pairs of arms whose order on CPU per request
// turns between main's shape and contrast's (the same workload and rate
// under another traffic shape): for each pair measured in both, the
// ratio's interval under each shape, and a flip where both exclude 1
// on opposite sides. Nil where nothing flips or either has no rounds.
func ShapeDependence(main, contrast *results.Comparison) []results.ShapeFlip {
	if len(main.Rounds) == 0 || len(contrast.Rounds) == 0 {
		return nil
	}
	cm, _ := collect(main, cpuPerRequest)
	cc, _ := collect(contrast, cpuPerRequest)
	rm, rc := stats.NewRoundComparison(cm), stats.NewRoundComparison(cc)
	ratio := func(r *stats.RoundComparison, cheaper, dearer string) results.PairRatio {
		x := r.Ratio(dearer, cheaper)
		return results.PairRatio{Better: cheaper, Worse: dearer, Ratio: x.Ratio, Low: x.Low, High: x.High,
			HalfWidth: x.HalfWidth(), Starts: x.Starts, Rounds: x.Rounds, Significant: x.Significant()}
	}
	var out []results.ShapeFlip
	for i, a := range main.Arms {
		for _, b := range main.Arms[i+1:] {
			if cm[a].geoMean() <= 0 || cm[b].geoMean() <= 0 || cc[a].geoMean() <= 0 || cc[b].geoMean() <= 0 {
				continue
			}
			cheaper, dearer := a, b
			if cm[b].geoMean() < cm[a].geoMean() {
				cheaper, dearer = b, a
			}
			m, k := ratio(rm, cheaper, dearer), ratio(rc, dearer, cheaper)
			if m.Significant && m.Ratio > 1 && k.Significant && k.Ratio > 1 {
				out = append(out, results.ShapeFlip{Cheaper: cheaper, Dearer: dearer, Main: m, Contrast: k, ContrastShape: contrast.Shape})
			}
		}
	}
	return out
}

// JudgeShapes sets ShapeDepends on the verdict of every comparison of
// comps that a contrast comparison of comps contrasts.
func JudgeShapes(comps []*results.Comparison) {
	for _, k := range comps {
		if !k.Contrast {
			continue
		}
		for _, m := range comps {
			if m.AtRate && !m.Contrast && !m.Busy && m.Workload == k.Workload && m.Level == k.Level && m.Verdict != nil {
				m.Verdict.ShapeDepends = ShapeDependence(m, k)
			}
		}
	}
}

// databaseBound is the arms during whose rounds the comparison's database
// had no room left on its CPUs (results.DatabaseBoundPercent), with the
// database's mean CPU in percent of those CPUs and, where they are the
// generator's too, the two's together. Rounds without a reading of the
// database (older runs, a reading that failed) count for nothing.
func databaseBound(c *results.Comparison) (bound, with map[string]float64) {
	d := c.Database
	if d == nil || d.Count == 0 {
		return nil, nil
	}
	own, gen := map[string][]float64{}, map[string][]float64{}
	for _, r := range c.Rounds {
		for _, a := range r.Arms {
			if a.DatabaseCPU > 0 {
				own[a.Arm] = append(own[a.Arm], a.DatabaseCPU/float64(d.Count))
				gen[a.Arm] = append(gen[a.Arm], a.GeneratorCPU)
			}
		}
	}
	for arm, f := range own {
		db, busy := stats.Mean(f), stats.Mean(f)
		if d.WithGenerator {
			g := stats.Mean(gen[arm])
			if g > results.GeneratorBoundPercent {
				continue // generator-bound: the generator fills them
			}
			busy += g
		}
		if busy <= results.DatabaseBoundPercent {
			continue
		}
		if bound == nil {
			bound = map[string]float64{}
		}
		// CPU time counts in clock ticks, so a full CPU may read a hair
		// over 100%.
		bound[arm] = min(100, math.Round(db))
		if d.WithGenerator {
			if with == nil {
				with = map[string]float64{}
			}
			with[arm] = min(100, math.Round(busy))
		}
	}
	return bound, with
}
