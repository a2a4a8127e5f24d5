package lab

import "github.com/showdownlab/showdown/internal/plan"

// start is one start of one implementation in a plan's schedule: the
// workload it serves and the trial it belongs to.
type start struct {
	Implementation plan.Implementation
	Workload       plan.Workload
	Trial          int
}

// schedule turns a plan into the order of service starts: trial by trial,
// workload by workload, implementations interleaved with their order
// rotated every trial, so a drift of the machine favours none of them.
func schedule(p *plan.Plan) []start {
	var out []start
	for trial := 1; trial <= p.Trials; trial++ {
		for _, w := range p.Workloads {
			for _, im := range rotate(p.Implementations, trial-1) {
				out = append(out, start{Implementation: im, Workload: w, Trial: trial})
			}
		}
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
