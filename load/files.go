package load

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/showdownlab/showdown/load/atomicfile"
)

// Files of a result directory.
const (
	SummaryFile    = "summary.json"
	TimeseriesFile = "timeseries.csv"
	LatencyLogFile = "latency.hlog"
	ServiceLogFile = "service.hlog"
	// LatenessLogFile holds the open model's send lateness (tag total);
	// it is not written for the closed model.
	LatenessLogFile = "lateness.hlog"
)

// TimeseriesHeader is the header row of timeseries.csv.
var TimeseriesHeader = []string{"second", "requests", "errors", "throughput", "p50_ms", "p90_ms", "p99_ms", "max_ms", "active"}

// LatenessColumns follow TimeseriesHeader in timeseries.csv: the open
// model's send lateness in the interval and the rate its schedule
// offered (its arrivals per second; 0 in the closed model).
var LatenessColumns = []string{"lateness_p50_ms", "lateness_p99_ms", "offered_per_s"}

// Column is one more column of timeseries.csv, joined to the engine's
// own when the file is written: its name and its cell for each second.
type Column struct {
	Name string
	Cell func(second int) string
}

// WriteDir writes r into dir (created if needed): summary.json,
// timeseries.csv (the engine's columns, LatenessColumns, then the extra
// columns), latency.hlog, service.hlog and, in the open model,
// lateness.hlog.
func (r *Result) WriteDir(dir string, extra ...Column) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(&r.Summary, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, SummaryFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, TimeseriesFile), func(w *bufio.Writer) error { return r.writeTimeseries(w, extra) }); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, LatencyLogFile), func(w *bufio.Writer) error {
		return r.writeHlog(w, "latency (from intended send time)", func(iv *Interval) (map[string]string, map[string]int64) { return iv.Latency, iv.latMax })
	}); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, ServiceLogFile), func(w *bufio.Writer) error {
		return r.writeHlog(w, "service time (from actual send)", func(iv *Interval) (map[string]string, map[string]int64) { return iv.Service, iv.svcMax })
	}); err != nil {
		return err
	}
	if r.lateness == nil {
		return nil
	}
	empty := encodeHist(newHist())
	return writeFile(filepath.Join(dir, LatenessLogFile), func(w *bufio.Writer) error {
		return r.writeHlog(w, "send lateness (from intended to actual send)", func(iv *Interval) (map[string]string, map[string]int64) {
			if iv.Lateness == "" {
				return map[string]string{TotalTag: empty}, map[string]int64{TotalTag: 0}
			}
			var max map[string]int64
			if iv.latMax != nil { // closed here, not read back: lateMax is known
				max = map[string]int64{TotalTag: iv.lateMax}
			}
			return map[string]string{TotalTag: iv.Lateness}, max
		})
	})
}

// writeFile writes path atomically (package atomicfile): a run stopped
// half way leaves the old file or none, never a part.
func writeFile(path string, fill func(*bufio.Writer) error) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return fill(w.(*bufio.Writer)) })
}

func (r *Result) writeTimeseries(bw *bufio.Writer, extra []Column) error {
	w := csv.NewWriter(bw)
	head := append(append([]string{}, TimeseriesHeader...), LatenessColumns...)
	for _, c := range extra {
		head = append(head, c.Name)
	}
	w.Write(head)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, iv := range r.Intervals {
		tp := 0.0
		if iv.Seconds > 0 {
			tp = math.Round(1e3*float64(iv.Requests)/iv.Seconds) / 1e3
		}
		row := []string{strconv.Itoa(iv.Second), strconv.FormatInt(iv.Requests, 10), strconv.FormatInt(iv.Errors, 10),
			f(tp), f(iv.P50), f(iv.P90), f(iv.P99), f(iv.Max), strconv.FormatInt(iv.Active, 10),
			f(iv.LatenessP50), f(iv.LatenessP99), f(iv.offeredRate())}
		for _, c := range extra {
			row = append(row, c.Cell(iv.Second))
		}
		w.Write(row)
	}
	w.Flush()
	return w.Error()
}

// tags returns the total tag then each label's tag, in step order.
func (r *Result) tags() []string {
	t := []string{TotalTag}
	for _, l := range r.Summary.Labels {
		t = append(t, l.Tag)
	}
	return t
}

