// Package cpulist reads CPU lists in taskset's form: "0", "1-3", "0,2",
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

// Check validates a CPU list against a machine's CPUs.
func Check(s string, machine []int) error {
	cpus, err := Parse(s)
	if err != nil {
		return err
	}
	var missing []int
	for _, c := range cpus {
		if !slices.Contains(machine, c) {
			missing = append(missing, c)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("CPU %d does not exist", missing[0])
	}
	slices.Sort(missing)
	return fmt.Errorf("CPUs %s do not exist", Format(slices.Compact(missing)))
}

// Format writes CPUs in taskset's list form, runs as ranges: 0,1,2,5 is
// "0-2,5". It is Parse's inverse for an ascending list without repeats.
func Format(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
