package report

import (
	"fmt"
	"slices"

	"github.com/showdownlab/showdown/internal/capacity"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/rounds"
	"github.com/showdownlab/showdown/internal/wording"
)

// RejudgedNote is what a re-judged verdict's basis adds.
const RejudgedNote = "judged again with this version's estimator"

// WithRejudging makes the report judge a run's verdicts again
// (Results.Rejudge) before it draws them: what `showdown report` does, so
// an old results folder reads with today's statistics.
func WithRejudging() Option {
	return func(o *options) { o.rejudge = true }
}

// Rejudge judges a run's interleaved comparisons and its capacities again
// from what they recorded (the rounds; the probes and brackets), with this
// version's estimators: rounds.Judge, capacity.Estimate and
// capacity.Judge, as the lab does at the end of a run. The verdicts as
// recorded are kept beside them (Workload.Recorded shows those that
// differ). Without the plan, or for an import, nothing is judged again
// and the recorded verdicts stand, as does a comparison with no rounds or
// a capacity with no brackets. It reports whether anything was judged
// again.
func (r *Results) Rejudge() bool {
	if r.rejudged || r.Kind != KindRun || r.Run == nil || r.Run.Plan == nil {
		return r.rejudged
	}
	run, p := r.Run, r.Run.Plan
	r.recorded = map[string][]string{}
	for _, c := range run.Comparisons {
		if len(c.Rounds) == 0 {
			continue
		}
		r.recorded[c.Workload] = append(r.recorded[c.Workload], comparisonLines(c, levelUnit(p.Load.Model))...)
		c.Verdict = rounds.Judge(c, p)
		r.rejudged = true
	}
	if len(run.Capacities) > 0 && p.SLO != nil {
		// The starts a run added are a fact of the run, not a judgement:
		// the new verdicts keep them.
		added := map[string]*results.CapacityVerdict{}
		for _, v := range run.CapacityVerdicts {
			r.recorded[v.Workload] = append(append(r.recorded[v.Workload], wording.Verdict(&v.Verdict)...), v.LowerBounds...)
			added[v.Workload] = v
		}
		run.CapacityVerdicts = nil
		for _, w := range p.Workloads {
			var caps []*results.Capacity
			for _, c := range run.Capacities {
				if c.Workload != w.Name {
					continue
				}
				// A capacity with no brackets recorded has nothing
				// to be estimated from: it stands as recorded.
				if len(c.Brackets) > 0 {
					capacity.Estimate(c)
				}
				caps = append(caps, c)
			}
			if len(caps) > 0 {
				v := capacity.Judge(w.Name, p.SLO.String(), caps)
				if old := added[w.Name]; old != nil {
					v.AddedStarts, v.Added = old.AddedStarts, old.Added
				}
				run.CapacityVerdicts = append(run.CapacityVerdicts, v)
			}
		}
		r.rejudged = true
	}
	return r.rejudged
}

// comparisonLines are a comparison's verdict lines as applyComparisons
// words them, to set the recorded ones beside the new.
func comparisonLines(c *results.Comparison, unit string) []string {
	if c.Verdict == nil || len(c.Verdict.Ranking) == 0 {
		return nil
	}
	var out []string
	for _, l := range wording.Verdict(c.Verdict) {
		out = append(out, fmt.Sprintf("at %d %s: %s", c.Level, unit, l))
	}
	return out
}

// recordedLines are the verdict lines a workload had as recorded, where
// they differ from the lines judged again (nil where they agree).
func recordedLines(res *Results, workload string, now []string) []string {
	was := res.recorded[workload]
	if slices.Equal(was, now) {
		return nil
	}
	return was
}
