package lab

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/load"
)

// ResourceColumns are the columns writeResources appends to each row of a
// level's timeseries.csv, after the engine's own (load.TimeseriesHeader).
var ResourceColumns = []string{
	"service_cpu_percent", "service_rss_kb", "service_threads", "service_fds", "service_ctx_switches",
	"db_cpu_percent", "db_rss_kb", "generator_cpu_percent",
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

// writeResources joins the per-second samples of the service, its
// database and the generator to the engine's timeseries.csv in dir, by
// second. Seconds without a sample get empty cells.
func writeResources(dir string, start time.Time, svc, dbs, gen []monitor.Sample) error {
	path := filepath.Join(dir, load.TimeseriesFile)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) == 0 {
		return err
	}
	si, di, gi := bySecond(svc, start), bySecond(dbs, start), bySecond(gen, start)
	rows[0] = append(rows[0], ResourceColumns...)
	for i := 1; i < len(rows); i++ {
		sec, _ := strconv.Atoi(rows[i][0])
		cells := make([]string, len(ResourceColumns))
		if s, ok := si[sec]; ok {
			cells[0] = strconv.FormatFloat(s.CPUPercent, 'f', 1, 64)
			cells[1] = strconv.FormatUint(s.RSSBytes>>10, 10)
			cells[2] = strconv.Itoa(s.Threads)
			cells[3] = strconv.Itoa(s.FDs)
			cells[4] = strconv.FormatUint(s.CtxSwitches, 10)
		}
		if s, ok := di[sec]; ok {
			cells[5] = strconv.FormatFloat(s.CPUPercent, 'f', 1, 64)
			cells[6] = strconv.FormatUint(s.RSSBytes>>10, 10)
		}
		if s, ok := gi[sec]; ok {
			cells[7] = strconv.FormatFloat(s.CPUPercent, 'f', 1, 64)
		}
		rows[i] = append(rows[i], cells...)
	}
	tmp := path + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := csv.NewWriter(out)
	if err := w.WriteAll(rows); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
