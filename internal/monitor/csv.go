package monitor

import (
	"encoding/csv"
	"fmt"
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

// ReadCSV reads back the rows CSVWriter wrote. Each sample's Interval is
// the time since the row before it (zero for the first), as when sampled;
// a truncated last row (a crash while writing) ends the samples.
func ReadCSV(r io.Reader) ([]Sample, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(head) < len(CSVHeader) || head[0] != CSVHeader[0] {
		return nil, fmt.Errorf("line 1: header %v, want %v", head, CSVHeader)
	}
	var out []Sample
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil || len(row) < len(CSVHeader) {
			return out, nil // a torn last row
		}
		t, err := time.Parse(time.RFC3339Nano, row[0])
		if err != nil {
			return out, fmt.Errorf("line %d, time: %w", line, err)
		}
		s := Sample{Time: t}
		var errs [7]error
		s.Processes, errs[0] = strconv.Atoi(row[2])
		s.CPUPercent, errs[1] = strconv.ParseFloat(row[3], 64)
		s.CPUSeconds, errs[2] = strconv.ParseFloat(row[4], 64)
		var kb uint64
		kb, errs[3] = strconv.ParseUint(row[5], 10, 64)
		s.RSSBytes = kb * 1024
		s.Threads, errs[4] = strconv.Atoi(row[6])
		s.FDs, errs[5] = strconv.Atoi(row[7])
		s.CtxSwitches, errs[6] = strconv.ParseUint(row[8], 10, 64)
		for i, e := range errs {
			if e != nil {
				return out, fmt.Errorf("line %d, column %s: %w", line, CSVHeader[[7]int{2, 3, 4, 5, 6, 7, 8}[i]], e)
			}
		}
		if n := len(out); n > 0 {
			s.Interval = s.Time.Sub(out[n-1].Time)
		}
		out = append(out, s)
	}
}
