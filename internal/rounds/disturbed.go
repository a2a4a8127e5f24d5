package rounds

import (
	"fmt"
	"slices"

	"github.com/showdownlab/showdown/internal/results"
)

// The limits past which a round's own record says the machine disturbed
// it. They are read from what the round measured beside its figure, never
// from the figure or its ratio, so the rule cannot favour an arm.
const (
	// StealMax is the hypervisor's steal time over the round, in percent
	// of all CPUs.
	StealMax = 5.0
	// OtherCPUMax is the busy time of other processes on the service's
	// CPUs, or on the generator's where they run no database, in percent
	// of one CPU.
	OtherCPUMax = 25.0
	// ServiceShareFloor is the share of its usual CPU (the median of its
	// rounds in the start) under which a loaded service was starved:
	// such a round reads a fraction of the others' throughput
	// (bench/README.md, "Where the constants come from").
	ServiceShareFloor = 0.8
	// MinTypicalRounds is how many rounds of an arm in a start give its
	// usual CPU; fewer, and the share is not judged.
	MinTypicalRounds = 3
	// BusyTypical is the usual CPU, in percent of one CPU, under which a
	// service is not CPU-bound when loaded (it waits on its database, or
	// the load is light), so its share says nothing of the machine.
	BusyTypical = 50.0
	// MaxLeftOut is the share of an arm's rounds in a start past which
	// rounds judged disturbed are kept after all: the machine was this
	// busy throughout, not disturbed now and then, and leaving most of
	// the rounds out would leave nothing to compare. The verdict says so.
	MaxLeftOut = 1.0 / 3
)

// Disturbed says how the machine disturbed an arm's round, from the
// round's own record: steal time, other processes busy on the service's
// CPUs (or the generator's, when withDatabase is false: a database runs
// there otherwise), or the service getting under ServiceShareFloor of
// typical, its usual CPU in percent of one CPU (0: not known). "" when
// nothing says so. A figure below zero was not measured.
func Disturbed(a results.ArmRound, typical float64, withDatabase bool) string {
	switch {
	case a.StealPercent > StealMax:
		return fmt.Sprintf("the hypervisor stole %.0f%% of the machine's CPU time", a.StealPercent)
	case a.OtherServiceCPU > OtherCPUMax:
		return fmt.Sprintf("other processes took %.0f%% of a CPU on the service's CPUs", a.OtherServiceCPU)
	case !withDatabase && a.OtherGeneratorCPU > OtherCPUMax:
		return fmt.Sprintf("other processes took %.0f%% of a CPU on the generator's CPUs", a.OtherGeneratorCPU)
	case typical >= BusyTypical && a.ServiceCPU > 0 && a.ServiceCPU < ServiceShareFloor*typical:
		return fmt.Sprintf("the service got %.0f%% of a CPU against its usual %.0f%%", a.ServiceCPU, typical)
	}
	return ""
}

// TypicalCPU is arm's usual service CPU in start: the median of its
// rounds' that were not disturbed otherwise, 0 with fewer than
// MinTypicalRounds of them.
func TypicalCPU(c *results.Comparison, arm string, start int) float64 {
	var v []float64
	for _, r := range c.Rounds {
		if r.Start != start {
			continue
		}
		for _, a := range r.Arms {
			if a.Arm == arm && a.ServiceCPU > 0 && a.Misbehaved == "" && a.Disturbed == "" {
				v = append(v, a.ServiceCPU)
			}
		}
	}
	if len(v) < MinTypicalRounds {
		return 0
	}
	slices.Sort(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}
