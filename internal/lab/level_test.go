package lab

import (
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
)

func TestGeneratorGuard(t *testing.T) {
	tests := []struct {
		cpuMean     float64 // percent of one CPU, as monitor samples it
		cpus        int
		wantPercent float64
		wantBound   bool
	}{
		{87, 1, 87, true},     // the figure on one generator CPU
		{80, 1, 80, false},    // the line itself is not over it
		{80.1, 1, 80.1, true}, // just over
		{170, 2, 85, true},    // two CPUs: percent of both
		{170, 4, 42.5, false}, // the same work on four CPUs is not bound
		{1200, 15, 80, false}, // 15 generator CPUs of a 16-CPU machine, at the line
		{1300, 15, 86.7, true},
		{0, 1, 0, false},    // an idle generator
		{95, 0, 95, true},   // an unknown count is read as one CPU, never a division by zero
		{50, -1, 50, false}, // likewise a negative one
	}
	for _, tt := range tests {
		p, b := generatorGuard(tt.cpuMean, tt.cpus)
		if p != tt.wantPercent || b != tt.wantBound {
			t.Errorf("generatorGuard(%v, %d) = %v, %v; want %v, %v", tt.cpuMean, tt.cpus, p, b, tt.wantPercent, tt.wantBound)
		}
	}
	if got, want := results.GeneratorNote(87, 1), "generator-bound, generator 87% of 1 CPU"; got != want {
		t.Errorf("GeneratorNote(87, 1) = %q, want %q", got, want)
	}
	if got, want := results.GeneratorNote(86.7, 15), "generator-bound, generator 87% of 15 CPUs"; got != want {
		t.Errorf("GeneratorNote(86.7, 15) = %q, want %q", got, want)
	}
}

// TestGeneratorCPUs pins this test's thread to one CPU, as Run pins the
// generator: the count must follow the pin, which runtime.NumCPU (the
// count at the process's start) does not.
func TestGeneratorCPUs(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Skipf("no CPU affinity here: %v", err)
	}
	defer unix.SchedSetaffinity(0, &old)
	if got, want := generatorCPUs(), min(runtime.GOMAXPROCS(0), old.Count()); got != want {
		t.Errorf("before the pin: generatorCPUs() = %d, want %d (GOMAXPROCS %d, affinity %d)", got, want, runtime.GOMAXPROCS(0), old.Count())
	}
	first := -1
	for c := range 1 << 12 {
		if old.IsSet(c) {
			first = c
			break
		}
	}
	var one unix.CPUSet
	one.Set(first)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	if got := generatorCPUs(); got != 1 {
		t.Errorf("pinned to CPU %d: generatorCPUs() = %d, want 1", first, got)
	}
}

func TestSpareCPUsHint(t *testing.T) {
	tests := []struct {
		pl   plan.Placement
		ncpu int
		want string
	}{
		// The default placement of a 16-CPU machine leaves nothing spare.
		{plan.Placement{ServiceCPUs: "0", GeneratorCPUs: "1-15", DatabaseCPUs: "1-15"}, 16, ""},
		// A placement that forgets CPUs names them.
		{plan.Placement{ServiceCPUs: "0", GeneratorCPUs: "1", DatabaseCPUs: "2"}, 6, "CPUs 3,4,5 are in no placement"},
		// Two CPUs, the default: nothing to give.
		{plan.Placement{ServiceCPUs: "0", GeneratorCPUs: "1", DatabaseCPUs: "1"}, 2, ""},
	}
	for _, tt := range tests {
		got := spareCPUsHint(tt.pl, tt.ncpu)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("spareCPUsHint(%+v, %d) = %q, want %q", tt.pl, tt.ncpu, got, tt.want)
		}
	}
}
