package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
)

// A source's figures are set beside ours, and the ranking is said to
// reproduce only when ours orders the implementations the same way.
func TestPublished(t *testing.T) {
	tests := []struct {
		name    string
		metric  string
		figures map[string]float64
		want    string
	}{
		// fast has the most throughput in the source too.
		{"same ranking", "throughput", map[string]float64{"fast": 21300, "slow": 18300}, "yes"},
		// the source had slow ahead: not reproduced.
		{"reversed ranking", "throughput", map[string]float64{"fast": 100, "slow": 200}, "no"},
		// a latency: less is better, fast answered sooner (p50 8000/throughput).
		{"latency, less is better", "p50_ms", map[string]float64{"fast": 5.96, "slow": 14.2}, "yes"},
		// an implementation this run did not measure.
		{"not measured", "throughput", map[string]float64{"fast": 1, "gone": 2}, "not measured"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := fakeRun([]plan.Implementation{{Service: "fast"}, {Service: "slow"}}, map[string][]float64{"fast": {1000}, "slow": {500}})
			res.Run.Plan.Published = []plan.Published{{Source: "src", Workload: "w", Level: 8, Metric: tc.metric, Figures: tc.figures}}
			s := Summarize(res)
			if len(s.Published) != 1 || s.Published[0].Reproduces != tc.want {
				t.Fatalf("published = %+v, want reproduces %q", s.Published, tc.want)
			}
			var md bytes.Buffer
			if err := WriteMarkdown(&md, res); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(md.String(), "## Published figures beside ours") || !strings.Contains(md.String(), "| "+tc.want+" |") {
				t.Errorf("summary.md lacks the published table:\n%s", md.String())
			}
			var h bytes.Buffer
			if err := WriteHTML(&h, res); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(h.String(), "Published figures beside ours") || !strings.Contains(h.String(), "<b>"+tc.want+"</b>") {
				t.Errorf("report.html lacks the published table")
			}
		})
	}
}

// The published ratio is checked against the 95% interval of our ratio
// from the per-trial figures, and a database dimension's cells are matched
// by their setting.
func TestPublishedRatioInterval(t *testing.T) {
	tests := []struct {
		name    string
		figures map[string]float64
		want    string
	}{
		// ours: fast/slow = 2 with a few percent of spread; 2.1 is inside.
		{"inside", map[string]float64{"fast": 2100, "slow": 1000}, "yes"},
		// 1.2 is far outside our interval around 2.
		{"outside", map[string]float64{"fast": 1200, "slow": 1000}, "no"},
		// a zero figure has no ratio.
		{"zero", map[string]float64{"fast": 5, "slow": 0}, "no published ratio (a zero figure)"},
	}
	for _, tc := range tests {
		res := fakeRun([]plan.Implementation{{Service: "fast"}, {Service: "slow"}}, map[string][]float64{"fast": {1000, 1020, 980}, "slow": {500, 505, 495}})
		res.Run.Plan.Published = []plan.Published{{Source: "src", Workload: "w", Level: 8, Metric: "throughput", Figures: tc.figures}}
		s := Summarize(res)
		row := s.Published[0]
		if row.PublishedInside != tc.want {
			t.Errorf("%s: inside = %q (interval %s), want %q", tc.name, row.PublishedInside, row.IntervalText(), tc.want)
		}
		if row.Interval == nil || !row.Interval.Contains(2) {
			t.Errorf("%s: interval %+v does not hold our ratio 2", tc.name, row.Interval)
		}
	}

	// The same implementations at two database settings: the figure
	// compares at sku_index=false only.
	res := fakeRun([]plan.Implementation{{Service: "fast"}, {Service: "slow"}}, map[string][]float64{"fast": {1000, 1000}, "slow": {500, 500}})
	for _, sr := range res.Run.Services {
		sr.Database = "sku_index=true"
		other := *sr
		other.Database = "sku_index=false"
		lr := *sr.Levels[0]
		lr.Total.Throughput /= 10 // a full table scan
		if sr.Implementation == "slow" {
			lr.Total.Throughput /= 10
		}
		other.Levels = []*results.LevelRun{&lr}
		res.Run.Services = append(res.Run.Services, &other)
	}
	res.Run.Plan.Workloads = []plan.Workload{{Name: "sku"}}
	for _, sr := range res.Run.Services {
		sr.Workload = "sku"
	}
	res.Run.Plan.Database.SKUIndexes = []bool{false, true}
	res.Run.Plan.Published = []plan.Published{{Source: "src", Workload: "sku", Level: 8, Metric: "throughput", Database: "sku_index=false", Figures: map[string]float64{"fast": 20, "slow": 1}}}
	s := Summarize(res)
	if got := s.Published[0].Ours; got["fast"] != 100 || got["slow"] != 5 {
		t.Errorf("ours = %v, want the sku_index=false cells (fast 100, slow 5)", got)
	}
	if s.Published[0].PublishedInside != "yes" {
		t.Errorf("inside = %q, want yes (20 against our 20)", s.Published[0].PublishedInside)
	}
	var names []string
	for _, c := range s.Workloads[0].Cells {
		names = append(names, c.Implementation)
	}
	if want := "fast [sku_index=false],fast [sku_index=true],slow [sku_index=false],slow [sku_index=true]"; strings.Join(names, ",") != want {
		t.Errorf("cells %s, want %s", strings.Join(names, ","), want)
	}
}
