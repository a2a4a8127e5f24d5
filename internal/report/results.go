package report

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// Kinds of results Load understands.
const (
	KindRun    = "showdown run"
	KindAttack = "showdown attack"
	KindJMeter = "JMeter"
	KindK6     = "k6"
)

// Results is one loaded set of results in the shape of a plan run: a
// showdown results folder as it is, and an attack folder, a JMeter .jtl or a
// k6 JSON output turned into a run with one implementation, one workload and
// one level, so every output treats them alike.
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
		return loadFile(path)
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
		return loadAttack(path)
	}
	return nil, fmt.Errorf("%s: neither %s (showdown run) nor %s (showdown attack --out) is there", path, results.RunFile, load.SummaryFile)
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

func loadFile(path string) (*Results, error) {
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
		return LoadK6(path)
	case strings.HasPrefix(s, "<"):
		return nil, fmt.Errorf("%s: a JMeter XML results file; save results as CSV (jmeter.save.saveservice.output_format=csv)", path)
	case strings.HasPrefix(s, "timeStamp") || strings.HasSuffix(path, ".jtl") || strings.HasSuffix(path, ".csv") || strings.HasSuffix(path, ".jtl.gz"):
		return LoadJMeter(path)
	}
	return nil, fmt.Errorf("%s: not a JMeter CSV (.jtl) nor a k6 JSON output", path)
}

// loadAttack turns an attack --out folder into a one-level run.
func loadAttack(dir string) (*Results, error) {
	s, err := load.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	level := s.Users
	if s.Model == "open" {
		level = int(math.Round(s.TargetRate))
	}
	name := "target"
	if u := s.Options["url"]; u != "" {
		name = u
	}
	abs, _ := filepath.Abs(dir)
	lr := &results.LevelRun{Level: level, Dir: ".", Status: results.OK, Total: s.Total, TargetRate: s.TargetRate,
		AchievedRate: s.AchievedRate, Late: s.Late, Dropped: s.Dropped, GeneratorCPUs: s.CPUs, Warnings: s.Warnings}
	if s.DurationSeconds > 0 && s.CPUs > 0 {
		lr.Generator.CPUMean = 100 * s.CPUSeconds / s.DurationSeconds
	}
	run := syntheticRun(filepath.Base(abs), name, "attack", s.Model, lr, s)
	run.Command = attackCommand(s)
	return &Results{Path: dir, Kind: KindAttack, Run: run, details: map[*results.LevelRun]*results.Level{}}, nil
}

func attackCommand(s *load.Summary) string {
	if len(s.Options) == 0 {
		return ""
	}
	keys := make([]string, 0, len(s.Options))
	for k := range s.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("showdown attack")
	for _, k := range keys {
		if k == "url" {
			continue
		}
		fmt.Fprintf(&b, " --%s=%s", k, shellQuote(s.Options[k]))
	}
	if u := s.Options["url"]; u != "" {
		b.WriteString(" " + shellQuote(u))
	}
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '=' || r == ',' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
