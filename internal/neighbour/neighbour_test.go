package neighbour

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cpuTicks is a process's user+system time in clock ticks.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// idleTicks is a CPU's idle and iowait time in clock ticks (/proc/stat).
func idleTicks(t *testing.T, cpu int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	name := "cpu" + strconv.Itoa(cpu)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[0] == name {
			idle, _ := strconv.ParseInt(f[4], 10, 64)
			iowait, _ := strconv.ParseInt(f[5], 10, 64)
			return idle + iowait
		}
	}
	t.Fatalf("no %s in /proc/stat", name)
	return 0
}

// TestNeighbourHogsAndEnds starts a real neighbour: it uses about its
// duty of a CPU, is pinned where asked, and ends by itself at its
// deadline. How much of CPU 0 it gets depends on who else runs there (a
// build beside it takes its share), so its time is read against what it
// could have had: its own ticks and CPU 0's idle ticks over the same
// two seconds. At a duty of one half it takes about half of that on a
// quiet CPU and nearly all of it on a busy one; a neighbour that did
// not hog would take little of it, one that ignored its duty the whole
// CPU. (Where others leave CPU 0 no idle time, only a neighbour that
// does not hog at all is told apart: under 10 ticks, 5% of it.)
func TestNeighbourHogsAndEnds(t *testing.T) {
	idle0 := idleTicks(t, 0)
	n, err := Start(Options{CPUs: []int{0}, Duty: 0.5, MinPeriod: 50 * time.Millisecond, MaxPeriod: 200 * time.Millisecond, Max: 3 * time.Second, MemoryBytes: 8 << 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	time.Sleep(2 * time.Second)
	ticks, idle := cpuTicks(t, n.PID()), idleTicks(t, 0)-idle0
	t.Logf("neighbour used %d ticks in 2 s, CPU 0 idle for %d", ticks, idle)
	if free := ticks + idle; ticks*4 < free || ticks < 10 {
		t.Errorf("neighbour used %d ticks of the %d CPU 0 had free in 2 s, want at least a quarter (its duty is a half) and 10", ticks, free)
	}
	// 2 s at a duty of one half is about 100 ticks of 10 ms; the start
	// and the scheduler blur it, and a busy CPU only lowers it.
	if ticks > 170 {
		t.Errorf("neighbour used %d ticks in 2 s, want about 100 (half a CPU) at most", ticks)
	}
	select {
	case <-n.Done():
	case <-time.After(4 * time.Second):
		t.Fatal("the neighbour did not end at its 3 s deadline")
	}
}

func TestStartNeedsCPUs(t *testing.T) {
	if _, err := Start(Options{}); err == nil {
		t.Error("a neighbour on no CPUs started")
	}
}
