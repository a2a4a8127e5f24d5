package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// sample is one request of an imported tool's results.
type sample struct {
	at       time.Time // when the request started
	elapsed  time.Duration
	label    string
	ok       bool
	reason   string
	received int64
	sent     int64
	active   int // threads or VUs active at the time
}

// LoadJMeter reads a JMeter results file in CSV form (.jtl, with the
// default header line: timeStamp,elapsed,label,responseCode,...,success,...).
func LoadJMeter(path string) (*Results, error) {
	f, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(bufio.NewReader(f))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, need := range []string{"timeStamp", "elapsed", "label", "success"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s:1: no %q column; save results as CSV with a header line (jmeter.save.saveservice.print_field_names=true)", path, need)
		}
	}
	get := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	var ss []sample
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		ts, err1 := strconv.ParseInt(get(rec, "timeStamp"), 10, 64)
		el, err2 := strconv.ParseInt(get(rec, "elapsed"), 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s:%d: timeStamp (epoch ms) and elapsed (ms) must be integers: %w", path, line, err)
		}
		s := sample{at: time.UnixMilli(ts), elapsed: time.Duration(el) * time.Millisecond, label: get(rec, "label"),
			ok: get(rec, "success") == "true"}
		if !s.ok {
			s.reason = strings.TrimSpace(get(rec, "responseCode") + " " + get(rec, "failureMessage"))
			if s.reason == "" {
				s.reason = get(rec, "responseMessage")
			}
		}
		s.received, _ = strconv.ParseInt(get(rec, "bytes"), 10, 64)
		s.sent, _ = strconv.ParseInt(get(rec, "sentBytes"), 10, 64)
		s.active, _ = strconv.Atoi(get(rec, "allThreads"))
		ss = append(ss, s)
	}
	return fromSamples(path, KindJMeter, ss)
}

// k6Point is one line of k6's JSON output.
type k6Point struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Time  time.Time         `json:"time"`
		Value float64           `json:"value"`
		Tags  map[string]string `json:"tags"`
	} `json:"data"`
}

