package results

import (
	"strconv"
	"time"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/load"
)

// ResourceColumns are the columns WriteLevel joins to each row of a
// level's timeseries.csv, after the engine's own (load.TimeseriesHeader).
var ResourceColumns = []string{
	"service_cpu_percent", "service_rss_kb", "service_threads", "service_fds", "service_ctx_switches",
	"db_cpu_percent", "db_rss_kb", "generator_cpu_percent",
}

// Samples are the per-second resource samples of one level: the service,
// its database (nil without one) and the generator.
type Samples struct {
	Service, Database, Generator []monitor.Sample
}

// WriteLevel writes a level's files into dir: the engine's summary.json,
// latency.hlog and service.hlog, and timeseries.csv with the resource
// samples joined by second as it is written. Seconds without a sample get
// empty cells.
func WriteLevel(dir string, res *load.Result, s Samples) error {
	start := res.Summary.Start
	si, di, gi := bySecond(s.Service, start), bySecond(s.Database, start), bySecond(s.Generator, start)
	pct := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	kb := func(b uint64) string { return strconv.FormatUint(b>>10, 10) }
	col := func(name string, idx map[int]monitor.Sample, cell func(monitor.Sample) string) load.Column {
		return load.Column{Name: name, Cell: func(sec int) string {
			if m, ok := idx[sec]; ok {
				return cell(m)
			}
			return ""
		}}
	}
	cols := []load.Column{
		col(ResourceColumns[0], si, func(m monitor.Sample) string { return pct(m.CPUPercent) }),
		col(ResourceColumns[1], si, func(m monitor.Sample) string { return kb(m.RSSBytes) }),
		col(ResourceColumns[2], si, func(m monitor.Sample) string { return strconv.Itoa(m.Threads) }),
		col(ResourceColumns[3], si, func(m monitor.Sample) string { return strconv.Itoa(m.FDs) }),
		col(ResourceColumns[4], si, func(m monitor.Sample) string { return strconv.FormatUint(m.CtxSwitches, 10) }),
		col(ResourceColumns[5], di, func(m monitor.Sample) string { return pct(m.CPUPercent) }),
		col(ResourceColumns[6], di, func(m monitor.Sample) string { return kb(m.RSSBytes) }),
		col(ResourceColumns[7], gi, func(m monitor.Sample) string { return pct(m.CPUPercent) }),
	}
	return res.WriteDir(dir, cols...)
}

// bySecond indexes samples by the second of measurement they describe. A
// sample covers the interval before it was taken, so it belongs to the
// second holding that interval's midpoint.
func bySecond(ss []monitor.Sample, start time.Time) map[int]monitor.Sample {
	m := map[int]monitor.Sample{}
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

// Summarize sums up a process tree's samples over a level.
func Summarize(ss []monitor.Sample) Resources {
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
