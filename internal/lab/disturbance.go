package lab

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/cpulist"
	"github.com/showdownlab/showdown/internal/results"
)

// cpuTimes are one CPU's (or all CPUs') times from /proc/stat, in ticks.
type cpuTimes struct{ busy, total, steal uint64 }

// readProcStat reads the "cpu" line (index -1) and each "cpuN" line.
func readProcStat() (all cpuTimes, per map[int]cpuTimes, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return all, nil, err
	}
	defer f.Close()
	per = map[int]cpuTimes{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 9 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		var v [8]uint64
		for i := range v {
			v[i], _ = strconv.ParseUint(fields[i+1], 10, 64)
		}
		// user nice system idle iowait irq softirq steal
		t := cpuTimes{total: v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7], steal: v[7]}
		t.busy = t.total - v[3] - v[4]
		if fields[0] == "cpu" {
			all = t
		} else if n, err := strconv.Atoi(fields[0][3:]); err == nil {
			per[n] = t
		}
	}
	return all, per, sc.Err()
}

// cpuMHz is the mean current frequency of cpus from /proc/cpuinfo, 0 when
// the machine does not say.
func cpuMHz(cpus []int) float64 {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	want := map[int]bool{}
	for _, c := range cpus {
		want[c] = true
	}
	proc, sum, n := -1, 0.0, 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "processor":
			proc, _ = strconv.Atoi(strings.TrimSpace(v))
		case "cpu MHz":
			if mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && (len(want) == 0 || want[proc]) {
				sum, n = sum+mhz, n+1
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// cpuSet is a placement's CPU list, or every CPU when it is empty.
func cpuSet(list string) []int {
	if list != "" {
		if cpus, err := cpulist.Parse(list); err == nil {
			return cpus
		}
	}
	all := make([]int, runtime.NumCPU())
	for i := range all {
		all[i] = i
	}
	return all
}

// machineSamples collects the machine's per-second state in the
// background: how busy the service's and the generator's CPUs were (all
// processes), steal time, the load average and the CPU frequency.
type machineSamples struct {
	done chan struct{}
	list []results.MachineSample
}

func sampleMachine(ctx context.Context, serviceCPUs, generatorCPUs []int) *machineSamples {
	m := &machineSamples{done: make(chan struct{})}
	go func() {
		defer close(m.done)
		prevAll, prevPer, err := readProcStat()
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
				all, per, err := readProcStat()
				if err != nil {
					return
				}
				s := results.MachineSample{Time: now, Interval: now.Sub(prevT),
					ServiceCPUsBusy:   busyPercent(prevPer, per, serviceCPUs),
					GeneratorCPUsBusy: busyPercent(prevPer, per, generatorCPUs),
					Load1:             load1(), MHz: cpuMHz(serviceCPUs)}
				if all.total > prevAll.total {
					s.StealPercent = 100 * float64(all.steal-prevAll.steal) / float64(all.total-prevAll.total)
				}
				m.list = append(m.list, s)
				prevAll, prevPer, prevT = all, per, now
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

// busyPercent is how busy cpus were between two readings of /proc/stat,
// every process counted, in percent of one CPU (summed over cpus).
func busyPercent(before, after map[int]cpuTimes, cpus []int) float64 {
	var pct float64
	for _, c := range cpus {
		a, b := before[c], after[c]
		if b.total > a.total {
			pct += 100 * float64(b.busy-a.busy) / float64(b.total-a.total)
		}
	}
	return pct
}
