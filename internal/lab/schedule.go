package lab

import "github.com/showdownlab/showdown/internal/plan"

// start is one process start in a plan's schedule: an implementation,
// started afresh for a trial and measured on one or more workloads.
type start struct {
	Implementation plan.Implementation
	Workloads      []plan.Workload
	Trial          int
}

// schedule is the order of service starts of one trial: implementations
// interleaved and their order rotated every trial, so a drift of the
// machine favours none of them. A start serves every workload of the plan
// (warmed once, measured on each), or one workload with service_restart:
// workload.
func schedule(p *plan.Plan, trial int) []start {
	var out []start
	if p.ServiceRestart == "workload" {
		for _, w := range p.Workloads {
			for _, im := range rotate(p.Implementations, trial-1) {
				out = append(out, start{Implementation: im, Workloads: []plan.Workload{w}, Trial: trial})
			}
		}
		return out
	}
	for _, im := range rotate(p.Implementations, trial-1) {
		out = append(out, start{Implementation: im, Workloads: p.Workloads, Trial: trial})
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
