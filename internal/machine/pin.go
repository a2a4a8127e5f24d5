package machine

import (
	"errors"
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
// needs no walk of a tree that is still growing. A thread that ends
// between the walk and its pinning is not an error: there is nothing
// left to pin.
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
			if err := pinTask(tid, &set); err != nil && firstErr == nil {
				firstErr = fmt.Errorf("pin %d to CPUs %s: %w", tid, cpus, err)
			}
		}
	}
	return firstErr
}

// pinTask sets one thread's CPU mask; a thread gone since it was listed
// (ESRCH) needs none. The generator's runtime starts and ends threads
// while the lab pins it, and one such thread once made a run warn that
// the generator was not pinned.
func pinTask(tid int, set *unix.CPUSet) error {
	err := unix.SchedSetaffinity(tid, set)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}
