package load

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TestMergeExact merges shards of different lengths, two labels and send
// lateness, and checks every merged histogram, interval by interval and
// in total, against one histogram of all the shards' samples: a merge is
// exact or it is wrong.
func TestMergeExact(t *testing.T) {
	const shards = 4
	tags := []string{"l1", "l2"}
	// want[interval][tag] records every sample of every shard.
	want := map[int]map[string]*hdrhistogram.Histogram{}
	wantTotal := map[string]*hdrhistogram.Histogram{}
	rec := func(iv int, tag string, v int64) {
		if want[iv] == nil {
			want[iv] = map[string]*hdrhistogram.Histogram{}
		}
		for _, k := range []string{tag, TotalTag} {
			for _, m := range []map[string]*hdrhistogram.Histogram{want[iv], wantTotal} {
				if m[k] == nil {
					m[k] = newHist()
				}
				if err := m[k].RecordValue(v); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var results []*Result
	var samples, requests int64
	for s := 1; s <= shards; s++ {
		rng := rand.New(rand.NewPCG(uint64(s), 1))
		r := &Result{Summary: Summary{Version: 1, Model: "open", Start: time.Unix(100, 0), DurationSeconds: float64(2 + s),
			Shards: []string{fmt.Sprintf("%d/%d", s, shards)}}}
		for i := 0; i < 2+s; i++ { // shard s has 2+s intervals: the tails differ
			iv := Interval{Second: i, Seconds: 1, Latency: map[string]string{}, Service: map[string]string{}}
			tot, late := newHist(), newHist()
			for _, tag := range tags {
				h := newHist()
				for n := 0; n < 50+rng.IntN(50); n++ {
					v := int64(1e6 * (0.1 + rng.ExpFloat64()))
					h.RecordValue(v)
					tot.RecordValue(v)
					late.RecordValue(v / 7)
					rec(i, tag, v)
					iv.Requests++
				}
				iv.Latency[tag] = encodeHist(h)
				iv.Service[tag] = encodeHist(h)
			}
			iv.Latency[TotalTag], iv.Service[TotalTag] = encodeHist(tot), encodeHist(tot)
			iv.Lateness = encodeHist(late)
			r.Summary.Total.Samples += iv.Requests
			requests += iv.Requests
			r.Intervals = append(r.Intervals, iv)
		}
		samples += r.Summary.Total.Samples
		for _, tag := range tags {
			r.Summary.Labels = append(r.Summary.Labels, LabelStats{Label: tag, Tag: tag})
		}
		results = append(results, r)
	}
	m, err := Merge(results...)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Intervals) != 2+shards {
		t.Fatalf("%d merged intervals, want %d (the longest shard's)", len(m.Intervals), 2+shards)
	}
	var got int64
	for i, iv := range m.Intervals {
		got += iv.Requests
		for tag, w := range want[i] {
			for name, p := range map[string]string{"latency": iv.Latency[tag], "service": iv.Service[tag]} {
				h, err := DecodeHistogram(p)
				if err != nil {
					t.Fatalf("interval %d, %s %s: %v", i, name, tag, err)
				}
				if !h.Equals(w) {
					t.Errorf("interval %d, %s %s: %d samples, want %d (histograms differ)", i, name, tag, h.TotalCount(), w.TotalCount())
				}
			}
		}
		if w := want[i][TotalTag]; iv.P99 != ms(w.ValueAtQuantile(99)) || iv.Max != ms(w.Max()) {
			t.Errorf("interval %d: p99 %v max %v, want %v %v", i, iv.P99, iv.Max, ms(w.ValueAtQuantile(99)), ms(w.Max()))
		}
	}
	if got != requests || m.Summary.Total.Samples != samples {
		t.Errorf("merged %d requests, %d samples; want %d", got, m.Summary.Total.Samples, samples)
	}
	for tag, w := range wantTotal {
		if !m.Latency(tag).Equals(w) || !m.Service(tag).Equals(w) {
			t.Errorf("total %s: %d samples, want %d (histograms differ)", tag, m.Latency(tag).TotalCount(), w.TotalCount())
		}
	}
	var late int64
	if h := m.Lateness(); h != nil {
		late = h.TotalCount()
	}
	if late != samples {
		t.Errorf("merged lateness holds %d samples, want %d", late, samples)
	}
}

// TestMergeMixedGeometry merges a shard whose histograms have another
// range and precision (another tool's, say) with one of the engine's:
// nothing is lost, and the engine's own histograms still merge exactly.
func TestMergeMixedGeometry(t *testing.T) {
	ours, theirs := newHist(), hdrhistogram.New(1, 10_000_000_000, 2)
	for v := int64(1); v <= 1000; v++ {
		ours.RecordValue(v * 1000)
		theirs.RecordValue(v * 2000)
	}
	enc, err := theirs.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(payload string) *Result {
		return &Result{Summary: Summary{Model: "open", DurationSeconds: 1}, Intervals: []Interval{{Seconds: 1, Requests: 1000,
			Latency: map[string]string{TotalTag: payload}, Service: map[string]string{}}}}
	}
	for _, tc := range []struct {
		name   string
		shards []*Result
	}{
		// The engine's histogram first: the other one is merged into it.
		{"ours first", []*Result{mk(encodeHist(ours)), mk(string(enc))}},
		// The other one first: the engine's is merged into it.
		{"theirs first", []*Result{mk(string(enc)), mk(encodeHist(ours))}},
	} {
		m, err := Merge(tc.shards...)
		if err != nil {
			t.Fatal(err)
		}
		h, err := DecodeHistogram(m.Intervals[0].Latency[TotalTag])
		if err != nil {
			t.Fatal(err)
		}
		if h.TotalCount() != 2000 || m.Latency("").TotalCount() != 2000 {
			t.Errorf("%s: merged %d samples (total %d), want 2000", tc.name, h.TotalCount(), m.Latency("").TotalCount())
		}
		if d := h.Max() - 2_000_000; d < -20_000 || d > 20_000 {
			t.Errorf("%s: merged max %d, want 2 ms within the coarser histogram's 1%%", tc.name, h.Max())
		}
	}
}
