package lab

import (
	"reflect"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/load"
)

// A warm-up of N requests becomes whole iterations per user (closed) or
// N/rate seconds (open), capped by warmup_max; a level with iterations
// per user passes them to the engine.
func TestWarmupAndIterationModels(t *testing.T) {
	closed := &execution{plan: &plan.Plan{Load: plan.Load{Model: "closed", Iterations: 10000}}}
	open := &execution{plan: &plan.Plan{Load: plan.Load{Model: "open"}}}
	tests := []struct {
		name string
		got  load.Model
		want load.Model
	}{
		// 1000 requests, 100 users, 1 step: 10 iterations each.
		{"closed, one step", closed.warmupModel(100, 1000, 1, time.Minute), load.ClosedModel{Users: 100, Duration: time.Minute, Iterations: 10}},
		// 1000 requests, 100 users, 3 steps: 4 iterations each (1200 requests, whole iterations).
		{"closed, three steps", closed.warmupModel(100, 1000, 3, time.Minute), load.ClosedModel{Users: 100, Duration: time.Minute, Iterations: 4}},
		// More users than requests: still one iteration each.
		{"closed, few requests", closed.warmupModel(50, 10, 1, time.Minute), load.ClosedModel{Users: 50, Duration: time.Minute, Iterations: 1}},
		// 1000 requests at 200/s: 5 seconds.
		{"open", open.warmupModel(200, 1000, 1, time.Minute), load.OpenModel{Rate: 200, Duration: 5 * time.Second, Arrivals: load.Poisson, Connections: plan.DefaultConnections}},
		// The cap wins.
		{"open, capped", open.warmupModel(1, 1000, 1, time.Minute), load.OpenModel{Rate: 1, Duration: time.Minute, Arrivals: load.Poisson, Connections: plan.DefaultConnections}},
		// A level's iterations per user reach the engine, the duration as a cap.
		{"level iterations", closed.model(100, time.Minute), load.ClosedModel{Users: 100, Duration: time.Minute, Iterations: 10000}},
	}
	for _, tc := range tests {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
}
