package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
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
