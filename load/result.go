package load

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: values are nanoseconds, 1 µs resolution up to one hour,
// 3 significant digits.
const (
	histLowest  = 1000
	histHighest = int64(time.Hour)
	histDigits  = 3
)

func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histDigits)
}

// NewHistogram returns an empty latency histogram with the engine's range
// (1 µs to one hour, 3 significant digits, in nanoseconds), for whoever
// merges or imports latencies.
func NewHistogram() *hdrhistogram.Histogram { return newHist() }

func recordHist(h *hdrhistogram.Histogram, d time.Duration) {
	v := int64(d)
	if v < histLowest {
		v = histLowest
	} else if v > histHighest {
		v = histHighest
	}
	h.RecordValue(v)
}

// TotalTag is the hlog tag of the histogram over all labels.
const TotalTag = "total"

// Summary is the content of summary.json: everything in the terminal table
// plus how the run went. Durations are in milliseconds, rates per second.
type Summary struct {
	// Version of this format (1).
	Version int `json:"version"`
	// Model is "open" or "closed".
	Model string `json:"model"`
	// Start is when measurement began (after warm-up).
	Start time.Time `json:"start"`
	// DurationSeconds is the measured wall time.
	DurationSeconds float64 `json:"duration_seconds"`
	// TargetRate is the open model's arrival rate for this generator.
	TargetRate float64 `json:"target_rate,omitempty"`
	// AchievedRate is the started iterations per second (open model) or
	// completed samples per second (closed model).
	AchievedRate float64 `json:"achieved_rate"`
	// Late counts sends that started more than LateAfterMs behind
	// schedule, for any reason: the generator's, or every connection
	// busy (Queued).
	Late int64 `json:"late_sends"`
	// Queued counts the open model's sends that waited for a free
	// connection (every one of MaxInflight busy). Their wait is the
	// service's: it is in their latency (from the due time), not in
	// Lateness.
	Queued int64 `json:"queued_sends,omitempty"`
	// Dropped counts scheduled sends never started before the end.
	Dropped int64 `json:"dropped_sends"`
	// Shape says how the open model's arrivals came (OpenModel.Shape):
	// their spacing, the connections they were spread over, the stages.
	Shape string `json:"shape,omitempty"`
	// ConnectionsOpened counts the connections the open model opened
	// (a server that closes its connections makes this grow).
	ConnectionsOpened int64 `json:"connections_opened,omitempty"`
	// LateAfterMs is the lateness tolerance.
	LateAfterMs float64 `json:"late_after_ms,omitempty"`
	// Users is the closed model's number of virtual users on this generator.
	Users int `json:"users,omitempty"`
	// CPUSeconds is the generator process's user+system CPU time.
	CPUSeconds float64 `json:"cpu_seconds"`
	// SpinSeconds is the part of it the closed model's loops spent
	// spinning for responses before sleeping (BusyCPUSeconds leaves it
	// out): waiting, bought to spare the server a wake-up per response,
	// not load the generator could not carry.
	SpinSeconds float64 `json:"spin_seconds,omitempty"`
	// CPUs is how many CPUs the generator could run on (summed over
	// merged shards).
	CPUs int `json:"cpus"`
	// Shards lists the shards merged into this result ("1/2"...), or the
	// one shard this generator ran; empty for a single generator.
	Shards []string `json:"shards,omitempty"`
	// Interrupted reports that the run was stopped early.
	Interrupted bool `json:"interrupted,omitempty"`
	// Options are the options the run was started with (flag values).
	Options map[string]string `json:"options,omitempty"`
	// Warnings are the generator's doubts about its own measurement.
	Warnings []string `json:"warnings,omitempty"`
	// Lateness is the open model's send lateness over all labels: how long
	// after its intended time each iteration's first request was written.
	// It is the generator's own share of Latency (Latency = Lateness +
	// Service for those requests); zero in the closed model.
	Lateness Stats `json:"send_lateness_ms,omitzero"`
	// Labels are the per-step rows, in step order.
	Labels []LabelStats `json:"labels"`
	// Total is the row over all labels.
	Total LabelStats `json:"total"`
}

// offeredRate is the interval's offered arrivals per second.
func (iv *Interval) offeredRate() float64 {
	if iv.Seconds <= 0 {
		return 0
	}
	return math.Round(1e3*iv.Offered/iv.Seconds) / 1e3
}

