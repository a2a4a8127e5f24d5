package machine

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPinTaskGone: a thread that has ended since it was listed needs no
// pinning, and is not an error; a live one is pinned; a mask the kernel
// refuses is still an error.
func TestPinTaskGone(t *testing.T) {
	var here unix.CPUSet
	if err := unix.SchedGetaffinity(0, &here); err != nil {
		t.Skipf("no affinity here: %v", err)
	}
	// A process that has ended and been reaped: its pid names no task.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	gone := cmd.Process.Pid
	if err := unix.SchedSetaffinity(gone, &here); err != unix.ESRCH {
		t.Skipf("pid %d was reused (%v): nothing to test", gone, err)
	}
	if err := pinTask(gone, &here); err != nil {
		t.Errorf("pinTask of an ended task: %v, want nil", err)
	}
	if err := pinTask(unix.Gettid(), &here); err != nil {
		t.Errorf("pinTask of this thread to its own CPUs: %v", err)
	}
	var none unix.CPUSet
	if err := pinTask(unix.Gettid(), &none); err == nil {
		t.Error("pinTask to no CPU at all: nil, want the kernel's refusal")
	}
}
