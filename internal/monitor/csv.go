package monitor

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"
)

// CSVHeader names the columns CSVWriter writes, in order.
var CSVHeader = []string{"time", "elapsed_s", "processes", "cpu_percent", "cpu_seconds", "rss_kb", "threads", "fds", "ctx_switches"}

// CSVWriter writes samples as CSV rows, one per sample, under CSVHeader.
// elapsed_s counts from the first sample written.
type CSVWriter struct {
	w     *csv.Writer
	start time.Time
	row   []string
}

// NewCSVWriter writes the header to w and returns a writer for rows.
func NewCSVWriter(w io.Writer) (*CSVWriter, error) {
	cw := &CSVWriter{w: csv.NewWriter(w), row: make([]string, len(CSVHeader))}
	if err := cw.w.Write(CSVHeader); err != nil {
		return nil, err
	}
	cw.w.Flush()
	return cw, cw.w.Error()
}

// Write appends one sample and flushes it, so a reader (or a crash) sees
// every complete second.
func (cw *CSVWriter) Write(s Sample) error {
	if cw.start.IsZero() {
		cw.start = s.Time
	}
	r := cw.row
	r[0] = s.Time.UTC().Format(time.RFC3339Nano)
	r[1] = strconv.FormatFloat(s.Time.Sub(cw.start).Seconds(), 'f', 3, 64)
	r[2] = strconv.Itoa(s.Processes)
	r[3] = strconv.FormatFloat(s.CPUPercent, 'f', 1, 64)
	r[4] = strconv.FormatFloat(s.CPUSeconds, 'f', 2, 64)
	r[5] = strconv.FormatUint(s.RSSBytes/1024, 10)
	r[6] = strconv.Itoa(s.Threads)
	r[7] = strconv.Itoa(s.FDs)
	r[8] = strconv.FormatUint(s.CtxSwitches, 10)
	if err := cw.w.Write(r); err != nil {
		return err
	}
	cw.w.Flush()
	return cw.w.Error()
}
