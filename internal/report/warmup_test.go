package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
)

// TestWarmupChartCompiler: the warm-up chart gets a second panel with the
// JIT compiler's CPU only where a runtime compiled while it warmed.
func TestWarmupChartCompiler(t *testing.T) {
	for _, tc := range []struct {
		name     string
		compiler []float64
		want     bool
	}{
		// A JVM: its C2 threads worked, then rested.
		{"jvm", []float64{12, 8, 7, 0.5, 0}, true},
		// Go: watched, nothing compiled.
		{"go", []float64{0, 0, 0, 0, 0}, false},
		// Not watched (a Kubernetes run).
		{"unwatched", nil, false},
	} {
		res, err := Load("testdata/run")
		if err != nil {
			t.Fatal(err)
		}
		res.Run.Services[0].Warmup = &results.Warmup{Auto: true, Steady: true, Seconds: 5, Metric: "throughput",
			Throughput: []float64{100, 400, 900, 1000, 1000}, CompilerCPU: tc.compiler}
		var h bytes.Buffer
		if err := WriteHTML(&h, res); err != nil {
			t.Fatal(err)
		}
		s := h.String()
		if !strings.Contains(s, "warm-up throughput after start") {
			t.Errorf("%s: no warm-up chart", tc.name)
		}
		if got := strings.Contains(s, "JIT compiler (% of a CPU)"); got != tc.want {
			t.Errorf("%s: compiler panel shown = %v, want %v", tc.name, got, tc.want)
		}
	}
}
