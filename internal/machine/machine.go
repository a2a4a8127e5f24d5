// Package machine reads the whole machine as the lab sees it: the CPUs
// this process may run on, the CPUs' times (/proc/stat), the load
// average (/proc/loadavg), the memory (/proc/meminfo) and the CPUs' model
// and frequency (/proc/cpuinfo), and it pins a running process tree to
// CPUs (PinTree). It is the one reader of those files; internal/monitor
// samples processes, this package the machine around them. Each file has
// a Parse function for its text, which the readers use and tests feed
// fixtures. It imports only leaves (cpulist, proctree).
package machine

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/showdownlab/showdown/internal/cpulist"
)

// startCPUs are the CPUs the process could run on when it started, read
// before main runs and so before the lab pins itself to the generator's
// CPUs.
var startCPUs = affinity()

// CPUs are the CPUs this process could run on when it started, ascending
// (sched_getaffinity): under `taskset -c 2-3` they are 2 and 3, where
// runtime.NumCPU says only how many. Where the kernel does not say, they
// are 0..runtime.NumCPU()-1. The slice is the caller's.
func CPUs() []int { return append([]int(nil), startCPUs...) }

func affinity() []int {
	var set unix.CPUSet
	var cpus []int
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		for c := range len(set) * 64 {
			if set.IsSet(c) {
				cpus = append(cpus, c)
			}
		}
	}
	if len(cpus) == 0 {
		for c := range runtime.NumCPU() {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// Times are one CPU's (or all CPUs') times since boot, in clock ticks.
type Times struct {
	// Busy is Total less idle and iowait.
	Busy, Total uint64
	// Steal is the time the hypervisor ran something else while this
	// CPU wanted to run (0 on bare metal).
	Steal uint64
}

// Stat is /proc/stat's CPU lines: all CPUs together and each CPU.
type Stat struct {
	All Times
	CPU map[int]Times
}

// ReadStat reads /proc/stat.
func ReadStat() (Stat, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return Stat{}, err
	}
	defer f.Close()
	return ParseStat(f)
}

// ParseStat reads /proc/stat's text: the "cpu" line and each "cpuN" line
// (user nice system idle iowait irq softirq steal ...). Lines it does not
// know are skipped; a CPU line with a field that is not a number is an
// error.
func ParseStat(r io.Reader) (Stat, error) {
	s := Stat{CPU: map[int]Times{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 9 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		var v [8]uint64
		for i := range v {
			var err error
			if v[i], err = strconv.ParseUint(fields[i+1], 10, 64); err != nil {
				return Stat{}, fmt.Errorf("/proc/stat: %s: field %d: %w", fields[0], i+1, err)
			}
		}
		t := Times{Total: v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7], Steal: v[7]}
		t.Busy = t.Total - v[3] - v[4]
		if fields[0] == "cpu" {
			s.All = t
		} else if n, err := strconv.Atoi(fields[0][3:]); err == nil {
			s.CPU[n] = t
		}
	}
	return s, sc.Err()
}

// BusyPercent is how busy cpus were between two stats, summed over them
// in percent of one CPU (two saturated CPUs: 200).
func BusyPercent(prev, now Stat, cpus []int) float64 {
	var pct float64
	for _, c := range cpus {
		a, b := prev.CPU[c], now.CPU[c]
		if b.Total > a.Total {
			pct += 100 * float64(b.Busy-a.Busy) / float64(b.Total-a.Total)
		}
	}
	return pct
}

// StealPercent is the share of all CPUs' time stolen between two stats,
// in percent (0 when no time passed).
func StealPercent(prev, now Stat) float64 {
	if now.All.Total <= prev.All.Total {
		return 0
	}
	return 100 * float64(now.All.Steal-prev.All.Steal) / float64(now.All.Total-prev.All.Total)
}

// Since says in one line how busy the machine has been since prev (a
// ReadStat reading): the load averages now, and the share of all CPUs'
// time busy and stolen in between. A failing test that runs real
// services prints it, so that a timing cause can be told from a bug.
func Since(prev Stat) string {
	now, err := ReadStat()
	if err != nil {
		return "machine: " + err.Error()
	}
	b, _ := os.ReadFile("/proc/loadavg")
	return Describe(prev, now, string(b))
}

// Describe is Since's line from two stats and /proc/loadavg's text.
func Describe(prev, now Stat, loadavg string) string {
	line := "machine:"
	if f := strings.Fields(loadavg); len(f) >= 3 {
		line += " load average " + strings.Join(f[:3], " ") + ";"
	}
	if now.All.Total <= prev.All.Total {
		return line + " no CPU time read"
	}
	ticks := float64(now.All.Total - prev.All.Total)
	busy := 100 * float64(now.All.Busy-prev.All.Busy) / ticks
	// /proc/stat counts in USER_HZ ticks, 100 a second on Linux.
	secs := ticks / 100 / float64(max(len(now.CPU), 1))
	return line + fmt.Sprintf(" %d CPUs %.0f%% busy and %.1f%% stolen over the last %.0f s", len(now.CPU), busy, StealPercent(prev, now), secs)
}

// Load1 reads the one-minute load average from /proc/loadavg.
func Load1() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	return ParseLoad1(string(b))
}

