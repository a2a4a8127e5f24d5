// Package schedule orders a sequential plan: which implementation starts when, what each start measures,
// and when `trials: auto` has measured enough. It runs nothing.
package schedule

import "github.com/showdownlab/showdown/internal/plan"

// Start is one process start in a plan's schedule: an implementation,
// started afresh for a trial and measured on one or more workloads.
type Start struct {
	Implementation plan.Implementation
	Workloads      []plan.Workload
	Trial          int
}

// Of is the order of service starts of one trial: implementations
// interleaved and their order rotated every trial, so a drift of the
// machine favours none of them. A start serves every workload of the plan
// (warmed once, measured on each), or one workload with service_restart:
// workload.
func Of(p *plan.Plan, trial int) []Start {
	var out []Start
	if p.ServiceRestart == "workload" {
		for _, w := range p.Workloads {
			for _, im := range rotate(p.Arms(), trial-1) {
				out = append(out, Start{Implementation: im, Workloads: []plan.Workload{w}, Trial: trial})
			}
		}
		return out
	}
	for _, im := range rotate(p.Arms(), trial-1) {
		out = append(out, Start{Implementation: im, Workloads: p.Workloads, Trial: trial})
	}
	return out
}

func rotate(ims []plan.Implementation, k int) []plan.Implementation {
	if len(ims) == 0 {
		return nil
	}
	k %= len(ims)
	return append(append([]plan.Implementation(nil), ims[k:]...), ims[:k]...)
}

// Measurement is one workload at one value of the plan's database
// dimension, measured on a service start.
type Measurement struct {
	Workload plan.Workload
	Setting  plan.DatabaseSetting
}

// Measurements are what a start measures, workload by workload, each at
// every database setting it has. The settings of a workload start with
// the database's current one (skuIndex), so a start switches the
// database once and the next start goes on from there: the order
// alternates between starts, and a drift favours no setting.
func Measurements(p *plan.Plan, ws []plan.Workload, skuIndex bool) []Measurement {
	var out []Measurement
	for _, w := range ws {
		sets := p.SettingsOf(w.Name)
		for k, set := range sets {
			if set.SKUIndex == skuIndex && len(sets) > 1 {
				sets = append(append([]plan.DatabaseSetting(nil), sets[k:]...), sets[:k]...)
				break
			}
		}
		for _, set := range sets {
			out = append(out, Measurement{Workload: w, Setting: set})
		}
	}
	return out
}
