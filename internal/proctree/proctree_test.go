package proctree

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

// A shell that starts a sleep is found with its child, and the child's
// pid is among the shell's descendants.
func TestDescendants(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var kids []int32
	for range 200 {
		if kids = Descendants(int32(os.Getpid())); len(kids) >= 2 {
			break
		}
		exec.Command("sleep", "0.01").Run()
	}
	if !slices.Contains(kids, int32(cmd.Process.Pid)) {
		t.Fatalf("descendants %v lack the shell %d", kids, cmd.Process.Pid)
	}
	if sh := Descendants(int32(cmd.Process.Pid)); len(sh) != 1 {
		t.Errorf("the shell's descendants are %v, want its one sleep", sh)
	}
}

// readPPID skips a command name holding spaces and parentheses.
func TestReadPPID(t *testing.T) {
	p := t.TempDir() + "/stat"
	if err := os.WriteFile(p, []byte("42 (a) b (c) S 7 42 42 0"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := readPPID(p, make([]byte, 512)); !ok || got != 7 {
		t.Errorf("readPPID = %d, %v; want 7", got, ok)
	}
}
