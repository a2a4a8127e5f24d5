package noise

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/stats"
)

func TestMeasureRejects(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cpus    []int
		seconds int
		want    string
	}{
		// Two seconds leave one after the dropped first: no spread.
		{"too short", []int{0}, 2, "at least 3"},
		// Nothing to measure.
		{"no CPUs", nil, 3, "no CPUs"},
		// A CPU the machine does not have.
		{"no such CPU", []int{4096}, 3, "CPU 4096"},
	} {
		_, err := Measure(context.Background(), tc.cpus, tc.seconds)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

// TestMeasure runs the real probe on CPU 0 for three seconds: one rate a
// second, each a real count of work, and the CV computed from the rates
// after the first.
func TestMeasure(t *testing.T) {
	if testing.Short() {
		t.Skip("burns a CPU for 3 s")
	}
	start := time.Now()
	f, err := Measure(context.Background(), []int{0}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a 3 s measurement took %s", took)
	}
	if len(f.Rates) != 1 || len(f.Rates[0]) != 3 {
		t.Fatalf("rates %v, want 3 for one CPU", f.Rates)
	}
	for _, r := range f.Rates[0] {
		if r < 1 {
			t.Errorf("rates %v: a second without work", f.Rates[0])
		}
	}
	want := math.Round(stats.CV(f.Rates[0][1:])*10000) / 10000
	if f.CV[0] != want || f.Max != want {
		t.Errorf("CV %v, max %v; want %v from rates %v", f.CV, f.Max, want, f.Rates[0])
	}
}

// TestMeasureStops ends early when its context does: well before the
// 30 s it was asked for. The bound is half of those, not a few seconds
// after the cancellation: the probes' start and their last second take
// what a busy machine gives them, and a measurement that ignored its
// context would run all 30.
func TestMeasureStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Measure(ctx, []int{0}, 30)
	if err == nil {
		t.Error("a cancelled measurement reported no error")
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("a measurement cancelled after 1.5 s took %s", took)
	}
}

// TestMeasureLatency: a second at 200 req/s against the trivial server
// pinned to CPU 0 gives a floor with samples, and both p99s set.
func TestMeasureLatency(t *testing.T) {
	l, err := MeasureLatency(context.Background(), nil, 0, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if l.Rate != FloorRate || l.Samples < 150 || l.P99Ms <= 0 || l.P99Ms < l.P50Ms || l.ServerCPU != 0 {
		t.Errorf("floor %+v: want about 200 samples, p99 > 0 and >= p50, on CPU 0", l)
	}
	t.Logf("floor: %+v", l)
}
