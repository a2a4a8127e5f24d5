package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// Everything a reader must know shows next to the headline, and a
// failed implementation is reported, not dropped.
func TestSummaryWarnings(t *testing.T) {
	res := fakeRun([]plan.Implementation{{Service: "fast"}, {Service: "noisy"}, {Service: "broken"}},
		map[string][]float64{"fast": {1000, 1010}, "noisy": {500, 900}})
	r := res.Run
	r.Limits = results.AppliedLimits{Mechanism: "none", Notes: []string{"cgroup v2 not writable: no CPU quota"}}
	r.Services = append(r.Services, &results.ServiceRun{Implementation: "broken", Service: "broken", Workload: "w", Trial: 1, Status: results.Failed,
		Reason: "health check timed out after 60s", LogTail: "panic: boom"})
	lr := r.Services[0].Levels[0]
	lr.Violations = []results.Violation{{Check: "money", Detail: "total changed by 10"}}
	lr.Warnings = []string{"generator-bound, generator 95% of 1 CPU: the figures may show the generator's limit, not the service's"}
	lr.Total.Errors = 5
	lr.Thresholds = []results.ThresholdVerdict{{Expr: "p99>200ms", Measured: 312.5, Crossed: true}, {Expr: "errors>1%", Measured: 0.05}}
	s := Summarize(res)
	if len(s.Workloads) != 1 {
		t.Fatalf("%d workloads, want 1", len(s.Workloads))
	}
	wl := s.Workloads[0]
	all := strings.Join(append(append([]string{}, s.Warnings...), wl.Warnings...), "\n")
	for _, want := range []string{
		"cgroup v2 not writable",                                                  // limits that could not be applied
		"broken, trial 1 failed: health",                                          // a failed service run
		"INVARIANT FAILED: fast at 8 users",                                       // an invariant violation
		"fast at 8 users, trial 1: generator-bound, generator 95% of 1 CPU",       // the runner's own warning
		"0.05% errors (5 of 10000)",                                               // errors
		"noisy at 8 users: throughput varies 57%",                                 // noisy trials
		"THRESHOLD CROSSED: fast at 8 users, trial 1: p99>200ms (measured 312.5)", // a plan's fail_if
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if wl.Best == nil || wl.Best.Implementation != "fast" || !strings.HasPrefix(wl.Headline, "fast served the most") {
		t.Errorf("headline %q, want fast", wl.Headline)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| broken | 8 | not measured |", "## Failures", "panic: boom",
		"| fast | w | 8 | 1 | `p99>200ms` | CROSSED | measured 312.5 |", "| `errors>1%` | ok | measured 0.05 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md.String())
		}
	}
	var h bytes.Buffer
	if err := WriteHTML(&h, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "health check timed out") {
		t.Errorf("report.html does not show the failure")
	}
	if !strings.Contains(h.String(), "<code>p99&gt;200ms</code></td><td><b>CROSSED</b>") {
		t.Errorf("report.html does not show the crossed threshold")
	}
}

// The headline needs acceptable latency: a faster implementation with a
// p99 over the limit loses to a slower one within it.
func TestHeadlineAcceptableLatency(t *testing.T) {
	res := fakeRun([]plan.Implementation{{Service: "fast-but-slow-tail"}, {Service: "steady"}},
		map[string][]float64{"fast-but-slow-tail": {2000}, "steady": {1000}})
	res.Run.Services[0].Levels[0].Total.Latency.P99 = 2 * DefaultAcceptableP99Ms
	wl := Summarize(res).Workloads[0]
	if wl.Best == nil || wl.Best.Implementation != "steady" {
		t.Errorf("headline %q, want steady", wl.Headline)
	}
}

func TestDownsample(t *testing.T) {
	s := &load.Series{Columns: []string{"second", "throughput", "max_ms"}}
	for i := 0; i < 1000; i++ {
		mx := 1.0
		if i == 777 {
			mx = 500 // one stall must survive
		}
		s.Rows = append(s.Rows, []float64{float64(i), 100, mx})
	}
	d := downsample(s, 600)
	if len(d.Rows) > 600 || len(d.Rows) < 300 {
		t.Fatalf("%d rows, want at most 600", len(d.Rows))
	}
	peak := 0.0
	for _, v := range d.Col("max_ms") {
		peak = math.Max(peak, v)
	}
	if peak != 500 {
		t.Errorf("max after downsampling %v, want the 500 ms stall", peak)
	}
	if tp := d.Col("throughput"); tp[0] != 100 {
		t.Errorf("throughput %v, want the mean 100", tp[0])
	}
}

// A level the lab found generator-bound marks its row in summary.md and
// report.html, with the generator's busiest trial, and how many trials
// were bound when not all.
func TestGeneratorBoundMark(t *testing.T) {
	res := fakeRun([]plan.Implementation{{Service: "fast"}, {Service: "slow"}},
		map[string][]float64{"fast": {1000, 1010, 990}, "slow": {500, 510, 490}})
	for i, sr := range res.Run.Services {
		lr := sr.Levels[0]
		lr.GeneratorCPUs = 1
		if sr.Implementation == "fast" && i != 2 {
			lr.GeneratorBound, lr.GeneratorCPUPercent = true, 83+float64(i)*4
		}
	}
	wl := Summarize(res).Workloads[0]
	marks := map[string]string{}
	for _, c := range wl.Cells {
		marks[c.Implementation] = c.GeneratorBound
	}
	if got, want := marks["fast"], "generator-bound, generator 87% of 1 CPU in 2 of 3 trials"; got != want {
		t.Errorf("fast marked %q, want %q", got, want)
	}
	if got := marks["slow"]; got != "" {
		t.Errorf("slow marked %q, want no mark", got)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	if want := "| fast (generator-bound, generator 87% of 1 CPU in 2 of 3 trials) | 8 |"; !strings.Contains(md.String(), want) {
		t.Errorf("summary.md lacks %q:\n%s", want, md.String())
	}
	if strings.Contains(md.String(), "slow (generator-bound") {
		t.Errorf("summary.md marks slow:\n%s", md.String())
	}
	var h bytes.Buffer
	if err := WriteHTML(&h, res); err != nil {
		t.Fatal(err)
	}
	if want := `fast <span class="mark">generator-bound, generator 87% of 1 CPU in 2 of 3 trials</span>`; !strings.Contains(h.String(), want) {
		t.Errorf("report.html lacks %q", want)
	}
}
