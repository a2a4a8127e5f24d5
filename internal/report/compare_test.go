package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
)

// fakeRun builds the results of one workload "w" at 8 users: per
// implementation, one throughput per trial (latency and resources follow
// from it, so a faster trial is also a lower-latency one).
func fakeRun(impls []plan.Implementation, tput map[string][]float64) *Results {
	trials := 0
	for _, v := range tput {
		trials = max(trials, len(v))
	}
	r := &results.Run{Version: 1, Plan: &plan.Plan{Name: "fake", Implementations: impls, Workloads: []plan.Workload{{Name: "w"}},
		Load: plan.Load{Model: "closed", Levels: []int{8}}, Trials: trials}}
	for _, im := range impls {
		for i, v := range tput[im.ID()] {
			lr := &results.LevelRun{Level: 8, Status: results.OK}
			lr.Total.Samples = int64(v * 10)
			lr.Total.Throughput = v
			lr.Total.Latency.P50 = 8000 / v
			lr.Total.Latency.P99 = 4 * 8000 / v
			lr.Service.CPUMean = 50
			lr.Service.RSSPeakBytes = 20 << 20
			r.Services = append(r.Services, &results.ServiceRun{Implementation: im.ID(), Service: im.Service, Variant: im.Variant, Workload: "w", Trial: i + 1, Status: results.OK, Levels: []*results.LevelRun{lr}})
		}
	}
	return &Results{Path: "fake", Kind: KindRun, Run: r, details: map[*results.LevelRun]*results.Level{}}
}

func one(name string) []plan.Implementation { return []plan.Implementation{{Service: name}} }

func TestCompareKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		name            string
		base, new       []float64
		wantSignificant bool
		wantTested      bool
		wantChange      float64
	}{
		// a clear win: twice the throughput, trials within 3%
		{"clear win", []float64{1000, 1010, 990}, []float64{2000, 2030, 1970}, true, true, 1},
		// a tie: medians 1% apart, trials spread 8%
		{"tie within noise", []float64{1000, 1040, 960}, []float64{1010, 970, 1030}, false, true, 0.01},
		// a clear loss with two trials a side
		{"clear loss, two trials", []float64{1000, 1002}, []float64{700, 705}, true, true, -0.2985},
		// one trial a side, 2% apart: under the noise threshold
		{"one trial, small change", []float64{1000}, []float64{1020}, false, false, 0.02},
		// one trial a side, 30% apart: over the noise threshold
		{"one trial, large change", []float64{1000}, []float64{1300}, true, false, 0.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := SideOf("before", Summarize(fakeRun(one("svc"), map[string][]float64{"svc": tc.base})))
			b := SideOf("after", Summarize(fakeRun(one("svc"), map[string][]float64{"svc": tc.new})))
			ds := CompareSides(a, b)
			if len(ds) != len(CompareMetrics) {
				t.Fatalf("got %d deltas, want %d", len(ds), len(CompareMetrics))
			}
			d := ds[0]
			if d.Metric != "throughput" {
				t.Fatalf("first delta is %s, want throughput", d.Metric)
			}
			if d.Significant != tc.wantSignificant {
				t.Errorf("significant = %v (p=%.4f), want %v", d.Significant, d.P, tc.wantSignificant)
			}
			if (d.P >= 0) != tc.wantTested {
				t.Errorf("p = %v, tested want %v", d.P, tc.wantTested)
			}
			if math.Abs(d.Change-tc.wantChange) > 0.002 {
				t.Errorf("change %.4f, want %.4f", d.Change, tc.wantChange)
			}
			var out bytes.Buffer
			WriteComparison(&out, a, b, ds)
			text := out.String()
			if !tc.wantSignificant && !strings.Contains(text, " ~ ") {
				t.Errorf("no ~ in\n%s", text)
			}
			if !tc.wantTested && !strings.Contains(text, "no trials to test") {
				t.Errorf("no \"no trials to test\" in\n%s", text)
			}
		})
	}
}

