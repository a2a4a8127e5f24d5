// Command warmup-cold runs a load command against a cold service, samples
// the service's JIT compiler threads once a second meanwhile, and then
// applies the lab's warm-up rule (package warmup) to that one process's
// per-second series offline: it prints where the rule would have ended
// the warm-up and how the rule's steady window's throughput compares with
// the last seconds of the process. bench/warmup-cold.sh drives it.
//
//	warmup-cold -pid PID -out DIR [-last 40s] -- bin/showdown attack ... --out DIR ...
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/internal/warmup"
	"github.com/showdownlab/showdown/load"
)

// Reading is one second's compiler reading.
type Reading struct {
	CPU     time.Duration `json:"cpu_ns"`
	Runtime string        `json:"runtime"`
}

// Outcome is what the bench found, written to DIR/warmup-cold.json.
type Outcome struct {
	Throughput  []float64          `json:"throughput"`
	Readings    []Reading          `json:"compiler_readings"`
	Warmup      *results.WarmupRun `json:"warmup"`
	Stopped     int                `json:"stopped_at_s"`
	WindowMean  float64            `json:"window_mean"`
	LastMean    float64            `json:"last_mean"`
	LastSeconds int                `json:"last_seconds"`
	Ratio       float64            `json:"ratio"`
}

func main() {
	pid := flag.Int("pid", 0, "the service's process id (its tree is watched)")
	out := flag.String("out", "", "the load command's --out folder (timeseries.csv); warmup-cold.json is written there")
	last := flag.Duration("last", 40*time.Second, "compare the rule's steady window with this last part of the run")
	capD := flag.Duration("cap", 4*time.Minute, "the warm-up's cap (warmup_max)")
	flag.Parse()
	if *pid <= 0 || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: warmup-cold -pid PID -out DIR [-last 40s] -- LOAD COMMAND ...")
		os.Exit(2)
	}
	o, err := run(*pid, *out, *last, *capD, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "warmup-cold:", err)
		os.Exit(1)
	}
	report(o)
	b, _ := json.MarshalIndent(o, "", " ")
	if err := os.WriteFile(filepath.Join(*out, "warmup-cold.json"), b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "warmup-cold:", err)
		os.Exit(1)
	}
	if o.Ratio < 0.95 {
		os.Exit(3)
	}
}

// run runs the load command, reading the compiler once a second from its
// start, then replays the rule.
func run(pid int, out string, last, capD time.Duration, argv []string) (*Outcome, error) {
	o := &Outcome{LastSeconds: int(last / time.Second)}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	read := func() {
		cpu, rt := monitor.Compiler(int32(pid))
		mu.Lock()
		o.Readings = append(o.Readings, Reading{cpu, rt})
		mu.Unlock()
	}
	read()
	if err := cmd.Start(); err != nil {
		stop()
		return nil, err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				read()
			}
		}
	}()
	err := cmd.Wait()
	stop()
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", argv[0], err)
	}
	s, err := load.ReadSeries(out)
	if err != nil {
		return nil, err
	}
	o.Throughput = s.Col("throughput")
	if len(o.Throughput) < o.LastSeconds+stats.DefaultTrendMinWindow {
		return nil, fmt.Errorf("%d seconds of load: too short for the rule and the last %d s", len(o.Throughput), o.LastSeconds)
	}
	// The rule as the lab applies it, second by second, up to the cap.
	w := warmup.NewWatch(plan.Warmup{Auto: true, Max: plan.Duration(capD)}, false)
	i := 0
	w.WatchRuntime(func() (time.Duration, string) {
		r := o.Readings[min(i, len(o.Readings)-1)]
		i++
		return r.CPU, r.Runtime
	})
	limit := min(len(o.Throughput), int(capD/time.Second))
	for s := 0; s < limit && o.Stopped == 0; s++ {
		if w.Observe(o.Throughput[s], 0) {
			o.Stopped = s + 1
		}
	}
	o.Warmup = w.Record
	o.LastMean = stats.Mean(o.Throughput[len(o.Throughput)-o.LastSeconds:])
	end := o.Stopped
	if end == 0 { // the cap: the lab measures from there
		end = limit
	}
	o.WindowMean = stats.Mean(o.Throughput[end-max(w.Record.Window, 1) : end])
	o.Ratio = o.WindowMean / o.LastMean
	return o, nil
}

func report(o *Outcome) {
	wu := o.Warmup
	fmt.Printf("\nrule %s (runtime %q): ", wu.Rule, wu.Runtime)
	if o.Stopped > 0 {
		fmt.Printf("steady after %d s", o.Stopped)
	} else {
		fmt.Printf("NOT steady within the cap")
	}
	fmt.Printf(", window %d s, rise %+.2f%% per 10 s, upper end %+.2f%% (bound %.1f%%)\n", wu.Window, 100*wu.Rise, 100*wu.RiseHigh, 100*wu.MaxRise)
	if n := len(wu.CompilerCPU); n > 0 {
		fmt.Printf("compiler threads over the window's last 10 s: %.1f%% of a CPU\n", stats.Mean(wu.CompilerCPU[max(0, n-warmup.CompilerWindow):]))
	}
	verdict := "not more than 5% lower: the target"
	if o.Ratio < 0.95 {
		verdict = "MORE THAN 5% LOWER"
	}
	fmt.Printf("steady window %.0f req/s, last %d s of %d: %.0f req/s; ratio %.3f (%s)\n", o.WindowMean, o.LastSeconds, len(o.Throughput), o.LastMean, o.Ratio, verdict)
}
