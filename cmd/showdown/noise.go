package main

import (
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/showdownlab/showdown/internal/capacity"
	"github.com/showdownlab/showdown/internal/cpulist"
	"github.com/showdownlab/showdown/internal/human"
	"github.com/showdownlab/showdown/internal/machine"
	"github.com/showdownlab/showdown/internal/noise"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/internal/wording"
)

func init() {
	register(&command{
		name:    "noise",
		summary: "measure how much this machine's own speed varies, and its own p99 latency floor, before trusting a spread",
		run:     runNoise,
	})
}

// runNoise runs the lab's machine-noise probe alone, for longer, and says
// how much the means of 6 and 10 seconds vary too: the floor under the
// trial-to-trial spread of levels that long. Then it measures this host's
// own p99 latency floor as the lab does before a capacity search
// (noise.MeasureLatency): the generator on the other CPUs, a trivial
// server on the first.
func runNoise(st *state, args []string) error {
	fs := newFlagSet(st, "noise", "[--seconds 61] [--cpus 0-1]")
	secs := fs.Int("seconds", 61, "seconds to measure (the first is dropped)")
	cpus := fs.String("cpus", "", "CPUs to probe at the same time (default: every CPU)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{err: fmt.Errorf("unexpected argument %q", fs.Arg(0)), hint: "showdown noise --seconds 61 --cpus 0-1"}
	}
	if *secs < 3 || *secs > 3600 {
		return usageError{err: fmt.Errorf("--seconds %d: want 3 to 3600", *secs), hint: "61 gives ten 6-second means"}
	}
	list := machine.CPUs() // under taskset, the CPUs it gave
	if *cpus != "" {
		var err error
		if list, err = cpulist.Parse(*cpus); err != nil {
			return usageError{err: fmt.Errorf("--cpus %q: %v", *cpus, err), hint: "a CPU list such as 0, 0-1 or 0,2"}
		}
	}
	fmt.Fprintf(st.stderr, "probing CPUs %v for %d s (%d MiB of dependent random reads each); run nothing else meanwhile\n", list, *secs, noise.WorkingSet>>20)
	f, err := noise.Measure(st.ctx, list, *secs)
	if err != nil {
		return err
	}
	fmt.Fprintf(st.stdout, "| CPU | per-second rate, min - max | CV of 1 s | CV of 6 s means | CV of 10 s means |\n|--:|--:|--:|--:|--:|\n")
	for i, c := range f.CPUs {
		r := f.Rates[i][1:]
		fmt.Fprintf(st.stdout, "| %d | %.0f - %.0f | %s | %s | %s |\n", c, slices.Min(r), slices.Max(r), pct(f.CV[i]), pct(meansCV(r, 6)), pct(meansCV(r, 10)))
	}
	fmt.Fprintf(st.stdout, "\nA service on this machine cannot be steadier than this: at a per-second noise of %s, a JIT runtime's warm-up needs about %d s of a plateau to show a rise under %s per 10 s.\n", pct(f.Max), stats.DefaultTrend.WindowFor(f.Max), pct(stats.DefaultTrend.MaxRise))
	return hostFloor(st, list)
}

// hostFloor measures and prints this host's own p99 floor: the trivial
// server pinned to the first of cpus, the generator (this process) to
// the others when there are any.
func hostFloor(st *state, cpus []int) error {
	server := cpus[0]
	if len(cpus) > 1 {
		if err := machine.PinTree(os.Getpid(), cpulist.Format(cpus[1:])); err != nil {
			fmt.Fprintf(st.stderr, "generator not pinned to CPUs %s: %v\n", cpulist.Format(cpus[1:]), err)
		}
	}
	fmt.Fprintf(st.stderr, "measuring this host's own latency floor: %.0f req/s for %v against a trivial server on CPU %d\n", noise.FloorRate, noise.FloorSeconds, server)
	l, err := noise.MeasureLatency(st.ctx, nil, server, 0, 0)
	if err != nil {
		return err
	}
	f := results.HostFloor(l)
	fmt.Fprintf(st.stdout, "\n%s.\nA latency objective tighter than %s (3x the floor) measures this host as much as a service.\n", wording.HostFloor(&f), human.Ms(float64(capacity.Resolvable(&f))/1e6))
	return nil
}

// meansCV is the CV of the means of consecutive n-value blocks of r;
// NaN with fewer than two blocks.
func meansCV(r []float64, n int) float64 {
	var means []float64
	for i := 0; i+n <= len(r); i += n {
		means = append(means, stats.Mean(r[i:i+n]))
	}
	if len(means) < 2 {
		return math.NaN()
	}
	return stats.CV(means)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", v*100)
}
