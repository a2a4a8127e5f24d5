package load

import (
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// labelRec accumulates one label (or the total).
type labelRec struct {
	row     LabelStats
	reasons map[string]int64
	// status counts the responses of each common status code (100-599),
	// statuses the others: an index, not a map, per response.
	status         [600]int64
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

// countStatus counts n responses of status (0: none was read).
func (l *labelRec) countStatus(status int, n int64) {
	switch {
	case status <= 0:
	case status < len(l.status):
		l.status[status] += n
	default:
		l.statuses[status] += n
	}
}

// statusMap is every status counted, nil if none.
func (l *labelRec) statusMap() map[int]int64 {
	var m map[int]int64
	for code, n := range l.status {
		if n > 0 {
			if m == nil {
				m = map[int]int64{}
			}
			m[code] = n
		}
	}
	for code, n := range l.statuses {
		if m == nil {
			m = map[int]int64{}
		}
		m[code] += n
	}
	return m
}

// recorder collects samples into per-label and total histograms, cut into
// one-second intervals. One mutex guards it. A sample is recorded in its
// label only; the total gathers the labels' histograms, counts and
// statuses when an interval is closed (flush) and at the end (result),
// so a response costs two histogram increments, not four (its errors
// are counted in both at once: they are few, and the total's cap on
// distinct reasons sees them in the order they came).
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
	spin  atomic.Int64
	spin0 int64
	began chan struct{} // closed by begin
	// offered is the open model's expected arrivals between two times
	// (nil in the closed model), for each interval's Offered.
	offered   func(from, to time.Time) float64
	autoStart time.Time // if set, the first sample begins measurement at it
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
	l := r.labels[step]
	l.row.Samples++
	l.curN++
	l.row.SentBytes += int64(sent)
	l.row.ReceivedBytes += int64(recv)
	recordHist(l.curLat, lat)
	recordHist(l.curSvc, svc)
	l.countStatus(status, 1)
	if reason != "" {
		r.curErr++
		for _, l := range [2]*labelRec{l, r.labels[len(r.labels)-1]} {
			l.row.Errors++
			reason := reason
			if _, ok := l.reasons[reason]; !ok && len(l.reasons) >= r.maxReasons {
				reason = "other"
			}
			l.reasons[reason]++
		}
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
	r.gather(total)
	iv := Interval{
		Second:   len(r.intervals),
		Seconds:  now.Sub(r.last).Seconds(),
		Requests: total.curN,
		Errors:   r.curErr,
		Active:   active,
		Offered:  r.offeredIn(r.last, now),
		Latency:  map[string]string{},
		Service:  map[string]string{},
		latMax:   map[string]int64{},
		svcMax:   map[string]int64{},
	}
	if r.curLate.TotalCount() > 0 {
		iv.LatenessP50 = ms(r.curLate.ValueAtQuantile(50))
		iv.LatenessP99 = ms(r.curLate.ValueAtQuantile(99))
		iv.Lateness, iv.lateMax = encodeHist(r.curLate), r.curLate.Max()
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
			iv.Latency[l.row.Tag], iv.latMax[l.row.Tag] = encodeHist(l.curLat), l.curLat.Max()
			iv.Service[l.row.Tag], iv.svcMax[l.row.Tag] = encodeHist(l.curSvc), l.curSvc.Max()
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

// gather adds the labels' current histograms and their samples to the
// total's (record counts a sample in its label only); the total's bytes
// and statuses are summed by result.
func (r *recorder) gather(total *labelRec) {
	for _, l := range r.labels[:len(r.labels)-1] {
		if l.curN == 0 {
			continue
		}
		total.curLat.Merge(l.curLat)
		total.curSvc.Merge(l.curSvc)
		total.curN += l.curN
		total.row.Samples += l.curN
	}
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
	for _, l := range r.labels[:len(r.labels)-1] {
		requests += l.row.Samples
	}
	return requests, r.labels[len(r.labels)-1].row.Errors
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
	total := r.labels[len(r.labels)-1]
	total.row.SentBytes, total.row.ReceivedBytes = 0, 0
	total.status, total.statuses = [len(total.status)]int64{}, map[int]int64{}
	for _, l := range r.labels[:len(r.labels)-1] {
		total.row.SentBytes += l.row.SentBytes
		total.row.ReceivedBytes += l.row.ReceivedBytes
		for code, n := range l.statusMap() {
			total.countStatus(code, n)
		}
	}
	for i, l := range r.labels {
		row := l.row
		row.Reasons = nil
		for reason, n := range l.reasons {
			row.Reasons = append(row.Reasons, ReasonCount{reason, n})
		}
		row.Statuses = l.statusMap()
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

func (r *recorder) offeredIn(from, to time.Time) float64 {
	if r.offered == nil {
		return 0
	}
	return r.offered(from, to)
}