// LabelStats is one row of the aggregate report.
type LabelStats struct {
	// Label is the step label ("TOTAL" for the total row).
	Label string `json:"label"`
	// Tag is the label's tag in the .hlog files.
	Tag string `json:"tag"`
	// Samples counts completed requests, failed ones included.
	Samples int64 `json:"samples"`
	// Errors counts failed samples.
	Errors int64 `json:"errors"`
	// ErrorPercent is 100*Errors/Samples.
	ErrorPercent float64 `json:"error_percent"`
	// Throughput is samples per second.
	Throughput float64 `json:"throughput"`
	// ReceivedBytes and SentBytes are bytes on the wire (HTTP level).
	ReceivedBytes int64 `json:"received_bytes"`
	SentBytes     int64 `json:"sent_bytes"`
	// ReceivedKBps and SentKBps are KiB per second.
	ReceivedKBps float64 `json:"received_kb_per_s"`
	SentKBps     float64 `json:"sent_kb_per_s"`
	// Latency is measured from the intended send time (open model) or the
	// actual one (closed model): what a user waits.
	Latency Stats `json:"latency_ms"`
	// Service is measured from the actual send: what the server took.
	Service Stats `json:"service_ms"`
	// Reasons counts errors by reason, most frequent first.
	Reasons []ReasonCount `json:"reasons,omitempty"`
	// Statuses counts the answers by HTTP status code, failed checks
	// included; Samples minus their sum had no answer (a timeout, a
	// connection closed, a malformed response, a request never sent).
	Statuses map[int]int64 `json:"statuses,omitempty"`
}

// Answered returns how many samples got an answer with status code.
func (l LabelStats) Answered(code int) int64 { return l.Statuses[code] }

// Unanswered returns how many samples got no answer at all.
func (l LabelStats) Unanswered() int64 {
	n := l.Samples
	for _, c := range l.Statuses {
		n -= c
	}
	return max(n, 0)
}

// Stats are latency statistics in milliseconds.
type Stats struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

// ReasonCount is how often one error reason occurred.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

func ms(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }

// StatsOf summarizes a nanosecond histogram in milliseconds.
func StatsOf(h *hdrhistogram.Histogram) Stats {
	if h == nil || h.TotalCount() == 0 {
		return Stats{}
	}
	return Stats{
		Mean: math.Round(h.Mean()/1e3) / 1e3,
		Min:  ms(h.Min()),
		P50:  ms(h.ValueAtQuantile(50)),
		P90:  ms(h.ValueAtQuantile(90)),
		P95:  ms(h.ValueAtQuantile(95)),
		P99:  ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)),
		Max:  ms(h.Max()),
	}
}

// Interval is one second of a run: counts plus the interval histograms.
type Interval struct {
	// Second is the interval's index from the start of measurement.
	Second int
	// Seconds is the interval's length (1, or less for the last one).
	Seconds float64
	// Requests and Errors count samples completed in the interval.
	Requests, Errors int64
	// Active is requests in flight (open) or active users (closed) at the
	// interval's end.
	Active int64
	// P50, P90, P99 and Max are the interval's total latency, ms.
	P50, P90, P99, Max float64
	// Latency and Service hold one compressed histogram (the .hlog payload,
	// nanoseconds) per tag: TotalTag and each label's tag. DecodeHistogram
	// turns one back into a histogram.
	Latency, Service map[string]string
	// LatenessP50 and LatenessP99 are the interval's send lateness (open
	// model), ms; Lateness is its compressed histogram, "" if none.
	LatenessP50, LatenessP99 float64
	Lateness                 string
	// Offered is the arrivals the open model's schedule offered in the
	// interval (its expected count: Poisson arrivals scatter around it),
	// where Requests are those served; 0 in the closed model.
	Offered float64

	// The highest value of each histogram above (ns), kept when the
	// interval was closed so that the interval logs need not decode the
	// histograms again for it; empty in an Interval read back or merged.
	latMax, svcMax map[string]int64
	lateMax        int64
}

// DecodeHistogram decodes a compressed histogram of an Interval.
func DecodeHistogram(payload string) (*hdrhistogram.Histogram, error) {
	return hdrhistogram.Decode([]byte(payload))
}

