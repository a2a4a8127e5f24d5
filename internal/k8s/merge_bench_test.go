package k8s

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/showdownlab/showdown/load"
)

// shardResult builds a shard's result of seconds intervals with n
// latencies each, drawn from a log-normal spread around 2 ms, in the
// histogram range the engine records with.
func shardResult(b *testing.B, shard, shards, seconds, n int) *load.Result {
	rng := rand.New(rand.NewPCG(uint64(shard), 7))
	r := &load.Result{Summary: load.Summary{Version: 1, Model: "open", Start: time.Unix(0, 0), DurationSeconds: float64(seconds),
		Shards: []string{fmt.Sprintf("%d/%d", shard, shards)}}}
	total := int64(0)
	for s := 0; s < seconds; s++ {
		h := hdrhistogram.New(1000, int64(time.Hour), 3) // the engine's range
		for i := 0; i < n; i++ {
			h.RecordValue(int64(2e6 * (0.2 + rng.ExpFloat64())))
		}
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			b.Fatal(err)
		}
		r.Intervals = append(r.Intervals, load.Interval{Second: s, Seconds: 1, Requests: int64(n),
			Latency: map[string]string{load.TotalTag: string(enc)}, Service: map[string]string{}})
		total += int64(n)
	}
	r.Summary.Total = load.LabelStats{Label: "TOTAL", Tag: load.TotalTag, Samples: total}
	return r
}

// BenchmarkMerge is what merging costs the controller after each level:
// 10 and 100 shards of a 60 s level, each shard 1,000 requests a second
// (100,000 req/s in all at 100 shards), merged interval by interval. The
// cost per histogram should not grow with the number of shards.
func BenchmarkMerge(b *testing.B) {
	const seconds, perSecond = 60, 1000
	for _, shards := range []int{10, 100} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			rs := make([]*load.Result, shards)
			for i := range rs {
				rs[i] = shardResult(b, i+1, shards, seconds, perSecond)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				m, err := load.Merge(rs...)
				if err != nil {
					b.Fatal(err)
				}
				if m.Summary.Total.Samples != int64(shards*seconds*perSecond) {
					b.Fatalf("merged %d samples", m.Summary.Total.Samples)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*shards*seconds), "ns/histogram")
		})
	}
}
