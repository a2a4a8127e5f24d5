//go:build linux

package load

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestLockPreciseKeepsChildren: a child started with Pdeathsig from the
// thread an engine later locks (as the lab starts its services) must
// outlive the engine. Were the thread to end with the engine's goroutine,
// the kernel would kill the child.
func TestLockPreciseKeepsChildren(t *testing.T) {
	// Three times: a goroutine that exits locked on the main thread
	// wedges it rather than ending it, so the first try may prove nothing.
	for range 3 {
		keepsChild(t)
	}
}

func keepsChild(t *testing.T) {
	started := make(chan *exec.Cmd, 1)
	go func() {
		// The child and the engine on one thread, as can happen by chance.
		runtime.LockOSThread()
		cmd := exec.Command("sleep", "30")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			started <- nil
			return
		}
		unlock := lockPrecise()
		unlock()
		runtime.UnlockOSThread()
		started <- cmd
	}()
	cmd := <-started
	if cmd == nil {
		t.Skip("cannot start sleep")
	}
	defer cmd.Process.Kill()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Give the runtime time to end the goroutine's thread, were it to.
	runtime.GC()
	select {
	case err := <-exited:
		t.Fatalf("the child died when the engine's goroutine ended: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
}