// writeHlog writes the standard HdrHistogram interval log (format 1.3):
// one line per interval and tag, "Tag=t,start,length,max_ms,payload", with
// times in seconds relative to the BaseTime line.
func (r *Result) writeHlog(w *bufio.Writer, what string, pick func(*Interval) (map[string]string, map[string]int64)) error {
	base := float64(r.Summary.Start.UnixMilli()) / 1e3
	fmt.Fprintf(w, "#[showdown %s; values in nanoseconds; tag %q is all labels]\n", what, TotalTag)
	fmt.Fprintf(w, "#[Histogram log format version %s]\n", hdrhistogram.HISTOGRAM_LOG_FORMAT_VERSION)
	fmt.Fprintf(w, "#[StartTime: %.3f (seconds since epoch), %s]\n", base, r.Summary.Start.UTC().Format("2006-01-02T15:04:05.000Z"))
	fmt.Fprintf(w, "#[BaseTime: %.3f (seconds since epoch)]\n", base)
	fmt.Fprintln(w, `"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`)
	at := 0.0
	for i := range r.Intervals {
		iv := &r.Intervals[i]
		hs, maxes := pick(iv)
		for _, tag := range r.tags() {
			p, ok := hs[tag]
			if !ok {
				continue
			}
			max, ok := maxes[tag]
			if !ok {
				h, err := hdrhistogram.Decode([]byte(p))
				if err != nil {
					return err
				}
				max = h.Max()
			}
			fmt.Fprintf(w, "Tag=%s,%.3f,%.3f,%.3f,%s\n", tag, at, iv.Seconds, float64(max)/1e6, p)
		}
		at += iv.Seconds
	}
	return nil
}

// ReadSummary reads summary.json from a result directory.
func ReadSummary(dir string) (*Summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SummaryFile), err)
	}
	if s.Version != 1 {
		return nil, fmt.Errorf("%s: version %d, want 1", filepath.Join(dir, SummaryFile), s.Version)
	}
	return &s, nil
}

// Series is timeseries.csv as a table of numbers by column name: one row
// per second, NaN where a cell is empty. Columns other tools join after
// the engine's (the lab's resources) are kept.
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

// ReadSeries reads timeseries.csv from a result directory by column name.
// It is the one parser of the file: ReadTimeseries builds on it.
func ReadSeries(dir string) (*Series, error) {
	path := filepath.Join(dir, TimeseriesFile)
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
	if len(rows) == 0 || len(rows[0]) == 0 || rows[0][0] != TimeseriesHeader[0] {
		return nil, fmt.Errorf("%s: no header starting with %q", path, TimeseriesHeader[0])
	}
	s := &Series{Columns: rows[0]}
	for i, row := range rows[1:] {
		vs := make([]float64, len(s.Columns))
		for j := range vs {
			vs[j] = math.NaN()
			if j < len(row) && row[j] != "" {
				if vs[j], err = strconv.ParseFloat(row[j], 64); err != nil {
					return nil, fmt.Errorf("%s:%d: %s: %w", path, i+2, s.Columns[j], err)
				}
			}
		}
		s.Rows = append(s.Rows, vs)
	}
	return s, nil
}

// ReadTimeseries reads timeseries.csv from a result directory into
// Intervals without histograms.
func ReadTimeseries(dir string) ([]Interval, error) {
	s, err := ReadSeries(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, TimeseriesFile)
	// Other tools may append columns (the lab adds the service's
	// resources); the engine's own come first.
	if len(s.Columns) < len(TimeseriesHeader) ||
		strings.Join(s.Columns[:len(TimeseriesHeader)], ",") != strings.Join(TimeseriesHeader, ",") {
		return nil, fmt.Errorf("%s: header does not start with %s", path, strings.Join(TimeseriesHeader, ","))
	}
	// The lateness columns are found by name: results written before they
	// existed lack them.
	late := -1
	for j, name := range s.Columns {
		if name == LatenessColumns[0] && j+1 < len(s.Columns) && s.Columns[j+1] == LatenessColumns[1] {
			late = j
		}
	}
	ivs := make([]Interval, 0, len(s.Rows))
	for i, v := range s.Rows {
		for j, name := range TimeseriesHeader {
			if math.IsNaN(v[j]) {
				return nil, fmt.Errorf("%s:%d: %s: empty", path, i+2, name)
			}
		}
		iv := Interval{Second: int(v[0]), Requests: int64(v[1]), Errors: int64(v[2]),
			P50: v[4], P90: v[5], P99: v[6], Max: v[7], Active: int64(v[8])}
		if v[3] > 0 {
			iv.Seconds = v[1] / v[3]
		}
		if late >= 0 {
			for k, dst := range []*float64{&iv.LatenessP50, &iv.LatenessP99} {
				if !math.IsNaN(v[late+k]) {
					*dst = v[late+k]
				}
			}
			if late+2 < len(s.Columns) && s.Columns[late+2] == LatenessColumns[2] && !math.IsNaN(v[late+2]) {
				iv.Offered = v[late+2] * iv.Seconds
			}
		}
		ivs = append(ivs, iv)
	}
	return ivs, nil
}

