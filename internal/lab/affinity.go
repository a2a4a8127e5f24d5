package lab

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/showdownlab/showdown/internal/monitor"
)

// parseCPUList turns taskset list syntax ("0", "1-3", "0,2") into a set.
func parseCPUList(s string) (unix.CPUSet, error) {
	var set unix.CPUSet
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return set, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return set, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			set.Set(c)
		}
	}
	return set, nil
}

// pinTree pins every thread of pid and of its descendants to cpus. Threads
// and processes created later inherit the mask from their creator, so a
// database pinned once its server is up stays pinned.
func pinTree(pid int, cpus string) error {
	if cpus == "" {
		return nil
	}
	set, err := parseCPUList(cpus)
	if err != nil {
		return err
	}
	pids := append([]int32{int32(pid)}, monitor.Descendants(int32(pid))...)
	var firstErr error
	for _, p := range pids {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		if err != nil {
			continue
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && firstErr == nil {
				firstErr = fmt.Errorf("pin %d to CPUs %s: %w", tid, cpus, err)
			}
		}
	}
	return firstErr
}
