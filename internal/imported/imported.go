// Package imported turns what other load generators measured into the
// shape of a showdown run: a JMeter .jtl in CSV form, a k6 JSON output and
// a showdown attack --out folder each become a run record (results.Run)
// with one implementation, one workload and one level, and, for the files,
// that level's per-second series and latency histogram aggregated as the
// engine aggregates its own (load.Summary per label, HdrHistograms). The
// report draws what it returns like any run.
package imported

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// What a Result was read from.
const (
	Attack = "showdown attack"
	JMeter = "JMeter"
	K6     = "k6"
)

// Result is one imported measurement as a run of one level.
type Result struct {
	// Kind says what it was read from (Attack, JMeter, K6).
	Kind string
	// Run is the synthesised run record: one implementation, one
	// workload, one trial, one level (Run.Services[0].Levels[0]).
	Run *results.Run
	// Level is that level's series, histogram and labels; nil for an
	// attack folder, whose files hold them.
	Level *results.Level
}

// openMaybeGzip opens a file, decompressing it when its name ends in .gz
// (k6 writes --out json=FILE.gz compressed).
func openMaybeGzip(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, nil
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{z, f}, nil
}

// ReadFile reads a JMeter CSV results file or a k6 JSON output, told apart
// by their first bytes.
func ReadFile(path string) (*Result, error) {
	f, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	f.Close()
	head = head[:n]
	s := strings.TrimSpace(string(head))
	switch {
	case strings.HasPrefix(s, "{"):
		return ReadK6(path)
	case strings.HasPrefix(s, "<"):
		return nil, fmt.Errorf("%s: a JMeter XML results file; save results as CSV (jmeter.save.saveservice.output_format=csv)", path)
	case strings.HasPrefix(s, "timeStamp") || strings.HasSuffix(path, ".jtl") || strings.HasSuffix(path, ".csv") || strings.HasSuffix(path, ".jtl.gz"):
		return ReadJMeter(path)
	}
	return nil, fmt.Errorf("%s: not a JMeter CSV (.jtl) nor a k6 JSON output", path)
}

// syntheticRun wraps one measured level in a run record.
func syntheticRun(name, impl, workload, model string, lr *results.LevelRun, s *load.Summary) *results.Run {
	p := &plan.Plan{Name: name, Trials: 1,
		Implementations: []plan.Implementation{{Service: impl}},
		Workloads:       []plan.Workload{{Name: workload}},
		Load:            plan.Load{Model: model, Levels: []int{lr.Level}, Duration: plan.Duration(s.DurationSeconds * 1e9)},
	}
	sr := &results.ServiceRun{Implementation: impl, Service: impl, Workload: workload, Trial: 1, Dir: ".", Status: results.OK, Levels: []*results.LevelRun{lr}}
	r := &results.Run{Version: 1, Plan: p, Services: []*results.ServiceRun{sr}, Start: s.Start,
		Machine: results.Machine{Versions: map[string]string{}}}
	if s.DurationSeconds > 0 {
		r.End = s.Start.Add(durationOf(s.DurationSeconds))
	}
	r.Interrupted = s.Interrupted
	return r
}

func round(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1e3) / 1e3
}

func durationOf(seconds float64) time.Duration {
	return time.Duration(math.Round(seconds*1e3)) * time.Millisecond
}
