package results

import (
	"strconv"
	"time"

	"github.com/showdownlab/showdown/load"
)

// ResourceColumns are the columns WriteLevel joins to each row of a
// level's timeseries.csv, after the engine's own (load.TimeseriesHeader):
// the watched processes, then what could have disturbed them (other
// processes' CPU on the service's and on the generator's CPUs, in percent
// of one CPU; steal time in percent of all CPUs; the load average; the
// service CPUs' frequency).
var ResourceColumns = []string{
	"service_cpu_percent", "service_rss_kb", "service_threads", "service_fds", "service_ctx_switches",
	"db_cpu_percent", "db_rss_kb", "generator_cpu_percent",
	"other_cpu_service_cpus", "other_cpu_generator_cpus", "steal_percent", "load1", "cpu_mhz",
}

// ResourceSample is one reading of a process tree (the service, its
// database or the generator), as package monitor takes it every second:
// a mirror of monitor.Sample, field for field, which converts to it (the
// results model does not import the sampler; monitor.Sample says why).
type ResourceSample struct {
	// Time is when the reading was taken.
	Time time.Time
	// Interval is the time since the previous reading; zero for the first.
	Interval time.Duration
	// Processes counts the root and its live descendants.
	Processes int
	// CPUPercent is the CPU time (user+system) the tree used during the
	// interval, as a percentage of one core; zero for the first reading.
	CPUPercent float64
	// CPUSeconds is the user+system CPU time of the live processes of the
	// tree since they started.
	CPUSeconds float64
	// RSSBytes is the sum of the resident set sizes.
	RSSBytes uint64
	// Threads counts OS threads across the tree.
	Threads int
	// FDs counts open file descriptors across the tree.
	FDs int
	// CtxSwitches counts voluntary and involuntary context switches during
	// the interval.
	CtxSwitches uint64
}

// Samples are the per-second samples of one level: the service, its
// database (nil without one), the generator and the machine.
type Samples struct {
	Service, Database, Generator []ResourceSample
	Machine                      []MachineSample
	// OnServiceCPUs and OnGeneratorCPUs say which watched processes run on
	// those CPUs; the rest of the CPUs' busy time is other processes'.
	OnServiceCPUs, OnGeneratorCPUs Procs
}

// Procs names watched processes.
type Procs struct{ Service, Database, Generator bool }

// MachineSample is one second of the machine's state.
type MachineSample struct {
	Time     time.Time
	Interval time.Duration
	// ServiceCPUsBusy and GeneratorCPUsBusy are the busy time of those
	// CPUs, every process counted, in percent of one CPU.
	ServiceCPUsBusy, GeneratorCPUsBusy float64
	// StealPercent is the time the hypervisor gave other guests, in
	// percent of all CPUs.
	StealPercent float64
	Load1        float64
	// MHz is the service CPUs' mean frequency (0: not exposed).
	MHz float64
}

// WriteLevel writes a level's files into dir: the engine's summary.json,
// latency.hlog and service.hlog, and timeseries.csv with the resource
// samples joined by second as it is written. Seconds without a sample get
// empty cells.
func WriteLevel(dir string, res *load.Result, s Samples) error {
	start := res.Summary.Start
	si, di, gi := bySecond(s.Service, start), bySecond(s.Database, start), bySecond(s.Generator, start)
	mi := machineBySecond(s.Machine, start)
	pct := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	kb := func(b uint64) string { return strconv.FormatUint(b>>10, 10) }
	col := func(name string, idx map[int]ResourceSample, cell func(ResourceSample) string) load.Column {
		return load.Column{Name: name, Cell: func(sec int) string {
			if m, ok := idx[sec]; ok {
				return cell(m)
			}
			return ""
		}}
	}
	cols := []load.Column{
		col(ResourceColumns[0], si, func(m ResourceSample) string { return pct(m.CPUPercent) }),
		col(ResourceColumns[1], si, func(m ResourceSample) string { return kb(m.RSSBytes) }),
		col(ResourceColumns[2], si, func(m ResourceSample) string { return strconv.Itoa(m.Threads) }),
		col(ResourceColumns[3], si, func(m ResourceSample) string { return strconv.Itoa(m.FDs) }),
		col(ResourceColumns[4], si, func(m ResourceSample) string { return strconv.FormatUint(m.CtxSwitches, 10) }),
		col(ResourceColumns[5], di, func(m ResourceSample) string { return pct(m.CPUPercent) }),
		col(ResourceColumns[6], di, func(m ResourceSample) string { return kb(m.RSSBytes) }),
		col(ResourceColumns[7], gi, func(m ResourceSample) string { return pct(m.CPUPercent) }),
	}
	dist := s.disturbances(si, di, gi, mi)
	cell := func(name string, f func(Disturbance) float64, prec int) load.Column {
		return load.Column{Name: name, Cell: func(sec int) string {
			if d, ok := dist[sec]; ok {
				return strconv.FormatFloat(f(d), 'f', prec, 64)
			}
			return ""
		}}
	}
	cols = append(cols,
		cell(ResourceColumns[8], func(d Disturbance) float64 { return d.OtherServiceCPU }, 1),
		cell(ResourceColumns[9], func(d Disturbance) float64 { return d.OtherGeneratorCPU }, 1),
		cell(ResourceColumns[10], func(d Disturbance) float64 { return d.StealPercent }, 1),
		cell(ResourceColumns[11], func(d Disturbance) float64 { return d.Load1 }, 2),
		cell(ResourceColumns[12], func(d Disturbance) float64 { return d.MHz }, 0),
	)
	return res.WriteDir(dir, cols...)
}