// Result is a finished (or interrupted) attack: its summary, its
// per-second intervals and total histograms. WriteDir stores it, ReadDir
// reads it back, Merge combines shards.
type Result struct {
	// Summary is what summary.json holds.
	Summary Summary
	// Intervals are the seconds of measurement, in order.
	Intervals []Interval
	// latency and service are the total histograms per tag.
	latency, service map[string]*hdrhistogram.Histogram
	// lateness is the total send-lateness histogram (open model), or nil.
	lateness *hdrhistogram.Histogram
}

// Lateness returns the send-lateness histogram (ns) of the open model over
// all labels, or nil when none was recorded.
func (r *Result) Lateness() *hdrhistogram.Histogram {
	if r.lateness == nil || r.lateness.TotalCount() == 0 {
		return nil
	}
	return r.lateness
}

// Latency returns the latency histogram (ns) of a label, or of all labels
// for "" or TotalTag; nil if unknown.
func (r *Result) Latency(label string) *hdrhistogram.Histogram {
	return r.latency[r.tagOf(label)]
}

// Service returns the service-time histogram (ns) of a label, like Latency.
func (r *Result) Service(label string) *hdrhistogram.Histogram {
	return r.service[r.tagOf(label)]
}

// Row returns the summary row of a label, or the total for "" or TotalTag.
func (r *Result) Row(label string) (LabelStats, bool) {
	if label == "" || label == TotalTag {
		return r.Summary.Total, true
	}
	for _, l := range r.Summary.Labels {
		if l.Label == label || l.Tag == label {
			return l, true
		}
	}
	return LabelStats{}, false
}

func (r *Result) tagOf(label string) string {
	if label == "" {
		return TotalTag
	}
	for _, l := range r.Summary.Labels {
		if l.Label == label {
			return l.Tag
		}
	}
	return label
}

// tagFor turns a step label into an hlog tag: tags may not hold commas,
// spaces or line breaks.
func tagFor(label string, taken map[string]bool) string {
	t := strings.Map(func(r rune) rune {
		switch r {
		case ',', ' ', '\t', '\r', '\n', '=':
			return '_'
		}
		return r
	}, label)
	if t == "" || t == TotalTag {
		t = "_" + t
	}
	base := t
	for i := 2; taken[t]; i++ {
		t = base + "~" + itoa(i)
	}
	taken[t] = true
	return t
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}

// finish fills the derived fields of a row from counts and histograms.
func (l *LabelStats) finish(lat, svc *hdrhistogram.Histogram, seconds float64) {
	if l.Samples > 0 {
		l.ErrorPercent = math.Round(1e6*float64(l.Errors)/float64(l.Samples)) / 1e4
	}
	if seconds > 0 {
		l.Throughput = math.Round(1e3*float64(l.Samples)/seconds) / 1e3
		l.ReceivedKBps = math.Round(1e3*float64(l.ReceivedBytes)/1024/seconds) / 1e3
		l.SentKBps = math.Round(1e3*float64(l.SentBytes)/1024/seconds) / 1e3
	}
	l.Latency = StatsOf(lat)
	l.Service = StatsOf(svc)
	sort.Slice(l.Reasons, func(i, j int) bool {
		if l.Reasons[i].Count != l.Reasons[j].Count {
			return l.Reasons[i].Count > l.Reasons[j].Count
		}
		return l.Reasons[i].Reason < l.Reasons[j].Reason
	})
}

// BusyCPUSeconds is the generator's CPU time less its loops' spinning:
// what the load itself cost it, for guards on whether the generator, not
// the service, was the limit.
func (s Summary) BusyCPUSeconds() float64 { return max(s.CPUSeconds-s.SpinSeconds, 0) }

// ErrorReasons lists the row's first error reasons with their counts,
// for a person: "status 500 (12), timeout (3)".
func (s LabelStats) ErrorReasons() string {
	if len(s.Reasons) == 0 {
		if s.Samples == 0 {
			return "no request completed"
		}
		return "no reason recorded"
	}
	var parts []string
	for i, rc := range s.Reasons {
		if i == 3 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", rc.Reason, rc.Count))
	}
	return strings.Join(parts, ", ")
}
