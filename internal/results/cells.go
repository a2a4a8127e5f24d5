package results

import "fmt"

// Cell is one implementation at one level of one workload, over trials.
type Cell struct {
	Implementation string
	Workload       string
	Level          int
	Levels         []*LevelRun   // one per trial that measured it
	Services       []*ServiceRun // the service runs they came from
}

// Cells groups a run's measured levels by workload, implementation and
// level, in plan order.
func Cells(r *Run) []*Cell {
	index := map[string]*Cell{}
	var out []*Cell
	for _, w := range r.Plan.Workloads {
		for _, im := range r.Plan.Implementations {
			for _, l := range r.Plan.Load.Levels {
				c := &Cell{Implementation: im.ID(), Workload: w.Name, Level: l}
				index[fmt.Sprintf("%s|%s|%d", w.Name, im.ID(), l)] = c
				out = append(out, c)
			}
		}
	}
	for _, sr := range r.Services {
		for _, lr := range sr.Levels {
			if c := index[fmt.Sprintf("%s|%s|%d", sr.Workload, sr.Implementation, lr.Level)]; c != nil && lr.Status == OK {
				c.Levels = append(c.Levels, lr)
				c.Services = append(c.Services, sr)
			}
		}
	}
	return out
}
