package results

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/load/atomicfile"
)

// WriteRun stores r as run.json in dir, atomically.
func WriteRun(dir string, r *Run) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, RunFile), append(b, '\n'), 0o644)
}

// ReadRun reads run.json from a results folder.
func ReadRun(dir string) (*Run, error) {
	path := filepath.Join(dir, RunFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Level is what one level of one trial left besides its aggregate row:
// the per-second series, the latency histogram and the per-step rows.
type Level struct {
	// Series is the level's timeseries.csv, by column name.
	Series *Series
	// Latency is the level's total latency histogram (nanoseconds), merged
	// over its intervals; nil when the folder has no latency.hlog.
	Latency *hdrhistogram.Histogram
	// Labels are the per-step rows of the level.
	Labels []load.LabelStats
	// Err says why the level could not be read, if it could not.
	Err error
}

// ReadLevel reads a level's folder (a showdown run's level or a `showdown
// attack --out` folder).
func ReadLevel(dir string) *Level {
	l := &Level{}
	l.Series, l.Err = ReadSeries(filepath.Join(dir, load.TimeseriesFile))
	if s, err := load.ReadSummary(dir); err == nil {
		l.Labels = s.Labels
	}
	h, err := ReadLatency(filepath.Join(dir, load.LatencyLogFile))
	if err != nil && l.Err == nil {
		l.Err = err
	}
	l.Latency = h
	return l
}

// Series is a table of numbers by column: one row per second of
// measurement; NaN where a cell was empty.
type Series struct {
	Columns []string
	Rows    [][]float64
}

// Col returns the values of a column, or nil if the series has none.
func (s *Series) Col(name string) []float64 {
	if s == nil {
		return nil
	}
	for j, c := range s.Columns {
		if c == name {
			out := make([]float64, len(s.Rows))
			for i, r := range s.Rows {
				out[i] = r[j]
			}
			return out
		}
	}
	return nil
}

// ReadSeries reads a timeseries.csv by column name, so the resource
// columns after the engine's are kept.
func ReadSeries(path string) (*Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || len(rows[0]) == 0 || rows[0][0] != "second" {
		return nil, fmt.Errorf("%s: no header starting with \"second\"", path)
	}
	s := &Series{Columns: rows[0]}
	for i, row := range rows[1:] {
		vs := make([]float64, len(s.Columns))
		for j := range vs {
			vs[j] = math.NaN()
			if j < len(row) && row[j] != "" {
				v, err := strconv.ParseFloat(row[j], 64)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: column %s: %w", path, i+2, s.Columns[j], err)
				}
				vs[j] = v
			}
		}
		s.Rows = append(s.Rows, vs)
	}
	return s, nil
}

// ReadLatency merges the "total" histograms of an interval log; the
// result has the engine's range, that of the first interval.
func ReadLatency(path string) (*hdrhistogram.Histogram, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var total *hdrhistogram.Histogram
	prefix := "Tag=" + load.TotalTag + ","
	for n, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		parts := strings.SplitN(line[len(prefix):], ",", 4)
		if len(parts) != 4 {
			return nil, fmt.Errorf("%s:%d: malformed interval line", path, n+1)
		}
		h, err := load.DecodeHistogram(strings.TrimSpace(parts[3]))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n+1, err)
		}
		if total == nil {
			total = h
		} else {
			total.Merge(h)
		}
	}
	if total == nil {
		return nil, errors.New(path + ": no \"total\" intervals")
	}
	return total, nil
}
