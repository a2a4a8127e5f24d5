package machine

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

const statText = `cpu  100 10 50 800 20 5 5 10 0 0
cpu0 60 5 25 390 10 3 2 5 0 0
cpu1 40 5 25 410 10 2 3 5 0 0
intr 12345 0 0
ctxt 999
`

func TestParseStat(t *testing.T) {
	s, err := ParseStat(strings.NewReader(statText))
	if err != nil {
		t.Fatal(err)
	}
	// total is user..steal; busy leaves out idle and iowait.
	if want := (Times{Busy: 180, Total: 1000, Steal: 10}); s.All != want {
		t.Errorf("All = %+v, want %+v", s.All, want)
	}
	if want := (Times{Busy: 100, Total: 500, Steal: 5}); s.CPU[0] != want {
		t.Errorf("CPU[0] = %+v, want %+v", s.CPU[0], want)
	}
	if len(s.CPU) != 2 {
		t.Errorf("%d CPUs, want 2", len(s.CPU))
	}
	if _, err := ParseStat(strings.NewReader("cpu0 1 2 x 4 5 6 7 8\n")); err == nil {
		t.Error("a CPU line with a word for a number parsed")
	}
}

func TestBusyAndSteal(t *testing.T) {
	prev := Stat{All: Times{Total: 1000, Steal: 10}, CPU: map[int]Times{0: {Busy: 100, Total: 500}, 1: {Busy: 50, Total: 500}}}
	now := Stat{All: Times{Total: 1200, Steal: 30}, CPU: map[int]Times{0: {Busy: 200, Total: 600}, 1: {Busy: 100, Total: 600}}}
	if got := BusyPercent(prev, now, []int{0}); got != 100 {
		t.Errorf("BusyPercent(cpu 0) = %v, want 100", got)
	}
	if got := BusyPercent(prev, now, []int{0, 1}); got != 150 {
		t.Errorf("BusyPercent(cpus 0,1) = %v, want 150", got)
	}
	if got := StealPercent(prev, now); got != 10 {
		t.Errorf("StealPercent = %v, want 10", got)
	}
	if got := StealPercent(now, now); got != 0 {
		t.Errorf("StealPercent with no time passed = %v, want 0", got)
	}
	// Describe: 200 ticks of two CPUs are 1 s.
	prev.All.Busy, now.All.Busy = 400, 550
	if got, want := Describe(prev, now, "7.84 5.70 2.67 3/412 2083\n"), "machine: load average 7.84 5.70 2.67; 2 CPUs 75% busy and 10.0% stolen over the last 1 s"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if got, want := Describe(now, now, ""), "machine: no CPU time read"; got != want {
		t.Errorf("Describe with no time passed = %q, want %q", got, want)
	}
}

func TestParseLoadAndMemory(t *testing.T) {
	if got, err := ParseLoad1("0.52 0.58 0.59 1/467 12345\n"); err != nil || got != 0.52 {
		t.Errorf("ParseLoad1 = %v, %v; want 0.52", got, err)
	}
	if _, err := ParseLoad1(""); err == nil {
		t.Error("empty loadavg parsed")
	}
	if got, err := ParseMemTotal("MemTotal:       24576000 kB\nMemFree:  1 kB\n"); err != nil || got != 24576000*1024 {
		t.Errorf("ParseMemTotal = %v, %v", got, err)
	}
	if _, err := ParseMemTotal("MemFree: 1 kB\n"); err == nil {
		t.Error("meminfo without MemTotal parsed")
	}
}

const cpuinfoText = `processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) CPU @ 2.20GHz
cpu MHz		: 2200.000

processor	: 1
model name	: Intel(R) Xeon(R) CPU @ 2.20GHz
cpu MHz		: 2400.000
`

func TestParseCPUInfo(t *testing.T) {
	info := ParseCPUInfo(cpuinfoText)
	if info.Model != "Intel(R) Xeon(R) CPU @ 2.20GHz" {
		t.Errorf("Model = %q", info.Model)
	}
	for _, tt := range []struct {
		cpus []int
		want float64
	}{
		{[]int{0}, 2200},    // one CPU
		{[]int{0, 1}, 2300}, // the mean
		{nil, 2300},         // every CPU
		{[]int{7}, 0},       // a CPU the file does not name
	} {
		if got := info.MeanMHz(tt.cpus); got != tt.want {
			t.Errorf("MeanMHz(%v) = %v, want %v", tt.cpus, got, tt.want)
		}
	}
	// ARM machines name no model and no frequency.
	if arm := ParseCPUInfo("processor\t: 0\nBogoMIPS\t: 50.00\n"); arm.Model != "" || arm.MeanMHz(nil) != 0 {
		t.Errorf("ARM cpuinfo = %+v", arm)
	}
}

// TestRealProc reads this machine's files: what the lab reads each
// second must parse here.
func TestRealProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	s, err := ReadStat()
	if err != nil {
		t.Fatal(err)
	}
	if s.All.Total == 0 || s.All.Busy > s.All.Total {
		t.Errorf("all CPUs = %+v", s.All)
	}
	cpus := CPUs()
	// runtime.NumCPU counts the same affinity set at the start.
	if len(cpus) != runtime.NumCPU() {
		t.Errorf("CPUs() = %v, runtime.NumCPU() = %d", cpus, runtime.NumCPU())
	}
	if !slices.IsSorted(cpus) {
		t.Errorf("CPUs() = %v, not ascending", cpus)
	}
	for _, c := range cpus {
		if _, ok := s.CPU[c]; !ok {
			t.Errorf("/proc/stat has no line for CPU %d", c)
		}
	}
	if l, err := Load1(); err != nil || l < 0 {
		t.Errorf("Load1() = %v, %v", l, err)
	}
	if m, err := MemTotal(); err != nil || m < 1<<20 {
		t.Errorf("MemTotal() = %v, %v", m, err)
	}
	if _, err := ReadCPUInfo(); err != nil {
		t.Error(err)
	}
}

// TestCPUSet: a list is its CPUs; an empty or bad list is every CPU the
// process could run on.
func TestCPUSet(t *testing.T) {
	if got := CPUSet("0,2-3"); len(got) != 3 || got[0] != 0 || got[1] != 2 || got[2] != 3 {
		t.Errorf("CPUSet(0,2-3) = %v, want [0 2 3]", got)
	}
	for _, list := range []string{"", "x"} {
		if got, want := CPUSet(list), CPUs(); len(got) != len(want) || len(got) == 0 {
			t.Errorf("CPUSet(%q) = %v, want the process's CPUs %v", list, got, want)
		}
	}
}
