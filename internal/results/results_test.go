package results

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/load"
)

// TestWriteLevelJoinsResources writes a real level (a short attack on a
// loopback server) with resource samples and reads it back: the engine's
// columns and the resource columns share each row, a second without a
// sample has empty cells, and the latency log merges to the total count.
func TestWriteLevelJoinsResources(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	res, err := load.NewAttacker().Attack(context.Background(), &load.Target{URL: srv.URL}, load.ClosedModel{Users: 2, Duration: 2500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := res.Summary.Start
	// One service sample for second 0 and one for second 2; none for 1.
	svc := []ResourceSample{
		{Time: start.Add(time.Second), Interval: time.Second, CPUPercent: 42.5, RSSBytes: 2048 << 10, Threads: 7, FDs: 9},
		{Time: start.Add(3 * time.Second), Interval: time.Second, CPUPercent: 10, RSSBytes: 4096 << 10, Threads: 8, FDs: 10},
	}
	gen := []ResourceSample{{Time: start.Add(time.Second), Interval: time.Second, CPUPercent: 55}}
	dir := t.TempDir()
	if err := WriteLevel(dir, res, Samples{Service: svc, Generator: gen}); err != nil {
		t.Fatal(err)
	}
	l := ReadLevel(dir)
	if l.Err != nil {
		t.Fatal(l.Err)
	}
	if got, want := len(l.Series.Columns), len(load.TimeseriesHeader)+len(load.LatenessColumns)+len(ResourceColumns); got != want {
		t.Fatalf("%d columns %v, want %d", got, l.Series.Columns, want)
	}
	cpu, rss, gcpu, dbcpu := l.Series.Col("service_cpu_percent"), l.Series.Col("service_rss_kb"), l.Series.Col("generator_cpu_percent"), l.Series.Col("db_cpu_percent")
	if len(cpu) < 3 {
		t.Fatalf("%d seconds, want 3", len(cpu))
	}
	tests := []struct {
		name      string
		got, want float64
	}{
		{"service CPU at second 0", cpu[0], 42.5},          // sample covering second 0
		{"service RSS at second 0", rss[0], 2048},          // in KiB
		{"service CPU at second 2", cpu[2], 10},            // the second sample
		{"generator CPU at second 0", gcpu[0], 55},         // another process, same row
		{"service CPU at second 1", cpu[1], math.NaN()},    // no sample: empty cell
		{"database CPU at second 0", dbcpu[0], math.NaN()}, // no database
	}
	for _, tt := range tests {
		if !(tt.got == tt.want || math.IsNaN(tt.got) && math.IsNaN(tt.want)) {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if l.Latency == nil || l.Latency.TotalCount() != res.Summary.Total.Samples {
		t.Errorf("latency log holds %v samples, want %d", l.Latency, res.Summary.Total.Samples)
	}
}

// TestSummarize weights CPU by interval and keeps peaks.
func TestSummarize(t *testing.T) {
	got := SummarizeResources([]ResourceSample{
		{RSSBytes: 10, Threads: 3}, // the first sample has no interval: peaks only
		{Interval: time.Second, CPUPercent: 100, RSSBytes: 30, Threads: 2, FDs: 5, CtxSwitches: 10},
		{Interval: 3 * time.Second, CPUPercent: 20, RSSBytes: 20, FDs: 7, CtxSwitches: 30},
	})
	want := Resources{CPUMean: 40, CPUMax: 100, RSSPeakBytes: 30, ThreadsMax: 3, FDsMax: 7, CtxSwitchesPS: 10}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
}

// Every crossed threshold is listed with where it was measured; the ones
// that held are not.
func TestCrossedThresholds(t *testing.T) {
	r := &Run{Services: []*ServiceRun{{Implementation: "go-stdlib+logging", Workload: "bank", Trial: 2, Levels: []*LevelRun{
		{Level: 50, Thresholds: []ThresholdVerdict{
			{Expr: "p99>200ms", Measured: 312.5, Crossed: true},                  // crossed: listed with its value
			{Expr: "errors>1%", Measured: 0.2},                                   // held: not listed
			{Expr: "GET /x:p99>1s", Crossed: true, Error: "no label \"GET /x\""}, // unmeasurable: listed with why
		}},
	}}}}
	got := CrossedThresholds(r)
	want := []string{
		"go-stdlib+logging bank level 50 trial 2: p99>200ms (measured 312.5)",
		`go-stdlib+logging bank level 50 trial 2: GET /x:p99>1s (no label "GET /x")`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
