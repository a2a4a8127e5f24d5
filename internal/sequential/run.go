package design

import (
	"context"

	"github.com/showdownlab/showdown/internal/schedule"
)

// Sequential measures every start alone, one after the other: trial by
// trial, implementations in a rotated order (schedule.Of); with
// `trials: auto`, trials go on past the plan's until every cell is
// precise (schedule.Precise) or trials_max.
type Sequential struct{}

var _ Design = Sequential{}

// Run measures the plan's starts one after another.
func (Sequential) Run(ctx context.Context, b Bench) {
	p := b.Plan()
	last := p.Trials
	if p.TrialsAuto {
		last = p.TrialsMax
	}
	for trial := 1; trial <= last && ctx.Err() == nil; trial++ {
		if trial > p.Trials && schedule.Precise(b.Record()) {
			break
		}
		if trial > p.Trials {
			b.Progress().AddTrial()
		}
		for _, s := range schedule.Of(p, trial) {
			if ctx.Err() != nil {
				break
			}
			rec := b.Record()
			rec.Services = append(rec.Services, b.RunStart(ctx, s)...)
			b.Save()
		}
	}
}
