// Package noise measures how steady the machine itself is: the floor
// under every spread showdown reports.
//
// A virtual machine's CPUs share caches, memory bandwidth and cores with
// other tenants of its host, and the hypervisor does not report that as
// steal time. On the 2-core machine showdown is developed on, a loop of
// dependent random reads over a few MiB, pinned to one CPU with nothing
// else running, does 25-35% more or less work from one second to the
// next, and a Go HTTP server saturated at 50 users needs 30 µs of CPU
// per request in some seconds and 55 µs in others, with the same system
// calls per request (plans/README.md, "The machine's own noise"). No
// warm-up rule or trial count can make a service steadier than the
// machine it runs on; Measure says how steady that is, so that the lab
// can hold each service to it and say so beside the figures.
package noise

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/showdownlab/showdown/internal/stats"
)

// WorkingSet is the probe's memory: larger than a core's private caches,
// small enough to live in the shared last-level cache, where a server's
// hot data lives and where other tenants' traffic is felt.
const WorkingSet = 4 << 20

// DefaultSeconds is how long the lab measures: the steady-state rule's
// window and one second to settle.
const DefaultSeconds = stats.DefaultSteadyWindow + 1

// Floor is the machine's own per-second variation.
//
// results.NoiseFloor mirrors it field for field, on purpose: the results
// model may not import the probe (importRules in internal/imports_test.go),
// so the command converts one to the other (results.NoiseFloor(f)), a
// conversion that stops compiling the day the two differ. A field added
// here is added there.
type Floor struct {
	// Seconds measured (the first is dropped from the figures).
	Seconds int `json:"seconds"`
	// CPUs measured at the same time, one probe each.
	CPUs []int `json:"cpus"`
	// Rates are each CPU's probe iterations per second.
	Rates [][]float64 `json:"rates"`
	// CV is each CPU's coefficient of variation of its rates.
	CV []float64 `json:"cv"`
	// Max is the largest CV: the floor.
	Max float64 `json:"max_cv"`
}

// Measure runs one probe per CPU in cpus at the same time for seconds
// seconds (0: DefaultSeconds; a machine under load, as in a run) and returns the variation
// of their per-second rates. Nothing else should run meanwhile.
func Measure(ctx context.Context, cpus []int, seconds int) (Floor, error) {
	if seconds == 0 {
		seconds = DefaultSeconds
	}
	if seconds < 3 {
		return Floor{}, fmt.Errorf("noise: %d seconds: want at least 3", seconds)
	}
	if len(cpus) == 0 {
		return Floor{}, fmt.Errorf("noise: no CPUs to measure")
	}
	f := Floor{Seconds: seconds, CPUs: cpus, Rates: make([][]float64, len(cpus)), CV: make([]float64, len(cpus))}
	errs := make([]error, len(cpus))
	start := time.Now().Add(50 * time.Millisecond)
	var wg sync.WaitGroup
	for i, cpu := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Rates[i], errs[i] = probe(ctx, cpu, start, seconds)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return Floor{}, err
		}
		r := f.Rates[i][1:]
		f.CV[i] = round(stats.CV(r))
		f.Max = math.Max(f.Max, f.CV[i])
	}
	return f, ctx.Err()
}

// probe pins its own OS thread to cpu and counts dependent random reads
// over WorkingSet per wall-clock second, from start. The thread is not
// handed back to the runtime (the goroutine ends locked to it, so Go
// ends the thread): no other goroutine inherits the pinning.
func probe(ctx context.Context, cpu int, start time.Time, seconds int) ([]float64, error) {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("noise: pin a probe to CPU %d: %w", cpu, err)
	}
	mem := make([]uint32, WorkingSet/4)
	x := uint32(cpu*7919 + 1)
	for i := range mem {
		x = x*1664525 + 1013904223
		mem[i] = x
	}
	time.Sleep(time.Until(start))
	rates := make([]float64, 0, seconds)
	n := uint32(len(mem))
	for s := 1; s <= seconds && ctx.Err() == nil; s++ {
		end := start.Add(time.Duration(s) * time.Second)
		var count float64
		for time.Now().Before(end) {
			for i := uint32(0); i < 4096; i++ {
				x = mem[(x*2654435761+i)%n] ^ x
			}
			count++
		}
		rates = append(rates, count)
	}
	sink.Store(x)
	if len(rates) < 2 {
		return nil, ctx.Err()
	}
	return rates, nil
}

func round(v float64) float64 { return math.Round(v*10000) / 10000 }

// sink keeps the probe's reads from being optimised away.
var sink atomic.Uint32
