package lab

import (
	"context"
	"strconv"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/load"
)

// scenario loads the workload's scenario against baseURL and runs its
// setup section.
func (x *execution) scenario(ctx context.Context, w plan.Workload, baseURL string) (*scenario.Scenario, error) {
	opts := scenario.Options{BaseURL: baseURL, Seed: x.plan.Database.Seed}
	if len(x.known) > 0 {
		ids := make([]string, len(x.known))
		for i, id := range x.known {
			ids[i] = strconv.FormatInt(id, 10)
		}
		opts.Lists = map[string][]string{"sku_ids": ids}
	}
	path := w.Scenario
	if path == "" {
		path = "workloads/" + w.Name + "/scenario.yaml"
	}
	data, err := plan.ReadScenario(path)
	if err != nil {
		return nil, err
	}
	sc, err := scenario.Parse(path, data, opts)
	if err != nil {
		return nil, err
	}
	return sc, setup(ctx, sc)
}

// setup runs a scenario's setup section, if it has one.
func setup(ctx context.Context, sc *scenario.Scenario) error {
	if !sc.HasSetup() {
		return nil
	}
	return sc.RunSetup(ctx, nil)
}

func (x *execution) Attacker(progress func(load.Progress), extra ...load.Option) *load.Attacker {
	opts := []load.Option{load.Timeout(time.Duration(x.plan.Load.Timeout))}
	if x.plan.Load.MaxInflight > 0 {
		opts = append(opts, load.MaxInflight(x.plan.Load.MaxInflight))
	}
	if x.plan.Load.PaceSlack > 0 {
		opts = append(opts, load.PaceSlack(time.Duration(x.plan.Load.PaceSlack)))
	}
	if progress != nil {
		opts = append(opts, load.OnProgress(progress))
	}
	return load.NewAttacker(append(opts, extra...)...)
}

// model is the load of one level lasting d.
func (x *execution) model(level int, d time.Duration) load.Model {
	l := x.plan.Load
	if l.Model == "open" {
		return load.OpenModel{Rate: float64(level), Duration: d, Arrivals: l.Spacing(), Connections: l.Pool(), Seed: uint64(x.plan.Database.Seed)}
	}
	ramp := time.Duration(l.RampUp)
	if ramp >= d {
		ramp = d / 2
	}
	return load.ClosedModel{Users: level, RampUp: ramp, Duration: d, Iterations: l.Iterations, ThinkTime: time.Duration(l.ThinkTime)}
}

// warmupModel is the load of a warm-up of n requests at level: in the
// closed model each user runs its share of iterations (steps requests
// each, at least one), in the open model the rate runs for n/level
// seconds; either way at most cap long.
func (x *execution) warmupModel(level, n, steps int, cap time.Duration) load.Model {
	l := x.plan.Load
	if l.Model == "open" {
		d := time.Duration(float64(n) / float64(level) * float64(time.Second))
		return load.OpenModel{Rate: float64(level), Duration: max(min(d, cap), time.Second), Arrivals: l.Spacing(), Connections: l.Pool(), Seed: uint64(x.plan.Database.Seed)}
	}
	perUser := max((n+level*steps-1)/(level*steps), 1)
	return load.ClosedModel{Users: level, Duration: cap, Iterations: perUser, ThinkTime: time.Duration(l.ThinkTime)}
}