// Disturbance is what could have disturbed one second of a level.
type Disturbance struct {
	OtherServiceCPU, OtherGeneratorCPU, StealPercent, Load1, MHz float64
}

// Thresholds above which a second counts as disturbed, and the share of a
// level's seconds above which the level is flagged.
const (
	DisturbedOtherCPU = 10.0 // percent of one CPU used by other processes on the service's or the generator's CPUs
	DisturbedSteal    = 5.0  // percent steal time
	DisturbedShare    = 0.2  // of a level's seconds
)

// Disturbed reports whether d exceeds a threshold.
func (d Disturbance) Disturbed() bool {
	return d.OtherServiceCPU >= DisturbedOtherCPU || d.OtherGeneratorCPU >= DisturbedOtherCPU || d.StealPercent >= DisturbedSteal
}

// Disturbances are the per-second disturbances of a level, by second.
func (s Samples) Disturbances(start time.Time) map[int]Disturbance {
	return s.disturbances(bySecond(s.Service, start), bySecond(s.Database, start), bySecond(s.Generator, start), machineBySecond(s.Machine, start))
}

func (s Samples) disturbances(si, di, gi map[int]ResourceSample, mi map[int]MachineSample) map[int]Disturbance {
	out := map[int]Disturbance{}
	own := func(p Procs, sec int) float64 {
		v := 0.0
		if p.Service {
			v += si[sec].CPUPercent
		}
		if p.Database {
			v += di[sec].CPUPercent
		}
		if p.Generator {
			v += gi[sec].CPUPercent
		}
		return v
	}
	for sec, m := range mi {
		out[sec] = Disturbance{
			OtherServiceCPU:   max(0, m.ServiceCPUsBusy-own(s.OnServiceCPUs, sec)),
			OtherGeneratorCPU: max(0, m.GeneratorCPUsBusy-own(s.OnGeneratorCPUs, sec)),
			StealPercent:      m.StealPercent, Load1: m.Load1, MHz: m.MHz,
		}
	}
	return out
}

func machineBySecond(ms []MachineSample, start time.Time) map[int]MachineSample {
	out := map[int]MachineSample{}
	for _, m := range ms {
		if m.Interval <= 0 {
			continue
		}
		if mid := m.Time.Add(-m.Interval / 2).Sub(start); mid >= 0 {
			out[int(mid/time.Second)] = m
		}
	}
	return out
}

// bySecond indexes samples by the second of measurement they describe. A
// sample covers the interval before it was taken, so it belongs to the
// second holding that interval's midpoint.
func bySecond(ss []ResourceSample, start time.Time) map[int]ResourceSample {
	m := map[int]ResourceSample{}
	for _, s := range ss {
		if s.Interval <= 0 {
			continue
		}
		if mid := s.Time.Add(-s.Interval / 2).Sub(start); mid >= 0 {
			m[int(mid/time.Second)] = s
		}
	}
	return m
}

// SummarizeResources sums up a process tree's samples over a level.
func SummarizeResources(ss []ResourceSample) Resources {
	var out Resources
	var cpuSum, secs float64
	var sw uint64
	for _, s := range ss {
		out.RSSPeakBytes = max(out.RSSPeakBytes, s.RSSBytes)
		out.ThreadsMax = max(out.ThreadsMax, s.Threads)
		out.FDsMax = max(out.FDsMax, s.FDs)
		if s.Interval > 0 {
			cpuSum += s.CPUPercent * s.Interval.Seconds()
			secs += s.Interval.Seconds()
			sw += s.CtxSwitches
			out.CPUMax = max(out.CPUMax, s.CPUPercent)
		}
	}
	if secs > 0 {
		out.CPUMean = cpuSum / secs
		out.CtxSwitchesPS = float64(sw) / secs
	}
	return out
}
