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
		res.Run.Services[0].Warmup = &results.WarmupRun{Auto: true, Steady: true, Seconds: 5, Metric: "throughput",
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

// TestMachineNoiseShown: the environment table and the setup line say how
// much the machine itself varied, per CPU, where the run measured it.
func TestMachineNoiseShown(t *testing.T) {
	res, err := Load("testdata/run")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(setupLine(res), "machine noise") {
		t.Error("setup line names a machine noise the run did not measure")
	}
	res.Run.Machine.Noise = &results.NoiseFloor{Seconds: 11, CPUs: []int{0, 1}, CV: []float64{0.074, 0.182}, Max: 0.182}
	var h bytes.Buffer
	if err := WriteHTML(&h, res); err != nil {
		t.Fatal(err)
	}
	want := "per-second CV CPU 0 7%, CPU 1 18% (a memory-bound probe on each CPU at once for 11 s"
	if !strings.Contains(h.String(), want) || !strings.Contains(h.String(), "Machine noise") {
		t.Errorf("report lacks the machine noise row %q", want)
	}
	if !strings.Contains(setupLine(res), want) {
		t.Errorf("setup line %q lacks %q", setupLine(res), want)
	}
}
