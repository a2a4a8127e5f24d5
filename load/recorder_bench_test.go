package load

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkRecorderFlush times one second's flush of a one-step scenario
// at 22,000 requests a second: the work the engine's interval goroutine
// takes the generator's processor for, once a second.
func BenchmarkRecorderFlush(b *testing.B) {
	r := newRecorder([]string{"POST /uppercase"}, 10, 0)
	r.beginLocked(time.Now())
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		b.StopTimer()
		for range 22000 {
			d := time.Duration(40_000 + rng.ExpFloat64()*60_000)
			r.record(0, d, d-10_000, time.Duration(rng.ExpFloat64()*40_000), 100, 120, 200, "")
		}
		b.StartTimer()
		r.flush(time.Now(), 2)
	}
}
