package design

import (
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
)

// A further start costs its setup and the fewest rounds of each
// comparison, not the whole of the longest start (whose rounds took what
// the budget left them): a start that fits is not refused.
func TestNextStart(t *testing.T) {
	one := &plan.Plan{Workloads: []plan.Workload{{Name: "string"}}, Load: plan.Load{Levels: []int{50}}}
	four := &plan.Plan{Workloads: []plan.Workload{{Name: "string"}, {Name: "bank"}}, Load: plan.Load{Levels: []int{10, 50}}}
	tests := []struct {
		name             string
		p                *plan.Plan
		starts           []time.Duration
		setup, roundCost time.Duration
		want             time.Duration
	}{
		// No round yet: the longest start so far.
		{"no round", one, []time.Duration{5 * time.Minute, 3 * time.Minute}, 0, 0, 5 * time.Minute},
		// The run: a 5-minute start of which 50 s was setup, 6 s rounds.
		{"one comparison", one, []time.Duration{5 * time.Minute}, 50 * time.Second, 6 * time.Second, 50*time.Second + plan.MinRounds*6*time.Second},
		// Four comparisons a start: four times the fewest rounds.
		{"four comparisons", four, []time.Duration{9 * time.Minute}, time.Minute, 5 * time.Second, time.Minute + 4*plan.MinRounds*5*time.Second},
	}
	for _, tc := range tests {
		x := &rounds{p: tc.p, starts: tc.starts, setup: tc.setup, roundCost: tc.roundCost}
		if got := x.nextStart(); got != tc.want {
			t.Errorf("%s: next start %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The setups of the plan's starts, projected from the first start's
// workloads done so far, outgrow the budget or not: the main job of
// 2026-12-02 spent about 7 minutes a workload before any round, two
// workloads and two starts against 24 minutes.
func TestSetupsOutgrow(t *testing.T) {
	tests := []struct {
		name                    string
		budget, setup           time.Duration
		done, workloads, starts int
		want                    time.Duration
		over                    bool
	}{
		{"the main job after string", 24 * time.Minute, 7 * time.Minute, 1, 2, 2, 28 * time.Minute, true},
		{"the main job after bank", 24 * time.Minute, 14 * time.Minute, 2, 2, 2, 28 * time.Minute, true},
		{"setups that fit", 24 * time.Minute, 4 * time.Minute, 1, 2, 2, 16 * time.Minute, false},
		{"no budget", 0, 7 * time.Minute, 1, 2, 2, 0, false},
		{"nothing done yet", 24 * time.Minute, time.Minute, 0, 2, 2, 0, false},
	}
	for _, tc := range tests {
		got, over := setupsOutgrow(tc.budget, tc.setup, tc.done, tc.workloads, tc.starts)
		if got != tc.want || over != tc.over {
			t.Errorf("%s: %v, over %v; want %v, %v", tc.name, got, over, tc.want, tc.over)
		}
	}
}

// TestDatabaseOf: a comparison records which server its workload uses and
// the CPUs the placement gave it, and whether they are the generator's.
func TestDatabaseOf(t *testing.T) {
	small := &plan.Plan{Placement: plan.Placement{ServiceCPUs: "0", GeneratorCPUs: "1", DatabaseCPUs: "1"}}
	apart := &plan.Plan{Placement: plan.Placement{ServiceCPUs: "0-1", GeneratorCPUs: "2", DatabaseCPUs: "3,4"}}
	unpinned := &plan.Plan{}
	tests := []struct {
		p    *plan.Plan
		w    string
		want *results.DatabaseCPUs
	}{
		// The default placement on two CPUs: the database on the generator's.
		{small, "bank", &results.DatabaseCPUs{Engine: "PostgreSQL", CPUs: "1", Count: 1, WithGenerator: true}},
		// CPUs of its own.
		{apart, "sku", &results.DatabaseCPUs{Engine: "MariaDB", CPUs: "3,4", Count: 2}},
		// Pinned nowhere: no CPUs to judge it against.
		{unpinned, "users", &results.DatabaseCPUs{Engine: "PostgreSQL"}},
		// No database.
		{small, "string", nil},
	}
	for _, tt := range tests {
		got := databaseOf(tt.p, tt.w)
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("%s on %+v: got %+v, want %+v", tt.w, tt.p.Placement, got, tt.want)
		}
	}
}
