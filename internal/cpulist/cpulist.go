// Package cpulist reads CPU lists in taskset's form ("0", "1-3", "0,2"),
// as plans name the CPUs of the service, the generator and the database;
// the plan validates them and cgroup pins to them. It imports nothing of
// the project.
package cpulist

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Parse reads taskset's list form ("0", "1-3", "0,2") into the CPUs it
// names, in order; it is the one parser of CPU lists in showdown.
func Parse(s string) ([]int, error) {
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

// Check validates a CPU list against a machine of n CPUs.
func Check(s string, n int) error {
	cpus, err := Parse(s)
	if err != nil {
		return err
	}
	if top := slices.Max(cpus); top >= n {
		return fmt.Errorf("CPU %d does not exist", top)
	}
	return nil
}
