package cgroup

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/showdownlab/showdown/internal/monitor"
)

// ParseCPUList reads taskset's list form ("0", "1-3", "0,2") into the
// CPUs it names, in order; it is the one parser of CPU lists in showdown.
func ParseCPUList(s string) ([]int, error) {
	bad := fmt.Errorf("%q is not a CPU list (examples: 0, 1-3, 0,2)", s)
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, bad
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, bad
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// CheckCPUList validates a CPU list against a machine of n CPUs.
func CheckCPUList(s string, n int) error {
	cpus, err := ParseCPUList(s)
	if err != nil {
		return err
	}
	if top := slices.Max(cpus); top >= n {
		return fmt.Errorf("CPU %d does not exist", top)
	}
	return nil
}

// PinTree pins every thread of pid and of its descendants to cpus (a CPU
// list). Threads and processes created later inherit the mask from their
// creator, so a database pinned once its server is up stays pinned. A
// service is pinned from its first instruction by Wrap instead, which
// needs no walk of a tree that is still growing.
func PinTree(pid int, cpus string) error {
	if cpus == "" {
		return nil
	}
	list, err := ParseCPUList(cpus)
	if err != nil {
		return err
	}
	var set unix.CPUSet
	for _, c := range list {
		set.Set(c)
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
