package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// With CGROUP_ROLE set, the test binary plays a process under limits.
func TestMain(m *testing.M) {
	switch os.Getenv("CGROUP_ROLE") {
	case "burn":
		// Spin for one second of wall time, then print the CPU seconds used.
		x := 0
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
			for i := 0; i < 1e5; i++ {
				x += i
			}
		}
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		fmt.Println(time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds())
		return
	case "alloc":
		mem := make([]byte, 300<<20)
		for i := 0; i < len(mem); i += 4096 {
			mem[i] = 1
		}
		fmt.Println("survived", len(mem))
		return
	case "affinity":
		b, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "Cpus_allowed_list:") {
				fmt.Println(strings.TrimSpace(strings.TrimPrefix(line, "Cpus_allowed_list:")))
			}
		}
		return
	}
	os.Exit(m.Run())
}

// runRole runs the test binary in role under g and returns its stdout.
func runRole(t *testing.T, g *Group, role string) (string, error) {
	t.Helper()
	argv := g.Wrap([]string{os.Args[0]})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "CGROUP_ROLE="+role)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// newOrSkip creates a group, skipping the test where this machine cannot
// apply the limits at all (not root, or a v2 group that cannot delegate).
func newOrSkip(t *testing.T, l Limits) *Group {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
	g, err := New(t.Name(), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Errorf("Remove: %v", err)
		}
	})
	if (l.CPUQuota > 0 && g.Applied().CPUQuota == 0) || (l.MemoryBytes > 0 && g.Applied().MemoryBytes == 0) {
		t.Skipf("limits cannot be applied here: %v", g.Applied().Notes)
	}
	return g
}

func TestCPUQuotaCapsUsage(t *testing.T) {
	g := newOrSkip(t, Limits{CPUQuota: 0.2})
	out, err := runRole(t, g, "burn")
	if err != nil {
		t.Fatalf("burn: %v", err)
	}
	used, err := strconv.ParseFloat(out, 64)
	if err != nil {
		t.Fatalf("burn printed %q", out)
	}
	// One second of spinning under a 0.2-core quota gets about 0.2 s of
	// CPU; unlimited it would get close to 1 s. A busy machine can only
	// lower the figure, so an upper bound is safe.
	if used > 0.5 {
		t.Errorf("used %.2fs of CPU in 1s under a 0.2-core quota; the quota did not hold (applied: %+v)", used, g.Applied())
	}
}

func TestMemoryLimitKillsTree(t *testing.T) {
	g := newOrSkip(t, Limits{MemoryBytes: 64 << 20})
	out, err := runRole(t, g, "alloc")
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("allocating 300 MiB under a 64 MiB limit: err %v, output %q; want the process killed", err, out)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("process ended with %v, want killed by SIGKILL (the OOM killer)", err)
	}
}

func TestPinning(t *testing.T) {
	g, err := New(t.Name(), Limits{CPUs: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	if g.Applied().CPUs == "" {
		t.Skipf("pinning not available: %v", g.Applied().Notes)
	}
	out, err := runRole(t, g, "affinity")
	if err != nil {
		t.Fatal(err)
	}
	if out != "0" {
		t.Errorf("Cpus_allowed_list = %q, want \"0\"", out)
	}
	if g.Applied().Mechanism != "taskset" {
		t.Errorf("Mechanism = %q, want taskset", g.Applied().Mechanism)
	}
}

func TestRemoveLeavesNothing(t *testing.T) {
	g := newOrSkip(t, Limits{CPUQuota: 1, MemoryBytes: 1 << 30})
	dirs := append([]string(nil), g.dirs...)
	if len(dirs) == 0 {
		t.Fatal("no directories created")
	}
	if _, err := runRole(t, g, "affinity"); err != nil {
		t.Fatal(err)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Remove (stat: %v)", d, err)
		}
	}
}

func TestNoLimitsWrapsNothing(t *testing.T) {
	g, err := New("plain", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{"/bin/true", "x"}
	if got := g.Wrap(argv); strings.Join(got, " ") != "/bin/true x" {
		t.Errorf("Wrap = %q, want the command unchanged", got)
	}
	if g.Applied().Mechanism != "none" {
		t.Errorf("Mechanism = %q, want none", g.Applied().Mechanism)
	}
}

func TestNegativeLimitRejected(t *testing.T) {
	if _, err := New("bad", Limits{CPUQuota: -1}); err == nil {
		t.Error("New accepted a negative CPU quota")
	}
}
