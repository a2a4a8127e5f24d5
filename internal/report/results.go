package report

import (
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/showdownlab/showdown/internal/lab"
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
	Run *lab.Run
	// details holds the per-level time series and histograms, loaded from
	// the level folders on first use or filled in by an import.
	details map[*lab.LevelRun]*Detail
}

// Detail is what a report draws for one level of one trial besides its
// aggregate row: the per-second time series and the latency histogram.
type Detail struct {
	// Series is the level's timeseries.csv, by column name.
	Series *Series
	// Latency is the level's total latency histogram (nanoseconds), merged
	// over its intervals; nil when the folder has no latency.hlog.
	Latency *hdrhistogram.Histogram
	// Labels are the per-step rows of the level.
	Labels []load.LabelStats
	// Err says why the detail could not be read, if it could not.
	Err error
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
	if _, err := os.Stat(filepath.Join(path, lab.RunFile)); err == nil {
		r, err := lab.ReadRun(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(path, lab.RunFile), err)
		}
		if r.Plan == nil {
			return nil, fmt.Errorf("%s: no plan recorded", filepath.Join(path, lab.RunFile))
		}
		return &Results{Path: path, Kind: KindRun, Run: r, details: map[*lab.LevelRun]*Detail{}}, nil
	}
	if _, err := os.Stat(filepath.Join(path, load.SummaryFile)); err == nil {
		return loadAttack(path)
	}
	return nil, fmt.Errorf("%s: neither %s (showdown run) nor %s (showdown attack --out) is there", path, lab.RunFile, load.SummaryFile)
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
	lr := &lab.LevelRun{Level: level, Dir: ".", Status: "ok", Total: s.Total, TargetRate: s.TargetRate,
		AchievedRate: s.AchievedRate, Late: s.Late, Dropped: s.Dropped, GeneratorCPUs: s.CPUs, Warnings: s.Warnings}
	if s.DurationSeconds > 0 && s.CPUs > 0 {
		lr.Generator.CPUMean = 100 * s.CPUSeconds / s.DurationSeconds
	}
	run := syntheticRun(filepath.Base(abs), name, "attack", s.Model, lr, s)
	run.Command = attackCommand(s)
	return &Results{Path: dir, Kind: KindAttack, Run: run, details: map[*lab.LevelRun]*Detail{}}, nil
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
func syntheticRun(name, impl, workload, model string, lr *lab.LevelRun, s *load.Summary) *lab.Run {
	p := &lab.Plan{Name: name, Trials: 1,
		Implementations: []lab.Implementation{{Service: impl}},
		Workloads:       []lab.Workload{{Name: workload}},
		Load:            lab.Load{Model: model, Levels: []int{lr.Level}, Duration: lab.Duration(s.DurationSeconds * 1e9)},
	}
	sr := &lab.ServiceRun{Implementation: impl, Service: impl, Workload: workload, Trial: 1, Dir: ".", Status: "ok", Levels: []*lab.LevelRun{lr}}
	r := &lab.Run{Version: 1, Plan: p, Services: []*lab.ServiceRun{sr}, Start: s.Start,
		Machine: lab.Machine{Versions: map[string]string{}}}
	if s.DurationSeconds > 0 {
		r.End = s.Start.Add(durationOf(s.DurationSeconds))
	}
	r.Interrupted = s.Interrupted
	return r
}

// Detail returns the time series and histogram of one level, reading them
// from its folder the first time.
func (r *Results) Detail(lr *lab.LevelRun) *Detail {
	if d, ok := r.details[lr]; ok {
		return d
	}
	d := &Detail{}
	r.details[lr] = d
	if r.Kind != KindRun && r.Kind != KindAttack {
		return d
	}
	dir := filepath.Join(r.Path, lr.Dir)
	d.Series, d.Err = readSeries(filepath.Join(dir, load.TimeseriesFile))
	if s, err := load.ReadSummary(dir); err == nil {
		d.Labels = s.Labels
	}
	h, err := readHlogTotal(filepath.Join(dir, load.LatencyLogFile))
	if err != nil && d.Err == nil {
		d.Err = err
	}
	d.Latency = h
	return d
}

// readSeries reads a timeseries.csv by column name, so the lab's resource
// columns after the engine's are kept.
func readSeries(path string) (*Series, error) {
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

// readHlogTotal merges the "total" histograms of an interval log.
func readHlogTotal(path string) (*hdrhistogram.Histogram, error) {
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
			total = newHist()
		}
		total.Merge(h)
	}
	if total == nil {
		return nil, errors.New(path + ": no \"total\" intervals")
	}
	return total, nil
}

// newHist matches the engine's histogram range: 1 µs to one hour, 3
// significant digits, in nanoseconds.
func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(1000, 3600e9, 3)
}

func jsonMarshal(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
