package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/showdownlab/showdown/internal/imported"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// Kinds of results Load understands.
const (
	KindRun    = "showdown run"
	KindAttack = imported.Attack
	KindJMeter = imported.JMeter
	KindK6     = imported.K6
)

// Results is one loaded set of results in the shape of a plan run: a
// showdown results folder as it is, and an attack folder, a JMeter .jtl or a
// k6 JSON output turned into a run with one implementation, one workload and
// one level by package imported, so every output treats them alike.
type Results struct {
	// Path is the folder or file the results came from.
	Path string
	// Kind says what Path was (KindRun, KindAttack, KindJMeter, KindK6).
	Kind string
	// Run is the record of the run (synthesised for imports).
	Run *results.Run
	// details holds the per-level time series and histograms, loaded from
	// the level folders on first use or filled in by an import.
	details map[*results.LevelRun]*results.Level
	// rejudged is whether Rejudge judged a verdict again, and recorded
	// the verdict lines as the run recorded them, by workload.
	rejudged bool
	recorded map[string][]string
}

// Load reads results from path: a showdown results folder (with run.json),
// an attack folder (summary.json), a JMeter .jtl/.csv results file or a k6
// JSON output (k6 run --out json=FILE).
func Load(path string) (*Results, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w (give a results folder, a JMeter .jtl file or a k6 JSON output)", err)
	}
	if !fi.IsDir() {
		im, err := imported.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return fromImport(path, im), nil
	}
	if _, err := os.Stat(filepath.Join(path, results.RunFile)); err == nil {
		r, err := results.ReadRun(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(path, results.RunFile), err)
		}
		if r.Plan == nil {
			return nil, fmt.Errorf("%s: no plan recorded", filepath.Join(path, results.RunFile))
		}
		return &Results{Path: path, Kind: KindRun, Run: r, details: map[*results.LevelRun]*results.Level{}}, nil
	}
	if _, err := os.Stat(filepath.Join(path, load.SummaryFile)); err == nil {
		im, err := imported.ReadAttack(path)
		if err != nil {
			return nil, err
		}
		return fromImport(path, im), nil
	}
	return nil, fmt.Errorf("%s: neither %s (showdown run) nor %s (showdown attack --out) is there", path, results.RunFile, load.SummaryFile)
}

// fromImport wraps an imported measurement.
func fromImport(path string, im *imported.Result) *Results {
	r := &Results{Path: path, Kind: im.Kind, Run: im.Run, details: map[*results.LevelRun]*results.Level{}}
	if im.Level != nil {
		r.details[im.Run.Services[0].Levels[0]] = im.Level
	}
	return r
}

// Detail returns the time series and histogram of one level, reading them
// from its folder the first time.
func (r *Results) Detail(lr *results.LevelRun) *results.Level {
	if d, ok := r.details[lr]; ok {
		return d
	}
	d := &results.Level{}
	if r.Kind == KindRun || r.Kind == KindAttack {
		d = results.ReadLevel(filepath.Join(r.Path, lr.Dir))
	}
	r.details[lr] = d
	return d
}

func jsonMarshal(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
