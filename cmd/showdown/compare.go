package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/showdownlab/showdown/internal/report"
)

func init() {
	register(&command{
		name:    "compare",
		summary: "compare results like benchstat: before/after, or implementations inside one run",
		run:     runCompare,
	})
}

func runCompare(st *state, args []string) error {
	fs := newFlagSet(st, "compare", "[flags] A B [C...]\n       showdown compare --between SEL,SEL RESULTS\n\nFor every implementation x workload x level measured on both sides: the change in\nthroughput, p50, p99, CPU and peak RSS, with Welch's t-test over trials (\"~\": within noise).\nA is the base; B, C... are each compared with it. With --between, one results folder\nis split into two sides by selectors such as logging=off,logging=on (a variant or an\nenvironment variable), service=go-stdlib,service=node-http, or two implementation ids.")
	between := fs.String("between", "", "compare inside one results folder: `sel1,sel2` (key=value or implementation id)")
	asJSON := fs.Bool("json", false, "print the deltas as JSON")
	args, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	type pair struct{ base, other *report.Side }
	var pairs []pair
	if *between != "" {
		if len(args) != 1 {
			return usageError{err: fmt.Errorf("--between compares inside one results folder, got %d", len(args)), hint: "showdown compare --between logging=off,logging=on results/RUN"}
		}
		parts := strings.Split(*between, ",")
		if len(parts) != 2 {
			return usageError{err: fmt.Errorf("--between %q: want two selectors separated by a comma", *between), hint: "--between logging=off,logging=on"}
		}
		a, err1 := report.ParseSelector(parts[0])
		b, err2 := report.ParseSelector(parts[1])
		if err := errors.Join(err1, err2); err != nil {
			return usageError{err: fmt.Errorf("--between: %w", err)}
		}
		res, err := report.Load(args[0])
		if err != nil {
			return err
		}
		sa, sb, err := report.BetweenSides(res, a, b)
		if err != nil {
			return usageError{err: err, hint: "selectors match a service, a variant, an implementation id or an env var: key=value"}
		}
		pairs = append(pairs, pair{sa, sb})
	} else {
		if len(args) < 2 {
			return usageError{err: fmt.Errorf("need at least two results to compare, got %d", len(args)), hint: "showdown compare results/before results/after"}
		}
		var sides []*report.Side
		for _, p := range args {
			res, err := report.Load(p)
			if err != nil {
				return err
			}
			sides = append(sides, report.SideOf(p, report.Summarize(res)))
		}
		for _, o := range sides[1:] {
			pairs = append(pairs, pair{sides[0], o})
		}
	}
	type jsonPair struct {
		Base   string         `json:"base"`
		New    string         `json:"new"`
		Deltas []report.Delta `json:"deltas"`
	}
	var js []jsonPair
	for i, p := range pairs {
		ds := report.CompareSides(p.base, p.other)
		if *asJSON {
			js = append(js, jsonPair{p.base.Name, p.other.Name, ds})
			continue
		}
		if i > 0 {
			fmt.Fprintln(st.stdout)
		}
		report.WriteComparison(st.stdout, p.base, p.other, ds)
	}
	if *asJSON {
		enc := json.NewEncoder(st.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(js)
	}
	return nil
}
