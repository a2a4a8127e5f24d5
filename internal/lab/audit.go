package lab

import (
	"context"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// audit checks the workload's invariants in the database (db.Audit). The
// users workload counts its rows against the sign-ups answered 201 when
// the table was emptied before the level: the rows must cover every 201
// (nothing lost) and exceed them by no more than the requests that could
// still have been in flight when the level ended (nothing duplicated);
// the scenario's first step is the one that creates a user.
func (x *execution) audit(ctx context.Context, w plan.Workload, res *load.Result) []results.Violation {
	atLeast, atMost := int64(-1), int64(-1)
	if w.Name == "users" && x.plan.Database.Reset == "level" && len(res.Summary.Labels) > 0 {
		first := res.Summary.Labels[0]
		atLeast = first.Samples - first.Errors
		slack := first.Errors + int64(x.plan.Load.MaxInflight)
		if x.plan.Load.Model == "closed" {
			slack += int64(res.Summary.Users)
		} else if x.plan.Load.MaxInflight == 0 {
			slack += load.DefaultMaxInflight
		}
		atMost = atLeast + slack
	}
	vs, err := x.dbs.Audit(ctx, w.Name, atLeast, atMost)
	if err != nil {
		return []results.Violation{{Check: "audit", Detail: err.Error()}}
	}
	var out []results.Violation
	for _, v := range vs {
		out = append(out, results.Violation{Check: v.Check, Detail: v.Detail})
	}
	return out
}
