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

// TestNeighbourHogsAndEnds starts a real neighbour: it uses about its
// duty of a CPU, is pinned where asked, and ends by itself at its
// deadline.
func TestNeighbourHogsAndEnds(t *testing.T) {
	n, err := Start(Options{CPUs: []int{0}, Duty: 0.5, MinPeriod: 50 * time.Millisecond, MaxPeriod: 200 * time.Millisecond, Max: 3 * time.Second, MemoryBytes: 8 << 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	time.Sleep(2 * time.Second)
	ticks := cpuTicks(t, n.PID())
	// 2 s at a duty of one half is about 100 ticks of 10 ms; the start
	// and the scheduler blur it.
	if ticks < 40 || ticks > 170 {
		t.Errorf("neighbour used %d ticks in 2 s, want about 100 (half a CPU)", ticks)
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
