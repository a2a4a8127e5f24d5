package monitor

import (
	"os"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestThreadTicks(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       uint64
	}{
		// HotSpot's C2 thread: utime 250 + stime 12.
		{"c2", "4242 (C2 CompilerThre) S 1 4200 4200 0 -1 4194368 10 0 0 0 250 12 0 0 20 0 40 0 100 0 0", 262},
		// C1 the same way.
		{"c1", "4243 (C1 CompilerThre) S 1 4200 4200 0 -1 4194368 10 0 0 0 7 3 0 0 20 0 40 0 100 0 0", 10},
		// A request thread is not a compiler's.
		{"worker", "4244 (http-nio-8080-) R 1 4200 4200 0 -1 4194368 10 0 0 0 900 80 0 0 20 0 40 0 100 0 0", 0},
		// Graal's compiler thread counts too.
		{"jvmci", "4245 (JVMCI CompilerT) S 1 4200 4200 0 -1 4194368 10 0 0 0 5 5 0 0 20 0 40 0 100 0 0", 10},
		// Truncated line: nothing rather than garbage.
		{"short", "4246 (C2 CompilerThre) S 1 4200", 0},
		// No name at all.
		{"garbage", "not a stat line", 0},
	} {
		if got := threadTicks([]byte(tc.stat)); got != tc.want {
			t.Errorf("%s: threadTicks = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestCompilerCPUCountsNamedThreads names one of this process's threads
// as HotSpot names its C2 compiler thread, burns CPU on it and expects
// CompilerCPU to see that time, and only that thread's.
func TestCompilerCPUCountsNamedThreads(t *testing.T) {
	pid := int32(os.Getpid())
	if before := CompilerCPU(pid); before != 0 {
		t.Fatalf("CompilerCPU of a Go test process = %s before any thread was named, want 0", before)
	}
	done := make(chan time.Duration)
	go func() {
		runtime.LockOSThread() // the thread ends with the goroutine: its name goes with it
		name := []byte("C2 CompilerThread0\x00")
		if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0); err != nil {
			t.Errorf("prctl: %v", err)
		}
		// Burn until the thread has used 300 ms of CPU (the machine may be
		// busy), for at most 20 s.
		var ts unix.Timespec
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
			if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil || time.Duration(ts.Nano()) >= 300*time.Millisecond {
				break
			}
		}
		done <- CompilerCPU(pid)
	}()
	// /proc counts in 10 ms ticks.
	if got := <-done; got < 250*time.Millisecond {
		t.Errorf("CompilerCPU = %s after its thread burned 300 ms of CPU, want at least 250 ms", got)
	}
}