// ReadHistogram merges the intervals of one tag of an .hlog file of a
// result directory (LatencyLogFile, ServiceLogFile, LatenessLogFile) into
// one histogram, in the range of the file's first interval.
func ReadHistogram(dir, file, tag string) (*hdrhistogram.Histogram, error) {
	path := filepath.Join(dir, file)
	ivs, _, err := readHlog(path)
	if err != nil {
		return nil, err
	}
	var total *hdrhistogram.Histogram
	for i, iv := range ivs {
		p, ok := iv[tag]
		if !ok {
			continue
		}
		h, err := DecodeHistogram(p)
		if err != nil {
			return nil, fmt.Errorf("%s: interval %d, tag %s: %w", path, i+1, tag, err)
		}
		if total == nil {
			total = h
		} else {
			total.Merge(h)
		}
	}
	if total == nil {
		return nil, fmt.Errorf("%s: no %q intervals", path, tag)
	}
	return total, nil
}

// readHlog reads our own .hlog: per interval (in order), tag -> payload,
// and the interval lengths.
func readHlog(path string) ([]map[string]string, []float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var out []map[string]string
	var lens []float64
	last := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "Tag=") {
			continue
		}
		parts := strings.SplitN(line[4:], ",", 5)
		if len(parts) != 5 {
			return nil, nil, fmt.Errorf("%s:%d: malformed interval line", path, n)
		}
		if parts[1] != last || len(out) == 0 {
			out = append(out, map[string]string{})
			l, _ := strconv.ParseFloat(parts[2], 64)
			lens = append(lens, l)
			last = parts[1]
		}
		out[len(out)-1][parts[0]] = strings.TrimSpace(parts[4])
	}
	return out, lens, sc.Err()
}

