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
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		// The name is given back before the result is sent: a goroutine
		// that ends locked to the main thread cannot end that thread,
		// and the next test must not see the name.
		old := nameThread(t, "C2 CompilerThread0")
		// Burn until the thread has used 300 ms of CPU (the machine may be
		// busy), for at most 20 s.
		var ts unix.Timespec
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
			if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil || time.Duration(ts.Nano()) >= 300*time.Millisecond {
				break
			}
		}
		cpu := CompilerCPU(pid)
		nameThread(t, old)
		done <- cpu
	}()
	// /proc counts in 10 ms ticks.
	if got := <-done; got < 250*time.Millisecond {
		t.Errorf("CompilerCPU = %s after its thread burned 300 ms of CPU, want at least 250 ms", got)
	}
}

func TestRuntimeOf(t *testing.T) {
	for _, tc := range []struct{ stat, want string }{
		// HotSpot's compiler threads name the JVM.
		{"4242 (C2 CompilerThre) S 1 4200", HotSpot},
		{"4245 (JVMCI CompilerT) S 1 4200", HotSpot},
		// Node 20 names every thread "node", its V8 workers included.
		{"28306 (node) R 1 28300", V8},
		// A JVM's other threads, a Go binary, CPython: no JIT seen.
		{"4244 (http-nio-8080-) R 1 4200", ""},
		{"501 (server) S 1 500", ""},
		{"502 (python3) S 1 500", ""},
		{"garbage", ""},
	} {
		if got := runtimeOf([]byte(tc.stat)); got != tc.want {
			t.Errorf("runtimeOf(%q) = %q, want %q", tc.stat, got, tc.want)
		}
	}
	// A tree with both: the JVM's compiler is what can be watched.
	if got := either(either("", V8), HotSpot); got != HotSpot {
		t.Errorf("node then JVM: %q, want %q", got, HotSpot)
	}
	if got := either(HotSpot, V8); got != HotSpot {
		t.Errorf("JVM then node: %q, want %q", got, HotSpot)
	}
}

// TestCompilerNamesTheRuntime: a Go test process shows no runtime with a
// JIT until one of its threads takes HotSpot's compiler thread name.
func TestCompilerNamesTheRuntime(t *testing.T) {
	pid := int32(os.Getpid())
	if _, rt := Compiler(pid); rt != "" {
		t.Fatalf("a Go process shows runtime %q, want none", rt)
	}
	done := make(chan string)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		old := nameThread(t, "C1 CompilerThread0")
		_, rt := Compiler(pid)
		nameThread(t, old)
		done <- rt
	}()
	got := <-done
	if got != HotSpot {
		t.Errorf("with a thread named C1 CompilerThread0: runtime %q, want %q", got, HotSpot)
	}
}

// nameThread names the calling thread (locked to its goroutine) and
// returns its former name.
func nameThread(t *testing.T, name string) string {
	var old [16]byte
	if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&old[0])), 0, 0, 0); err != nil {
		t.Errorf("prctl: %v", err)
	}
	b := append([]byte(name), 0)
	if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0); err != nil {
		t.Errorf("prctl: %v", err)
	}
	return unix.ByteSliceToString(old[:])
}
