package results

import (
	"math"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
)

func TestSizeFor(t *testing.T) {
	c := &Capacity{Arm: "go-stdlib", Workload: "string", Rate: 2100, Low: 2000, High: 2200, CPUs: 1, RSSBytes: 10 << 20}
	tests := []struct {
		name      string
		c         *Capacity
		s         plan.Sizing
		cores     float64
		instances int
		memory    int64
	}{
		// Under one process's capacity: a fraction of its CPU, one process.
		{"fraction of a core", c, plan.Sizing{Rate: 500}, 0.25, 1, 10 << 20},
		// Over it: the cores scale, and so do the processes and memory.
		{"several processes", c, plan.Sizing{Rate: 5000}, 2.5, 3, 30 << 20},
		// Page views: 0.8 × 8.64M × 1 / (86,400 × 0.4) = 200 req/s.
		{"page views", c, plan.Sizing{DailyPageViews: 8_640_000}, 0.1, 1, 10 << 20},
		// Capacity per 2 CPUs: twice the cores.
		{"two CPUs", &Capacity{Rate: 2000, Low: 2000, CPUs: 2, RSSBytes: 1}, plan.Sizing{Rate: 1000}, 1, 1, 1},
		// No capacity: nothing to size from.
		{"no capacity", &Capacity{}, plan.Sizing{Rate: 1000}, 0, 0, 0},
		// Held in every start: from the held interval's lower end.
		{"held", &Capacity{Rate: 2100, Low: 2000, High: 2200, SearchRate: 2500, CPUs: 1, RSSBytes: 1,
			Brackets: []Bracket{{Start: 1, Pass: 2400, Confirmed: true, Held: 2050}, {Start: 2, Pass: 2600, Confirmed: true, Held: 2150}}}, plan.Sizing{Rate: 1000}, 0.5, 1, 1},
		// A held interval reaching zero: from the lowest rate a start held.
		{"held, reaching zero", &Capacity{Rate: 1500, Low: 0, High: 8000, SearchRate: 2500, CPUs: 1, RSSBytes: 1,
			Brackets: []Bracket{{Start: 1, Pass: 2400, Confirmed: true, Held: 1000}, {Start: 2, Pass: 2600, Confirmed: true, Held: 2000}}}, plan.Sizing{Rate: 1000}, 1, 1, 1},
		// None held: nothing to size from.
		{"none held", &Capacity{SearchRate: 2500, CPUs: 1, RSSBytes: 1, Confirmations: []Probe{{Rate: 2400}},
			Brackets: []Bracket{{Start: 1, Pass: 2400, Confirmed: true}}}, plan.Sizing{Rate: 1000}, 0, 0, 0},
		// Recorded before every start was confirmed: what the last held.
		{"old run, held", &Capacity{Rate: 2100, Low: 1000, Held: 2000, CPUs: 1, RSSBytes: 1, Confirmations: []Probe{{Rate: 2000, Pass: true}}}, plan.Sizing{Rate: 1000}, 0.5, 1, 1},
		// A capacity in users sizes no rate.
		{"users", &Capacity{Unit: UnitUsers, Rate: 200, Low: 190, CPUs: 1, RSSBytes: 1}, plan.Sizing{Rate: 1000}, 0, 0, 0},
	}
	for _, tc := range tests {
		got := SizeFor(tc.c, tc.s)
		if math.Abs(got.Cores-tc.cores) > 1e-9 || got.Instances != tc.instances || got.MemoryBytes != tc.memory {
			t.Errorf("%s: %.4f cores, %d processes, %d bytes; want %.4f, %d, %d", tc.name, got.Cores, got.Instances, got.MemoryBytes, tc.cores, tc.instances, tc.memory)
		}
	}
}
