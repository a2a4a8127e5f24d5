package imported

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// fromSamples aggregates an imported tool's samples the way the engine
// does: HdrHistograms per label and per second, a JMeter aggregate row,
// and a per-second series.
func fromSamples(path, kind string, ss []sample) (*Result, error) {
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
	series := &load.Series{Columns: load.TimeseriesHeader}
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
	return &Result{Kind: kind, Run: run, Level: &results.Level{Series: series, Latency: total.hist, Labels: sum.Labels}}, nil
}
