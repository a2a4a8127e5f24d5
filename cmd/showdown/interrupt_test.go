package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/proctree"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load/atomicfile"
)

// asCLI makes the test binary run as the showdown command itself (main's
// code, real signals), for tests that interrupt a real process.
const asCLI = "SHOWDOWN_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		st, stop := newState()
		code := run(st, os.Args[1:])
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// syncBuffer is a bytes.Buffer safe for a process's output and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRun starts `showdown run` on a one-minute bank level of go-stdlib
// as a real process and returns once its first level is under way, with
// every process it started by then.
func startRun(t *testing.T) (*exec.Cmd, *syncBuffer, string, []int32) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	planPath := filepath.Join(dir, "interrupt.yaml")
	os.WriteFile(planPath, []byte(`name: interrupt
implementations: [go-stdlib]
workloads: [bank]
verify: quick
load:
  levels: [2, 4]
  duration: 60s
  warmup: 0s
placement: {}
`), 0o644)
	resultsDir := filepath.Join(dir, "results")
	cmd := exec.Command(os.Args[0], "run", "--results", resultsDir, planPath)
	cmd.Env = append(os.Environ(), asCLI+"=1", "SHOWDOWN_ROOT="+root)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	deadline := time.Now().Add(5 * time.Minute) // a first build of go-stdlib included
	for !strings.Contains(out.String(), "2 users for") {
		if time.Now().After(deadline) {
			t.Fatalf("the first level never started:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	procs := proctree.Descendants(int32(cmd.Process.Pid))
	if len(procs) < 2 {
		t.Fatalf("%d processes under the run, want at least PostgreSQL and the service", len(procs))
	}
	m, _ := filepath.Glob(filepath.Join(resultsDir, "*"))
	if len(m) != 1 {
		t.Fatalf("results folders %v, want one", m)
	}
	return cmd, out, m[0], procs
}

// waitExit waits for cmd at most d and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration, out *syncBuffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("showdown run did not exit within %v of the interrupt:\n%s", d, out)
	}
	return -1
}

// gone fails the test for every process of procs still alive (a zombie
// waiting for its new parent counts as gone).
func gone(t *testing.T, procs []int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range procs {
		for {
			stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(int(pid)), "stat"))
			if err != nil {
				break
			}
			if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				break
			}
			if time.Now().After(deadline) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(int(pid)), "cmdline"))
				t.Errorf("process %d left running: %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
				syscall.Kill(int(pid), syscall.SIGKILL)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestRunInterrupted sends SIGINT to a real `showdown run` during its
// first level: it stops the service and PostgreSQL, marks the level
// interrupted (not ok), audits without a false violation, writes
// run.json and the report whole, and exits 130.
func TestRunInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds go-stdlib, starts PostgreSQL and runs a plan")
	}
	cmd, out, dir, procs := startRun(t)
	cmd.Process.Signal(os.Interrupt)
	if code := waitExit(t, cmd, 90*time.Second, out); code != exitInterrupted {
		t.Errorf("exit code %d, want %d\n%s", code, exitInterrupted, out)
	}
	gone(t, procs)
	if strings.Contains(out.String(), "INVARIANT FAILED") {
		t.Errorf("a false invariant failure after the interrupt:\n%s", out)
	}
	rec, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Interrupted || len(rec.Services) != 1 {
		t.Fatalf("run.json: interrupted %v, %d service runs", rec.Interrupted, len(rec.Services))
	}
	sr := rec.Services[0]
	if sr.Status != results.Interrupted || sr.Levels[0].Status != results.Interrupted || sr.Levels[1].Status != results.Skipped {
		t.Errorf("statuses: run %s, levels %s and %s; want interrupted, interrupted, skipped", sr.Status, sr.Levels[0].Status, sr.Levels[1].Status)
	}
	if l := sr.Levels[0]; l.Total.Samples == 0 || len(l.Violations) != 0 {
		t.Errorf("interrupted level: %d samples, violations %+v; want samples and none", l.Total.Samples, l.Violations)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !strings.Contains(string(md), "INTERRUPTED: go-stdlib bank at 2 users") {
		t.Errorf("summary.md (%v) does not show the interrupted level:\n%s", err, md)
	}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && atomicfile.IsTemp(d.Name()) {
			t.Errorf("a temporary file was left: %s", path)
		}
		return nil
	})
}

// TestRunInterruptedTwice: a second SIGINT exits at once, with 130, and
// kills what the run started instead of waiting for it.
func TestRunInterruptedTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds go-stdlib, starts PostgreSQL and runs a plan")
	}
	cmd, out, _, procs := startRun(t)
	cmd.Process.Signal(os.Interrupt)
	// Two signals sent at once may merge into one (a pending signal is
	// not queued twice): the second goes once the first was taken, while
	// the run is still stopping the level, the service and PostgreSQL.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "interrupt again") {
		if time.Now().After(deadline) {
			t.Fatalf("the first interrupt was not taken:\n%s", out)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	if code := waitExit(t, cmd, 15*time.Second, out); code != exitInterrupted {
		t.Errorf("exit code %d, want %d\n%s", code, exitInterrupted, out)
	}
	if !strings.Contains(out.String(), "interrupted twice") {
		t.Errorf("no word of the forced exit:\n%s", out)
	}
	gone(t, procs)
	// The private database folder stays until the next start of a
	// database removes it (its owner is gone); this test removes its own.
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "showdown-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner"))
		if err == nil && strings.HasPrefix(string(b), strconv.Itoa(cmd.Process.Pid)+" ") {
			os.RemoveAll(d)
		}
	}
}
