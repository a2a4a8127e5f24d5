package results

import "fmt"

// Cell is one implementation at one level of one workload (and one
// value of the plan's database dimension), over trials.
type Cell struct {
	Implementation string
	Workload       string
	// Database is the database setting's label; empty without a dimension.
	Database string
	Level    int
	Levels   []*LevelRun   // one per trial that measured it
	Services []*ServiceRun // the service runs they came from
}

// Name is the implementation with its database setting, as tables show it.
func (c *Cell) Name() string { return SeriesName(c.Implementation, c.Database) }

// Cells groups a run's measured levels by workload, implementation,
// database setting and level, in plan order.
func Cells(r *Run) []*Cell {
	index := map[string]*Cell{}
	var out []*Cell
	for _, w := range r.Plan.Workloads {
		for _, id := range r.Plan.ArmIDs(len(r.Kubernetes) > 0) {
			for _, set := range r.Plan.SettingsOf(w.Name) {
				for _, l := range r.Plan.Load.Levels {
					c := &Cell{Implementation: id, Workload: w.Name, Database: set.Label, Level: l}
					index[fmt.Sprintf("%s|%s|%s|%d", w.Name, id, set.Label, l)] = c
					out = append(out, c)
				}
			}
		}
	}
	for _, sr := range r.Services {
		for _, lr := range sr.Levels {
			if c := index[fmt.Sprintf("%s|%s|%s|%d", sr.Workload, sr.Implementation, sr.Database, lr.Level)]; c != nil && lr.Status == OK {
				c.Levels = append(c.Levels, lr)
				c.Services = append(c.Services, sr)
			}
		}
	}
	return out
}
