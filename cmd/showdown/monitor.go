package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/load/atomicfile"
)

func init() {
	register(&command{
		name:    "monitor",
		summary: "sample a process tree's CPU, RSS, threads and FDs to CSV",
		run:     runMonitor,
	})
}

func runMonitor(st *state, args []string) (rerr error) {
	fs := newFlagSet(st, "monitor", "--pid PID [flags]")
	pid := fs.Int("pid", 0, "process to sample, with all its descendants (required)")
	interval := fs.Duration("interval", monitor.DefaultInterval, "time between samples")
	duration := fs.Duration("duration", 0, "stop after this long (0: until the process exits or Ctrl-C)")
	out := fs.String("out", "-", "CSV file to write (- for stdout)")
	rootOnly := fs.Bool("root-only", false, "sample only the process itself, not its descendants")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		if n, err := strconv.Atoi(fs.Arg(0)); err == nil && *pid == 0 {
			*pid = n
		} else {
			return usageError{err: fmt.Errorf("unexpected argument %q", fs.Arg(0)), hint: "showdown monitor --pid PID [--out file.csv]"}
		}
	}
	if *pid <= 0 {
		return usageError{err: errors.New("--pid is required"), hint: "showdown monitor --pid $(pgrep -n myservice) --out samples.csv"}
	}
	if *interval < 10*time.Millisecond {
		return usageError{err: fmt.Errorf("--interval %v is too short", *interval), hint: "use 100ms or more; 1s matches the reports"}
	}
	var w io.Writer = st.stdout
	if *out != "-" {
		// The CSV appears whole when sampling ends (Ctrl-C included).
		f, err := atomicfile.Create(*out, 0o644)
		if err != nil {
			return err
		}
		defer f.Abort()
		bw := bufio.NewWriter(f)
		w = bw
		defer func() {
			if ferr := bw.Flush(); ferr != nil {
				if rerr == nil {
					rerr = ferr
				}
				return
			}
			if cerr := f.Commit(); cerr != nil && rerr == nil {
				rerr = cerr
			}
		}()
	}
	cw, err := monitor.NewCSVWriter(w)
	if err != nil {
		return err
	}
	ctx := st.ctx
	if *duration > 0 {
		var cancel func()
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	var opts []monitor.Option
	if *rootOnly {
		opts = append(opts, monitor.RootOnly())
	}
	var werr error
	err = monitor.Run(ctx, *pid, *interval, func(s monitor.Sample) {
		if werr == nil {
			werr = cw.Write(s)
		}
	}, opts...)
	if werr != nil {
		return werr
	}
	if errors.Is(err, monitor.ErrGone) {
		fmt.Fprintf(st.stderr, "showdown: process %d exited\n", *pid)
		err = nil
	}
	if err != nil {
		return err
	}
	if st.ctx.Err() != nil {
		return exitError{code: exitInterrupted}
	}
	return nil
}
