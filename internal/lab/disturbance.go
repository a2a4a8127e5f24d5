package lab

import (
	"context"
	"time"

	"github.com/showdownlab/showdown/internal/machine"
	"github.com/showdownlab/showdown/internal/results"
)

// cpuSet is a placement's CPU list, or every CPU the process could run
// on at its start when it is empty (machine.CPUSet).
func cpuSet(list string) []int { return machine.CPUSet(list) }

// machineSamples collects the machine's per-second state in the
// background: how busy the service's and the generator's CPUs were (all
// processes), steal time, the load average and the CPU frequency.
type machineSamples struct {
	done chan struct{}
	list []results.MachineSample
}

func sampleMachine(ctx context.Context, serviceCPUs, genCPUs []int) *machineSamples {
	m := &machineSamples{done: make(chan struct{})}
	go func() {
		defer close(m.done)
		prev, err := machine.ReadStat()
		if err != nil {
			return
		}
		prevT := time.Now()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				st, err := machine.ReadStat()
				if err != nil {
					return
				}
				load1, _ := machine.Load1()
				info, _ := machine.ReadCPUInfo()
				m.list = append(m.list, results.MachineSample{Time: now, Interval: now.Sub(prevT),
					ServiceCPUsBusy:   machine.BusyPercent(prev, st, serviceCPUs),
					GeneratorCPUsBusy: machine.BusyPercent(prev, st, genCPUs),
					StealPercent:      machine.StealPercent(prev, st),
					Load1:             load1, MHz: info.MeanMHz(serviceCPUs)})
				prev, prevT = st, now
			}
		}
	}()
	return m
}

// wait returns the samples once the sampler has stopped.
func (m *machineSamples) wait() []results.MachineSample {
	<-m.done
	return m.list
}
