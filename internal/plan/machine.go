package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/showdownlab/showdown/internal/cpulist"
)

// Machine is the CPUs a plan is resolved and validated for: the machine
// it runs on, whose CPUs the caller reads (the CPUs the process may run
// on, so a lab under `taskset -c 2-3` has CPUs 2 and 3), or another one
// (showdown run --check --cpus 16). The plan's default placement, its
// cores' placement and the check of its CPU lists are derived from it.
type Machine struct {
	// CPUs are the CPU numbers, ascending, without repeats.
	CPUs []int
}

// MachineOf is a machine of n CPUs numbered 0..n-1.
func MachineOf(n int) Machine {
	m := Machine{CPUs: make([]int, max(n, 0))}
	for i := range m.CPUs {
		m.CPUs[i] = i
	}
	return m
}

// ParseMachine reads a machine's CPUs as showdown run --cpus takes them:
// a count ("16" is CPUs 0-15) or a CPU list in taskset's form ("0-15",
// "2,3"); a single CPU is the list "5-5", since "5" is a count.
func ParseMachine(s string) (Machine, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 4096 {
			return Machine{}, fmt.Errorf("%d CPUs: a machine has 1 to 4096", n)
		}
		return MachineOf(n), nil
	}
	cpus, err := cpulist.Parse(s)
	if err != nil {
		return Machine{}, fmt.Errorf("%q is neither a CPU count nor a CPU list", s)
	}
	slices.Sort(cpus)
	return Machine{CPUs: slices.Compact(cpus)}, nil
}

// String is the machine's CPUs in taskset's form ("0-15").
func (m Machine) String() string { return cpulist.Format(m.CPUs) }

// has reports whether the machine has CPU c.
func (m Machine) has(c int) bool { return slices.Contains(m.CPUs, c) }

// span is the CPU list of the machine's CPUs from index lo to hi.
func (m Machine) span(lo, hi int) string { return cpulist.Format(m.CPUs[lo : hi+1]) }