// ParseLoad1 reads the one-minute load average from /proc/loadavg's text.
func ParseLoad1(text string) (float64, error) {
	f := strings.Fields(text)
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/loadavg: empty")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/loadavg: %w", err)
	}
	return v, nil
}

// MemTotal reads the machine's memory in bytes from /proc/meminfo.
func MemTotal() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return ParseMemTotal(string(b))
}

// ParseMemTotal reads the MemTotal line of /proc/meminfo's text, in
// bytes.
func ParseMemTotal(text string) (int64, error) {
	for _, line := range strings.Split(text, "\n") {
		var kb int64
		if n, _ := fmt.Sscanf(line, "MemTotal: %d kB", &kb); n == 1 {
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("/proc/meminfo: no MemTotal line")
}

// CPUInfo is what /proc/cpuinfo says of the CPUs.
type CPUInfo struct {
	// Model is the first CPU's model name ("" when not given, as on
	// some ARM machines).
	Model string
	// MHz is each CPU's current frequency, where the machine says.
	MHz map[int]float64
}

// ReadCPUInfo reads /proc/cpuinfo.
func ReadCPUInfo() (CPUInfo, error) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return CPUInfo{}, err
	}
	return ParseCPUInfo(string(b)), nil
}

// ParseCPUInfo reads /proc/cpuinfo's text: a block per CPU, its
// "processor" number, "model name" and "cpu MHz".
func ParseCPUInfo(text string) CPUInfo {
	info := CPUInfo{MHz: map[int]float64{}}
	proc := -1
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "processor":
			if n, err := strconv.Atoi(v); err == nil {
				proc = n
			}
		case "model name":
			if info.Model == "" {
				info.Model = v
			}
		case "cpu MHz":
			if mhz, err := strconv.ParseFloat(v, 64); err == nil && proc >= 0 {
				info.MHz[proc] = mhz
			}
		}
	}
	return info
}

// MeanMHz is the mean current frequency of cpus (of every CPU when cpus
// is empty), 0 when the machine does not say.
func (c CPUInfo) MeanMHz(cpus []int) float64 {
	sum, n := 0.0, 0
	if len(cpus) == 0 {
		for _, mhz := range c.MHz {
			sum, n = sum+mhz, n+1
		}
	}
	for _, cpu := range cpus {
		if mhz, ok := c.MHz[cpu]; ok {
			sum, n = sum+mhz, n+1
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// CPUSet is the CPUs of a list in taskset's form ("0", "1-3", "0,2"), or
// every CPU the process could run on at its start (CPUs) when the list
// is empty or not one.
func CPUSet(list string) []int {
	if list != "" {
		if cpus, err := cpulist.Parse(list); err == nil {
			return cpus
		}
	}
	return CPUs()
}
