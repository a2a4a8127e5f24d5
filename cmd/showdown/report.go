package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/showdownlab/showdown/internal/report"
	"github.com/showdownlab/showdown/load/atomicfile"
)

func init() {
	register(&command{
		name:    "report",
		summary: "write report.html and summary.md for a results folder, a JMeter .jtl or a k6 JSON output",
		run:     runReport,
	})
}

func runReport(st *state, args []string) error {
	fs := newFlagSet(st, "report", "[flags] RESULTS\n\nRESULTS is a 'showdown run' results folder, a 'showdown attack --out' folder,\na JMeter results file in CSV form (.jtl) or a k6 JSON output (k6 run --out json=FILE).\nWithout --format, writes report.html and summary.md next to the results and prints their paths.\nThe verdicts of a showdown run are judged again from its rounds and probes with this version's\nestimator (--as-recorded keeps them as the run recorded them).")
	format := fs.String("format", "", "write only this `format`: html, md, json, csv, or terminal (the answer as make run prints it) (to --out, or standard output)")
	out := fs.String("out", "", "write to `file` instead (with --format; \"-\" is standard output)")
	p99 := fs.Duration("acceptable-p99", report.DefaultAcceptableP99Ms*time.Millisecond, "the headline's acceptable latency: the best throughput with a median p99 at most `d`")
	asRecorded := fs.Bool("as-recorded", false, "keep the verdicts as the run recorded them instead of judging them again with this version's estimator")
	errPct := fs.Float64("acceptable-errors", report.DefaultAcceptableErrorPercent, "... and at most this `percent` of errors")
	args, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usageError{err: fmt.Errorf("one results folder or file, got %d", len(args)), hint: "showdown report results/20260101T000000Z-default"}
	}
	switch *format {
	case "", report.FormatHTML, report.FormatMarkdown, report.FormatJSON, report.FormatCSV, report.FormatTerminal:
	default:
		return usageError{err: fmt.Errorf("--format %q: want html, md, json, csv or terminal", *format)}
	}
	if *p99 <= 0 || *errPct < 0 || *errPct > 100 {
		return usageError{err: fmt.Errorf("--acceptable-p99 must be positive and --acceptable-errors within 0-100"), hint: "--acceptable-p99 250ms --acceptable-errors 0.1"}
	}
	// The acceptable latency given on the command line wins over a
	// plan's objective (slo), which otherwise is what the headline uses.
	var opts []report.Option
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "acceptable-p99" || f.Name == "acceptable-errors" {
			opts = []report.Option{report.WithAcceptable(float64(*p99)/1e6, *errPct)}
		}
	})
	if !*asRecorded {
		opts = append(opts, report.WithRejudging())
	}
	if *out != "" && *format == "" {
		return usageError{err: fmt.Errorf("--out needs --format"), hint: "showdown report --format html --out report.html RESULTS"}
	}
	if *format == "" {
		dir := args[0]
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			dir = filepath.Dir(dir)
		}
		paths, err := report.WriteFiles(dir, args[0], opts...)
		for _, p := range paths {
			fmt.Fprintln(st.stdout, p)
		}
		return err
	}
	res, err := report.Load(args[0])
	if err != nil {
		return err
	}
	if *out == "" || *out == "-" {
		return report.WriteFormat(st.stdout, res, *format, opts...)
	}
	var b bytes.Buffer
	if err := report.WriteFormat(&b, res, *format, opts...); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}