// LoadK6 reads the output of k6 run --out json=FILE: every
// http_req_duration point is a request (failed when k6's
// expected_response tag says so, or without it a status outside 200-399),
// and the vus metric gives the level.
func LoadK6(path string) (*Results, error) {
	f, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var ss []sample
	vus := 0
	var rx, tx int64
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 || !strings.Contains(string(b), `"Point"`) {
			continue
		}
		var p k6Point
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		switch p.Metric {
		case "http_req_duration":
			t := p.Data.Tags
			el := time.Duration(p.Data.Value * 1e6)
			s := sample{at: p.Data.Time.Add(-el), elapsed: el, label: t["name"], active: vus}
			if s.label == "" {
				s.label = t["url"]
			}
			if e, ok := t["expected_response"]; ok {
				s.ok = e == "true"
			} else {
				code, _ := strconv.Atoi(t["status"])
				s.ok = code >= 200 && code < 400
			}
			if !s.ok {
				s.reason = "status " + t["status"]
				if t["error"] != "" {
					s.reason += ": " + t["error"]
				}
			}
			ss = append(ss, s)
		case "vus":
			vus = int(p.Data.Value)
		case "data_received":
			rx += int64(p.Data.Value)
		case "data_sent":
			tx += int64(p.Data.Value)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// k6 counts bytes per iteration, not per request: spread them evenly.
	if n := int64(len(ss)); n > 0 {
		for i := range ss {
			ss[i].received, ss[i].sent = rx/n, tx/n
		}
		ss[0].received += rx % n
		ss[0].sent += tx % n
	}
	return fromSamples(path, KindK6, ss)
}

// fromSamples aggregates an imported tool's samples the way the engine
// does: HdrHistograms per label and per second, a JMeter aggregate row,
// and a per-second series.
func fromSamples(path, kind string, ss []sample) (*Results, error) {
	if len(ss) == 0 {
		return nil, fmt.Errorf("%s: no requests in the file", path)
	}
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].at.Before(ss[j].at) })
	start := ss[0].at
	end := start
	for _, s := range ss {
		if e := s.at.Add(s.elapsed); e.After(end) {
			end = e
		}
	}
	secs := end.Sub(start).Seconds()
	if secs <= 0 {
		secs = 1e-3
	}
	type acc struct {
		row  load.LabelStats
		hist *hdrhistogram.Histogram
		why  map[string]int64
	}
	labels := map[string]*acc{}
	var order []string
	total := &acc{row: load.LabelStats{Label: "TOTAL", Tag: load.TotalTag}, hist: load.NewHistogram(), why: map[string]int64{}}
	nsec := int(math.Ceil(secs))
	perSec := make([]*hdrhistogram.Histogram, nsec)
	errs := make([]int64, nsec)
	active := make([]int, nsec)
	level := 0
	for _, s := range ss {
		a := labels[s.label]
		if a == nil {
			a = &acc{row: load.LabelStats{Label: s.label, Tag: s.label}, hist: load.NewHistogram(), why: map[string]int64{}}
			labels[s.label] = a
			order = append(order, s.label)
		}
		v := int64(s.elapsed)
		if v < 1000 {
			v = 1000
		}
		for _, x := range []*acc{a, total} {
			x.row.Samples++
			x.row.ReceivedBytes += s.received
			x.row.SentBytes += s.sent
			x.hist.RecordValue(v)
			if !s.ok {
				x.row.Errors++
				x.why[s.reason]++
			}
		}
		// A request belongs to the second it completed in, as in the engine.
		i := int(s.at.Add(s.elapsed).Sub(start).Seconds())
		if i >= nsec {
			i = nsec - 1
		}
		if perSec[i] == nil {
			perSec[i] = load.NewHistogram()
		}
		perSec[i].RecordValue(v)
		if !s.ok {
			errs[i]++
		}
		if s.active > active[i] {
			active[i] = s.active
		}
		if s.active > level {
			level = s.active
		}
	}
	finish := func(a *acc) load.LabelStats {
		l := a.row
		l.ErrorPercent = math.Round(1e6*float64(l.Errors)/float64(l.Samples)) / 1e4
		l.Throughput = math.Round(1e3*float64(l.Samples)/secs) / 1e3
		l.ReceivedKBps = math.Round(1e3*float64(l.ReceivedBytes)/1024/secs) / 1e3
		l.SentKBps = math.Round(1e3*float64(l.SentBytes)/1024/secs) / 1e3
		l.Latency = load.StatsOf(a.hist)
		l.Service = l.Latency
		for r, n := range a.why {
			l.Reasons = append(l.Reasons, load.ReasonCount{Reason: r, Count: n})
		}
		sort.Slice(l.Reasons, func(i, j int) bool {
			if l.Reasons[i].Count != l.Reasons[j].Count {
				return l.Reasons[i].Count > l.Reasons[j].Count
			}
			return l.Reasons[i].Reason < l.Reasons[j].Reason
		})
		return l
	}
	sum := &load.Summary{Version: 1, Model: "closed", Start: start, DurationSeconds: secs, Users: level, Total: finish(total)}
	sum.AchievedRate = sum.Total.Throughput
	for _, l := range order {
		sum.Labels = append(sum.Labels, finish(labels[l]))
	}
	series := &results.Series{Columns: load.TimeseriesHeader}
	for i := 0; i < nsec; i++ {
		var n int64
		var p50, p90, p99, mx float64
		if h := perSec[i]; h != nil {
			n = h.TotalCount()
			st := load.StatsOf(h)
			p50, p90, p99, mx = st.P50, st.P90, st.P99, st.Max
		}
		length := math.Min(1, secs-float64(i))
		series.Rows = append(series.Rows, []float64{float64(i), float64(n), float64(errs[i]), round(float64(n) / length), p50, p90, p99, mx, float64(active[i])})
	}
	lr := &results.LevelRun{Level: level, Status: results.OK, Total: sum.Total, AchievedRate: sum.AchievedRate}
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, ".gz")
	name = strings.TrimSuffix(name, filepath.Ext(name))
	run := syntheticRun(name, strings.ToLower(kind), "imported", "closed", lr, sum)
	run.Command = fmt.Sprintf("showdown report %s", shellQuote(path))
	res := &Results{Path: path, Kind: kind, Run: run, details: map[*results.LevelRun]*results.Level{}}
	res.details[lr] = &results.Level{Series: series, Latency: total.hist, Labels: sum.Labels}
	return res, nil
}
