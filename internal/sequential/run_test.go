package sequential

import (
	"context"
	"fmt"
	"testing"

	"github.com/showdownlab/showdown/internal/measure/measuretest"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// TestSequential: every start alone, trial by trial, implementations in
// an order rotated each trial.
func TestSequential(t *testing.T) {
	p := measuretest.Plan(t, "name: s\nimplementations: [go-stdlib, java-spring]\nworkloads: [string, bank]\ninterleave: false\ntrials: 2\nload:\n  levels: [10]\n  duration: 1s\n")
	b := measuretest.New(t, p, measuretest.Steady)
	Run(context.Background(), b)
	want := []string{"1 go-stdlib", "1 java-spring", "2 java-spring", "2 go-stdlib"}
	if fmt.Sprint(b.Runs) != fmt.Sprint(want) {
		t.Errorf("starts %q, want %q", b.Runs, want)
	}
	if got := len(b.Rec.Services); got != 8 {
		t.Errorf("%d service records, want 2 trials x 2 implementations x 2 workloads", got)
	}
	if len(b.Starts) != 0 || len(b.Measured) != 0 {
		t.Errorf("a sequential run kept arms alive: %d starts, %d rounds", len(b.Starts), len(b.Measured))
	}
}

// TestSequentialInterrupted: an interrupt ends the run before the next
// start.
func TestSequentialInterrupted(t *testing.T) {
	p := measuretest.Plan(t, "name: s\nimplementations: [go-stdlib, java-spring]\nworkloads: [string]\ninterleave: false\ntrials: 3\nload:\n  levels: [10]\n  duration: 1s\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := measuretest.New(t, p, measuretest.Steady)
	Run(ctx, b)
	if len(b.Runs) != 0 {
		t.Errorf("starts %q after an interrupt, want none", b.Runs)
	}
}

// TestOf: a trial starts every implementation once, serving every
// workload, in an order rotated by one each trial; with
// service_restart: workload, every implementation once a workload.
func TestOf(t *testing.T) {
	p := measuretest.Plan(t, "name: s\nimplementations: [go-stdlib, java-spring, node-http]\nworkloads: [string, bank]\ninterleave: false\ntrials: 3\nload:\n  levels: [10]\n  duration: 1s\n")
	order := func(ss []plan.Start) (out []string) {
		for _, s := range ss {
			out = append(out, fmt.Sprintf("%s:%d", s.Implementation.ID(), len(s.Workloads)))
		}
		return out
	}
	want := map[int]string{
		1: "[go-stdlib:2 java-spring:2 node-http:2]",
		2: "[java-spring:2 node-http:2 go-stdlib:2]",
		3: "[node-http:2 go-stdlib:2 java-spring:2]",
		4: "[go-stdlib:2 java-spring:2 node-http:2]",
	}
	for trial := 1; trial <= 4; trial++ {
		ss := Of(p, trial)
		if got := fmt.Sprint(order(ss)); got != want[trial] {
			t.Errorf("trial %d: %s, want %s", trial, got, want[trial])
		}
		for _, s := range ss {
			if s.Trial != trial {
				t.Errorf("trial %d: a start of trial %d", trial, s.Trial)
			}
		}
	}
	p.ServiceRestart = "workload"
	ss := Of(p, 2)
	var got []string
	for _, s := range ss {
		got = append(got, s.Workloads[0].Name+" "+s.Implementation.ID())
	}
	if w := "[string java-spring string node-http string go-stdlib bank java-spring bank node-http bank go-stdlib]"; fmt.Sprint(got) != w {
		t.Errorf("service_restart: workload, trial 2: %v, want %s", got, w)
	}
	if len(Of(&plan.Plan{}, 1)) != 0 {
		t.Errorf("a plan of no implementations has starts")
	}
}

// TestPrecise: every cell's throughput within ±3% over its trials is
// precise; a cell of one trial, or one that varies more, is not.
func TestPrecise(t *testing.T) {
	p := measuretest.Plan(t, "name: s\nimplementations: [go-stdlib]\nworkloads: [string]\ntrials: 3\nload:\n  levels: [10]\n  duration: 1s\n")
	cell := func(tp ...float64) *results.Run {
		rec := &results.Run{Plan: p}
		for i, x := range tp {
			rec.Services = append(rec.Services, &results.ServiceRun{Implementation: "go-stdlib", Workload: "string", Trial: i + 1, Status: results.OK,
				Levels: []*results.LevelRun{{Level: 10, Status: results.OK, Total: load.LabelStats{Throughput: x}}}})
		}
		return rec
	}
	if !Precise(cell(1000, 1001, 999)) {
		t.Errorf("three trials within 0.1%%: not precise")
	}
	if Precise(cell(1000)) {
		t.Errorf("one trial: precise")
	}
	if Precise(cell(1000, 1300, 800)) {
		t.Errorf("trials 20%% apart: precise")
	}
}
