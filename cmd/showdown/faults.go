package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/faults"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/workloads"
)

// faultDatabases starts the durable PostgreSQL the fault test needs.
// Tests replace it to share one server across several stacks.
var faultDatabases = func(ctx context.Context, progress io.Writer) (*stack.Databases, error) {
	return stack.StartDatabases(ctx, []workloads.Engine{workloads.Postgres}, stack.DatabaseOptions{Progress: progress, Durable: true})
}

// verifyFaults runs the bank under faults against each built target, one
// after the other on one durable database, and prints the table.
func verifyFaults(st *state, o verifyOptions, targets []*service.Manifest, wls map[string][]string, built map[string]bool, broken []string, out io.Writer) error {
	ctx := st.ctx
	dbs, err := faultDatabases(ctx, st.stderr)
	if err != nil {
		return err
	}
	defer dbs.Stop()
	fmt.Fprintln(st.stderr, db.DurableSettings(true))

	o.fault.Progress = st.stderr
	var tests []*results.FaultTest
	for _, m := range targets {
		if len(wls[m.Name]) == 0 {
			fmt.Fprintf(st.stderr, "skipping %s: it does not serve bank\n", m.Name)
			continue
		}
		if !built[m.Name] {
			continue
		}
		tail := 20
		if o.verbose {
			tail = 0 // the service's output went to stderr already
		}
		ft, err := faults.RunStack(ctx, m, "", dbs, stack.ServiceOptions{Log: out, HealthTimeout: o.healthTimeout}, o.fault, tail)
		if ctx.Err() != nil {
			return nil // the caller's deferred check turns this into exitInterrupted
		}
		if err != nil {
			if len(targets) == 1 {
				return err
			}
			fmt.Fprintf(st.stderr, "showdown: %s: %v\n", m.Name, err)
			broken = append(broken, m.Name)
			continue
		}
		tests = append(tests, ft)
	}
	fmt.Fprintf(st.stdout, "bank under faults: %d workers, %s per fault, db-pause %s; %s\n",
		o.fault.Workers, o.fault.PerFault, o.fault.Pause, db.DurableSettings(true))
	if err := faults.WriteTable(st.stdout, tests); err != nil {
		return err
	}
	var failed []string
	for _, ft := range tests {
		if ft.Verdict != "pass" {
			failed = append(failed, ft.Stack)
		}
	}
	switch {
	case len(broken) > 0:
		return exitError{code: exitFailure, err: fmt.Errorf("could not build, start or test: %s (errors above)", strings.Join(broken, ", "))}
	case len(failed) > 0:
		return exitError{code: exitCheckFailed, err: fmt.Errorf("lost, phantom or unrecovered transfers: %s", strings.Join(failed, ", "))}
	}
	return nil
}
