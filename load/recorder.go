package load

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// labelRec accumulates one label (or the total).
type labelRec struct {
	row            LabelStats
	reasons        map[string]int64
	statuses       map[int]int64
	curLat, curSvc *hdrhistogram.Histogram
	totLat, totSvc *hdrhistogram.Histogram
	curN           int64
}

func newLabelRec(label, tag string) *labelRec {
	return &labelRec{
		row:      LabelStats{Label: label, Tag: tag},
		reasons:  map[string]int64{},
		statuses: map[int]int64{},
		curLat:   newHist(), curSvc: newHist(),
		totLat: newHist(), totSvc: newHist(),
	}
}

// recorder collects samples into per-label and total histograms, cut into
// one-second intervals. One mutex guards it: recording a sample is a few
// histogram increments, far cheaper than the request it measures.
type recorder struct {
	mu         sync.Mutex
	labels     []*labelRec // one per step, then the total
	maxReasons int
	// curLate and totLate hold the send lateness of the open model's
	// iterations (see noLateness), over all labels.
	curLate, totLate *hdrhistogram.Histogram

	measuring  bool
	warmupLeft int64 // requests still to discard (count warm-up)
	start      time.Time
	last       time.Time // end of the previous interval
	curErr     int64
	intervals  []Interval
	cpu0       time.Duration // process CPU time at begin
	// spin is the time loops spent spinning for responses (ns), and
	// spin0 its value at begin: CPU the generator burns by choice while
	// it waits, not work (Spin).
	spin      atomic.Int64
	spin0     int64
	began     chan struct{} // closed by begin
	autoStart time.Time     // if set, the first sample begins measurement at it
}

func (r *recorder) startTime() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.start
}

func newRecorder(steps []string, maxReasons int, warmupRequests int) *recorder {
	r := &recorder{maxReasons: maxReasons, began: make(chan struct{}), curLate: newHist(), totLate: newHist()}
	taken := map[string]bool{TotalTag: true}
	for _, s := range steps {
		r.labels = append(r.labels, newLabelRec(s, tagFor(s, taken)))
	}
	r.labels = append(r.labels, newLabelRec("TOTAL", TotalTag))
	r.warmupLeft = int64(warmupRequests)
	return r
}

// begin starts measurement at t.
func (r *recorder) begin(t time.Time) {
	r.mu.Lock()
	r.beginLocked(t)
	r.mu.Unlock()
}

func (r *recorder) beginLocked(t time.Time) {
	if r.measuring {
		return
	}
	r.measuring, r.start, r.last = true, t, t
	r.cpu0 = processCPU()
	r.spin0 = r.spin.Load()
	close(r.began)
}

// noLateness marks a sample without a due time (closed model, later steps).
const noLateness = time.Duration(-1 << 63)

// record counts one sample of step: its latency, service time, and send
// lateness (how long after its due time the request was written, or
// noLateness). status is the response's status code, 0 when none was
// read; reason is "" for a success.
func (r *recorder) record(step int, lat, svc, late time.Duration, sent, recv, status int, reason string) {
	r.mu.Lock()
	if !r.measuring && !r.autoStart.IsZero() {
		// The open model filters warm-up samples itself: a sample here
		// is measured even if the warm-up timer has not fired yet.
		r.beginLocked(r.autoStart)
	}
	if !r.measuring {
		if r.warmupLeft > 0 {
			r.warmupLeft--
			if r.warmupLeft == 0 {
				// A count warm-up ends with its last sample.
				r.beginLocked(time.Now())
			}
		}
		r.mu.Unlock()
		return
	}
	for _, l := range [2]*labelRec{r.labels[step], r.labels[len(r.labels)-1]} {
		l.row.Samples++
		l.curN++
		l.row.SentBytes += int64(sent)
		l.row.ReceivedBytes += int64(recv)
		recordHist(l.curLat, lat)
		recordHist(l.curSvc, svc)
		if status > 0 {
			l.statuses[status]++
		}
		if reason != "" {
			l.row.Errors++
			if _, ok := l.reasons[reason]; !ok && len(l.reasons) >= r.maxReasons {
				reason = "other"
			}
			l.reasons[reason]++
		}
	}
	if reason != "" {
		r.curErr++
	}
	if late != noLateness {
		recordHist(r.curLate, max(late, 0))
	}
	r.mu.Unlock()
}

// flush closes the current interval at now and returns it.
func (r *recorder) flush(now time.Time, active int64) *Interval {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.measuring {
		return nil
	}
	total := r.labels[len(r.labels)-1]
	iv := Interval{
		Second:   len(r.intervals),
		Seconds:  now.Sub(r.last).Seconds(),
		Requests: total.curN,
		Errors:   r.curErr,
		Active:   active,
		Latency:  map[string]string{},
		Service:  map[string]string{},
	}
	if r.curLate.TotalCount() > 0 {
		iv.LatenessP50 = ms(r.curLate.ValueAtQuantile(50))
		iv.LatenessP99 = ms(r.curLate.ValueAtQuantile(99))
		iv.Lateness = encodeHist(r.curLate)
		r.totLate.Merge(r.curLate)
		r.curLate.Reset()
	}
	if total.curN > 0 {
		iv.P50 = ms(total.curLat.ValueAtQuantile(50))
		iv.P90 = ms(total.curLat.ValueAtQuantile(90))
		iv.P99 = ms(total.curLat.ValueAtQuantile(99))
		iv.Max = ms(total.curLat.Max())
	}
	for _, l := range r.labels {
		if l.curN > 0 || l == total {
			iv.Latency[l.row.Tag] = encodeHist(l.curLat)
			iv.Service[l.row.Tag] = encodeHist(l.curSvc)
		}
		if l.curN > 0 {
			l.totLat.Merge(l.curLat)
			l.totSvc.Merge(l.curSvc)
			l.curLat.Reset()
			l.curSvc.Reset()
		}
		l.curN = 0
	}
	r.curErr = 0
	r.last = now
	r.intervals = append(r.intervals, iv)
	return &r.intervals[len(r.intervals)-1]
}

// p99 returns the latency p99 so far (flushed intervals only).
func (r *recorder) p99() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Duration(r.labels[len(r.labels)-1].totLat.ValueAtQuantile(99))
}

func (r *recorder) totals() (requests, errors int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.labels[len(r.labels)-1].row
	return t.Samples, t.Errors
}

// result builds the Result; call after the final flush.
func (r *recorder) result(s Summary) *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := &Result{
		Summary:   s,
		Intervals: r.intervals,
		latency:   map[string]*hdrhistogram.Histogram{},
		service:   map[string]*hdrhistogram.Histogram{},
	}
	if r.totLate.TotalCount() > 0 {
		res.lateness = r.totLate
		res.Summary.Lateness = StatsOf(r.totLate)
	}
	secs := r.last.Sub(r.start).Seconds()
	if !r.measuring {
		secs = 0
	}
	res.Summary.DurationSeconds = secs
	res.Summary.Labels = nil
	for i, l := range r.labels {
		row := l.row
		row.Reasons = nil
		for reason, n := range l.reasons {
			row.Reasons = append(row.Reasons, ReasonCount{reason, n})
		}
		if len(l.statuses) > 0 {
			row.Statuses = maps.Clone(l.statuses)
		}
		row.finish(l.totLat, l.totSvc, secs)
		res.latency[row.Tag] = l.totLat
		res.service[row.Tag] = l.totSvc
		if i == len(r.labels)-1 {
			res.Summary.Total = row
		} else {
			res.Summary.Labels = append(res.Summary.Labels, row)
		}
	}
	res.Summary.Start = r.start
	return res
}
