package main

import (
	"errors"
	"fmt"

	"github.com/showdownlab/showdown/load"
)

func init() {
	register(&command{
		name:    "merge",
		summary: "combine the results of 'attack --shard i/N' runs into one",
		run:     runMerge,
	})
}

func runMerge(st *state, args []string) error {
	fs := newFlagSet(st, "merge", "DIR... --out DIR\n\nMerges the result directories of the shards of one attack: counts are summed and\nHdrHistograms merged interval by interval, so percentiles are exact.")
	out := fs.String("out", "", "write the merged result to `dir`")
	latency := fs.Bool("latency", false, "print the detailed latency percentile spectrum")
	var failIf stringList
	fs.Var(&failIf, "fail-if", "fail (exit 3) when `condition` holds, as in attack (repeatable)")
	dirs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	var errs []error
	if len(dirs) == 0 {
		errs = append(errs, errors.New("no result directories given"))
	}
	if *out == "" {
		errs = append(errs, errors.New("--out: where should the merged result go?"))
	}
	var ts []load.Threshold
	for _, e := range failIf {
		t, err := load.ParseThreshold(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("--fail-if: %w", err))
			continue
		}
		ts = append(ts, t)
	}
	if len(errs) > 0 {
		return usageError{err: errors.Join(errs...), hint: "showdown merge shard1/ shard2/ --out merged/"}
	}
	var results []*load.Result
	for _, d := range dirs {
		r, err := load.ReadDir(d)
		if err != nil {
			return fmt.Errorf("reading %s: %w", d, err)
		}
		results = append(results, r)
	}
	merged, err := load.Merge(results...)
	if err != nil {
		return err
	}
	if err := merged.WriteDir(*out); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	load.WriteReport(st.stdout, merged)
	if *latency {
		fmt.Fprintln(st.stdout)
		load.WriteSpectrum(st.stdout, merged, "")
	}
	fmt.Fprintf(st.stdout, "merged %d results into %s\n", len(results), *out)
	return checkThresholds(st, merged, ts)
}
