package plan

import (
	"slices"

	"github.com/showdownlab/showdown/workloads"
)

// Start is one process start in a plan's schedule: an implementation,
// started afresh for a trial and measured on one or more workloads.
type Start struct {
	Implementation Implementation
	Workloads      []Workload
	Trial          int
}

// Measurement is one workload at one value of the plan's database
// dimension, measured on a service start.
type Measurement struct {
	Workload Workload
	Setting  DatabaseSetting
}

// Measurements are what a start measures, workload by workload, each at
// every database setting it has. The settings of a workload start with
// the database's current one (skuIndex), so a start switches the
// database once and the next start goes on from there: the order
// alternates between starts, and a drift favours no setting.
func (p *Plan) Measurements(ws []Workload, skuIndex bool) []Measurement {
	var out []Measurement
	for _, w := range ws {
		sets := p.SettingsOf(w.Name)
		for k, set := range sets {
			if set.SKUIndex == skuIndex && len(sets) > 1 {
				sets = append(append([]DatabaseSetting(nil), sets[k:]...), sets[:k]...)
				break
			}
		}
		for _, set := range sets {
			out = append(out, Measurement{Workload: w, Setting: set})
		}
	}
	return out
}

// HasDatabase reports whether workload w keeps its data in a database.
func (w Workload) HasDatabase() bool { return workloads.Database(w.Name) != workloads.NoDatabase }

// OnePerDatabase returns the first workload of ws on each database engine,
// in order: the workloads through which each server ws use is reached
// once (restarted, watched); workloads with no database are left out.
func OnePerDatabase(ws []Workload) []Workload {
	var out []Workload
	seen := map[workloads.Engine]bool{}
	for _, w := range ws {
		e := workloads.Database(w.Name)
		if e == workloads.NoDatabase || seen[e] {
			continue
		}
		seen[e] = true
		out = append(out, w)
	}
	return out
}

// UsesPostgres and UsesMariaDB report whether some workload of p keeps
// its data on that server.
func (p *Plan) UsesPostgres() bool { return p.uses(workloads.Postgres) }

// UsesMariaDB: see UsesPostgres.
func (p *Plan) UsesMariaDB() bool { return p.uses(workloads.MySQL) }

func (p *Plan) uses(e workloads.Engine) bool {
	return slices.ContainsFunc(p.Workloads, func(w Workload) bool { return workloads.Database(w.Name) == e })
}
