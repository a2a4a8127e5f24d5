package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

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
	Series *load.Series
	// Latency is the level's total latency histogram (nanoseconds), merged
	// over its intervals; nil when the folder has no latency.hlog.
	Latency *hdrhistogram.Histogram
	// Labels are the per-step rows of the level.
	Labels []load.LabelStats
	// Err says why the level could not be read, if it could not.
	Err error
}

// ReadLevel reads a level's folder (a showdown run's level or a `showdown
// attack --out` folder) through package load, which owns its files.
func ReadLevel(dir string) *Level {
	l := &Level{}
	l.Series, l.Err = load.ReadSeries(dir)
	if s, err := load.ReadSummary(dir); err == nil {
		l.Labels = s.Labels
	}
	h, err := load.ReadHistogram(dir, load.LatencyLogFile, load.TotalTag)
	if err != nil && l.Err == nil {
		l.Err = err
	}
	l.Latency = h
	return l
}