func TestCompareBetween(t *testing.T) {
	impls := []plan.Implementation{
		{Service: "go-stdlib", Variant: "logging=off"},
		{Service: "go-stdlib", Variant: "logging=on"},
		{Service: "node-http", Env: map[string]string{"LOGGING": "off"}},
		{Service: "node-http", Variant: "log", Env: map[string]string{"LOGGING": "on"}},
	}
	res := fakeRun(impls, map[string][]float64{
		"go-stdlib+logging=off": {1000, 1010, 990},
		"go-stdlib+logging=on":  {500, 505, 495},
		"node-http":             {800, 810, 790},
		"node-http+log":         {790, 805, 800},
	})
	a, b, err := BetweenSides(res, Selector{"logging", "off"}, Selector{"logging", "on"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Delta{}
	for _, d := range CompareSides(a, b) {
		if d.Metric == "throughput" {
			got[d.Name] = d
		}
	}
	// go-stdlib halves with logging on; node-http does not change.
	if d := got["go-stdlib"]; !d.Significant || math.Abs(d.Change+0.5) > 0.01 {
		t.Errorf("go-stdlib: %+v, want a significant -50%%", d)
	}
	if d, ok := got["node-http"]; !ok || d.Significant {
		t.Errorf("node-http: %+v (present %v), want ~", d, ok)
	}
	// two implementation ids: one pair
	a, b, err = BetweenSides(res, Selector{Value: "go-stdlib+logging=off"}, Selector{Value: "node-http"})
	if err != nil {
		t.Fatal(err)
	}
	if ds := CompareSides(a, b); len(ds) != len(CompareMetrics) || !ds[0].Significant || ds[0].Change > -0.19 {
		t.Errorf("go-stdlib vs node-http: %+v, want one significant -20%% row", ds)
	}
	// a selector that matches nothing names what there is
	_, _, err = BetweenSides(res, Selector{"logging", "off"}, Selector{"logging", "loud"})
	if err == nil || !strings.Contains(err.Error(), "go-stdlib+logging=on") {
		t.Errorf("got %v, want an error listing the implementations", err)
	}
}

// TestInterruptedLevels: a level a signal cut short is left out of the
// cells, named in the workload's warnings and in compare, never compared
// as if it were a whole level.
func TestInterruptedLevels(t *testing.T) {
	base := fakeRun(one("a"), map[string][]float64{"a": {1000, 1010}})
	other := fakeRun(one("a"), map[string][]float64{"a": {1100, 1090}})
	cut := other.Run.Services[1]
	cut.Status, cut.Levels[0].Status, cut.Levels[0].Reason = results.Interrupted, results.Interrupted, "interrupted after 2.5s of 30s"
	cut.Reason = "interrupted before every level was measured"
	s := Summarize(other)
	if len(s.InterruptedLevels) != 1 || !strings.Contains(s.InterruptedLevels[0], "a w at 8 users, trial 2: interrupted after 2.5s") {
		t.Errorf("interrupted levels %q", s.InterruptedLevels)
	}
	if c := s.Workloads[0].Cells[0]; c.Trials != 1 {
		t.Errorf("the cell holds %d trials, want the whole one alone", c.Trials)
	}
	if len(s.Failures) != 0 {
		t.Errorf("an interrupted run listed among the failures: %+v", s.Failures)
	}
	if w := strings.Join(s.Workloads[0].Warnings, "\n"); !strings.Contains(w, "INTERRUPTED: a w at 8 users, trial 2") {
		t.Errorf("warnings lack the interrupted level:\n%s", w)
	}
	var b bytes.Buffer
	bs, os := SideOf("base", Summarize(base)), SideOf("new", s)
	WriteComparison(&b, bs, os, CompareSides(bs, os))
	if !strings.Contains(b.String(), "interrupted, not compared (new): a w at 8 users, trial 2") {
		t.Errorf("compare does not name the interrupted level:\n%s", b.String())
	}
}
