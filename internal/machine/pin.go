package machine

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/showdownlab/showdown/internal/cpulist"
	"github.com/showdownlab/showdown/internal/proctree"
)

// PinTree pins every thread of pid and of its descendants to cpus (a CPU
// list). Threads and processes created later inherit the mask from their
// creator, so a database pinned once its server is up stays pinned. A
// service is pinned from its first instruction by Wrap instead, which
// needs no walk of a tree that is still growing.
func PinTree(pid int, cpus string) error {
	if cpus == "" {
		return nil
	}
	list, err := cpulist.Parse(cpus)
	if err != nil {
		return err
	}
	var set unix.CPUSet
	for _, c := range list {
		set.Set(c)
	}
	pids := append([]int32{int32(pid)}, proctree.Descendants(int32(pid))...)
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