// ReadDir reads a result directory written by WriteDir, histograms
// included.
func ReadDir(dir string) (*Result, error) {
	s, err := ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	ivs, err := ReadTimeseries(dir)
	if err != nil {
		return nil, err
	}
	lat, lens, err := readHlog(filepath.Join(dir, LatencyLogFile))
	if err != nil {
		return nil, err
	}
	svc, _, err := readHlog(filepath.Join(dir, ServiceLogFile))
	if err != nil {
		return nil, err
	}
	if len(lat) != len(ivs) || len(svc) != len(ivs) {
		return nil, fmt.Errorf("%s: %d intervals in %s, %d in %s, %d in %s", dir, len(ivs), TimeseriesFile, len(lat), LatencyLogFile, len(svc), ServiceLogFile)
	}
	r := &Result{Summary: *s, Intervals: ivs}
	for i := range r.Intervals {
		r.Intervals[i].Latency, r.Intervals[i].Service = lat[i], svc[i]
		r.Intervals[i].Seconds = lens[i]
	}
	late, _, err := readHlog(filepath.Join(dir, LatenessLogFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	case len(late) != len(ivs):
		return nil, fmt.Errorf("%s: %d intervals in %s, %d in %s", dir, len(ivs), TimeseriesFile, len(late), LatenessLogFile)
	default:
		for i := range r.Intervals {
			r.Intervals[i].Lateness = late[i][TotalTag]
		}
	}
	if err := r.sumIntervals(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return r, nil
}

// sumIntervals rebuilds the total histograms from the intervals.
func (r *Result) sumIntervals() error {
	r.lateness = nil
	r.latency = map[string]*hdrhistogram.Histogram{}
	r.service = map[string]*hdrhistogram.Histogram{}
	for _, tag := range r.tags() {
		r.latency[tag], r.service[tag] = newHist(), newHist()
	}
	for _, iv := range r.Intervals {
		if iv.Lateness != "" {
			h, err := hdrhistogram.Decode([]byte(iv.Lateness))
			if err != nil {
				return fmt.Errorf("interval %d, lateness: %w", iv.Second, err)
			}
			if r.lateness == nil {
				r.lateness = newHist()
			}
			r.lateness.Merge(h)
		}
		for _, p := range [2]struct {
			m   map[string]string
			tot map[string]*hdrhistogram.Histogram
		}{{iv.Latency, r.latency}, {iv.Service, r.service}} {
			for tag, payload := range p.m {
				h, err := hdrhistogram.Decode([]byte(payload))
				if err != nil {
					return fmt.Errorf("interval %d, tag %s: %w", iv.Second, tag, err)
				}
				if p.tot[tag] == nil {
					p.tot[tag] = newHist()
				}
				p.tot[tag].Merge(h)
			}
		}
	}
	return nil
}

// Merge combines the results of shards of one attack into one: counts are
// summed and histograms merged interval by interval (never percentiles
// averaged). Intervals are aligned by their index from each shard's start.
// Each input histogram's counts are added once into an in-memory sum of
// its interval and tag, without building a histogram per input; each
// merged interval is encoded once at the end, so the work is linear in
// the shards' histograms.
func Merge(results ...*Result) (*Result, error) {
	if len(results) == 0 {
		return nil, errors.New("merge: no results")
	}
	first := results[0].Summary
	m := &merger{rows: map[string]*LabelStats{},
		out: &Result{Summary: Summary{Version: 1, Model: first.Model, Start: first.Start, Options: first.Options, LateAfterMs: first.LateAfterMs}}}
	out := m.out
	for i, r := range results {
		if s := r.Summary; s.Model != first.Model {
			return nil, fmt.Errorf("merge: result %d is a %s-model run, result 1 is %s", i+1, s.Model, first.Model)
		}
		m.summary(r.Summary)
		if err := m.intervals(i, r); err != nil {
			return nil, err
		}
	}
	for _, l := range m.order {
		out.Summary.Labels = append(out.Summary.Labels, *m.rows[l])
	}
	out.Summary.Total.Label, out.Summary.Total.Tag = "TOTAL", TotalTag
	m.encode()
	secs := out.Summary.DurationSeconds
	for i := range out.Summary.Labels {
		l := &out.Summary.Labels[i]
		l.finish(out.latency[l.Tag], out.service[l.Tag], secs)
	}
	out.Summary.Total.finish(out.latency[TotalTag], out.service[TotalTag], secs)
	if h := out.Lateness(); h != nil {
		out.Summary.Lateness = StatsOf(h)
	}
	return out, nil
}

// merger is one Merge: the result so far, its label rows in the order
// first seen, and each interval's histogram sums until they are encoded.
type merger struct {
	out    *Result
	rows   map[string]*LabelStats
	order  []string
	merged []intervalSums
	dec    histDecoder
}

// intervalSums holds one merged interval's histogram sums per tag.
type intervalSums struct {
	latency, service map[string]*histSum
	lateness         histSum
}

// summary adds a shard's summary: its counts, rates and rows.
func (m *merger) summary(s Summary) {
	o := &m.out.Summary
	if s.Start.Before(o.Start) {
		o.Start = s.Start
	}
	o.DurationSeconds = math.Max(o.DurationSeconds, s.DurationSeconds)
	o.TargetRate += s.TargetRate
	o.AchievedRate += s.AchievedRate
	o.Late += s.Late
	o.Dropped += s.Dropped
	o.Users += s.Users
	o.CPUSeconds += s.CPUSeconds
	o.SpinSeconds += s.SpinSeconds
	o.CPUs += s.CPUs
	o.Shards = append(o.Shards, s.Shards...)
	o.Interrupted = o.Interrupted || s.Interrupted
	for _, w := range s.Warnings {
		o.Warnings = append(o.Warnings, fmt.Sprintf("shard %s: %s", strings.Join(s.Shards, ","), w))
	}
	for _, l := range s.Labels {
		row, ok := m.rows[l.Label]
		if !ok {
			row = &LabelStats{Label: l.Label, Tag: l.Tag}
			m.rows[l.Label] = row
			m.order = append(m.order, l.Label)
		}
		addCounts(row, l)
	}
	addCounts(&o.Total, s.Total)
}

// addCounts adds src's counts, statuses and reasons to dst.
func addCounts(dst *LabelStats, src LabelStats) {
	dst.Samples += src.Samples
	dst.Errors += src.Errors
	dst.ReceivedBytes += src.ReceivedBytes
	dst.SentBytes += src.SentBytes
	for code, n := range src.Statuses {
		if dst.Statuses == nil {
			dst.Statuses = map[int]int64{}
		}
		dst.Statuses[code] += n
	}
	for _, rc := range src.Reasons {
		found := false
		for i := range dst.Reasons {
			if dst.Reasons[i].Reason == rc.Reason {
				dst.Reasons[i].Count += rc.Count
				found = true
			}
		}
		if !found {
			dst.Reasons = append(dst.Reasons, rc)
		}
	}
}

// intervals adds result i's intervals, each to the merged interval of
// its index: counts summed, histograms added to the interval's sums.
func (m *merger) intervals(i int, r *Result) error {
	out := m.out
	for j, iv := range r.Intervals {
		if j >= len(out.Intervals) {
			out.Intervals = append(out.Intervals, Interval{Second: j, Latency: map[string]string{}, Service: map[string]string{}})
			m.merged = append(m.merged, intervalSums{latency: map[string]*histSum{}, service: map[string]*histSum{}})
		}
		o, sums := &out.Intervals[j], &m.merged[j]
		o.Seconds = math.Max(o.Seconds, iv.Seconds)
		o.Requests += iv.Requests
		o.Errors += iv.Errors
		o.Active += iv.Active
		if iv.Lateness != "" {
			if err := sums.lateness.add(&m.dec, iv.Lateness); err != nil {
				return fmt.Errorf("merge: result %d, interval %d, lateness: %w", i+1, j, err)
			}
		}
		for _, p := range [2]struct {
			dst map[string]*histSum
			src map[string]string
		}{{sums.latency, iv.Latency}, {sums.service, iv.Service}} {
			for tag, payload := range p.src {
				sum := p.dst[tag]
				if sum == nil {
					sum = &histSum{}
					p.dst[tag] = sum
				}
				if err := sum.add(&m.dec, payload); err != nil {
					return fmt.Errorf("merge: result %d, interval %d, tag %s: %w", i+1, j, tag, err)
				}
			}
		}
	}
	return nil
}

// encode encodes each merged interval once, with its percentiles, and
// sums the totals from the in-memory histograms (what sumIntervals would
// decode again).
func (m *merger) encode() {
	out := m.out
	out.latency = map[string]*hdrhistogram.Histogram{}
	out.service = map[string]*hdrhistogram.Histogram{}
	for _, tag := range out.tags() {
		out.latency[tag], out.service[tag] = newHist(), newHist()
	}
	for i := range out.Intervals {
		iv, sums := &out.Intervals[i], &m.merged[i]
		var total *hdrhistogram.Histogram
		for k, p := range [2]struct {
			src map[string]*histSum
			dst map[string]string
			tot map[string]*hdrhistogram.Histogram
		}{{sums.latency, iv.Latency, out.latency}, {sums.service, iv.Service, out.service}} {
			for tag, sum := range p.src {
				h := sum.histogram()
				if k == 0 && tag == TotalTag {
					total = h
				}
				p.dst[tag] = encodeHist(h)
				if p.tot[tag] == nil {
					p.tot[tag] = newHist()
				}
				p.tot[tag].Merge(h)
			}
		}
		if h := total; h != nil && h.TotalCount() > 0 {
			iv.P50, iv.P90 = ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(90))
			iv.P99, iv.Max = ms(h.ValueAtQuantile(99)), ms(h.Max())
		}
		if h := sums.lateness.histogram(); h != nil {
			iv.Lateness = encodeHist(h)
			if out.lateness == nil {
				out.lateness = newHist()
			}
			out.lateness.Merge(h)
			if h.TotalCount() > 0 {
				iv.LatenessP50, iv.LatenessP99 = ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(99))
			}
		}
		m.merged[i] = intervalSums{} // let the interval's histograms go
	}
}
