// Package sequential is the way of measuring that starts each
// implementation alone, one after the other: its runner (Run), the
// order of its starts (Of: rotated every trial, so a drift of the
// machine favours none) and when `trials: auto` has measured enough
// (Precise). A plan is measured this way when its arms cannot be kept
// warm together (plan.Plan.Interleaved says why) or it has one arm.
package sequential

import (
	"context"

	"github.com/showdownlab/showdown/internal/measure"
)

// Run measures every start alone, one after the other: trial by trial,
// implementations in a rotated order (Of); with `trials: auto`, trials
// go on past the plan's until every cell is precise (Precise) or
// trials_max.
func Run(ctx context.Context, b measure.Starter) {
	p := b.Plan()
	last := p.Trials
	if p.TrialsAuto {
		last = p.TrialsMax
	}
	for trial := 1; trial <= last && ctx.Err() == nil; trial++ {
		if trial > p.Trials && Precise(b.Record()) {
			break
		}
		if trial > p.Trials {
			b.Progress().AddTrial()
		}
		for _, s := range Of(p, trial) {
			if ctx.Err() != nil {
				break
			}
			rec := b.Record()
			rec.Services = append(rec.Services, b.RunStart(ctx, s)...)
			b.Save()
		}
	}
}
