package sequential

import "github.com/showdownlab/showdown/internal/plan"

// Of is the order of service starts of one trial: implementations
// interleaved and their order rotated every trial, so a drift of the
// machine favours none of them. A start serves every workload of the plan
// (warmed once, measured on each), or one workload with service_restart:
// workload.
func Of(p *plan.Plan, trial int) []plan.Start {
	var out []plan.Start
	if p.ServiceRestart == "workload" {
		for _, w := range p.Workloads {
			for _, im := range rotate(p.Arms(), trial-1) {
				out = append(out, plan.Start{Implementation: im, Workloads: []plan.Workload{w}, Trial: trial})
			}
		}
		return out
	}
	for _, im := range rotate(p.Arms(), trial-1) {
		out = append(out, plan.Start{Implementation: im, Workloads: p.Workloads, Trial: trial})
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
