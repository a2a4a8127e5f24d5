package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/showdownlab/showdown/internal/lab"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/report"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

func init() {
	register(&command{
		name:    "run",
		summary: "run a whole experiment from a plan (default plans/default.yaml)",
		run:     runRun,
	})
}

func runRun(st *state, args []string) error {
	fs := newFlagSet(st, "run", "[flags] [plan.yaml]")
	resultsDir := fs.String("results", "", "folder for results (default: results/ in the project)")
	check := fs.Bool("check", false, "validate the plan, print it resolved, and stop")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usageError{err: fmt.Errorf("one plan at a time, got %d", fs.NArg()), hint: "showdown run plans/default.yaml"}
	}
	root, err := stack.Root(st.getenv)
	if err != nil {
		return err
	}
	planPath := filepath.Join(root, "plans", "default.yaml")
	if fs.NArg() == 1 {
		planPath = fs.Arg(0)
	}
	p, ms, err := loadPlan(st, root, planPath)
	if err != nil {
		return err
	}
	if err := connectionBudget(lab.CheckConnections(p, ms)); err != nil {
		return err
	}
	if *check && p.SLO != nil {
		fmt.Fprintf(st.stdout, "%s: ok: the capacity (%s) at %s of %d implementation(s) x %d workload(s), over %d fresh start(s)\n",
			planPath, p.Capacity.Unit(), p.SLO.String(), len(p.Implementations), len(p.Workloads), p.MinStarts())
		return nil
	}
	if *check {
		fmt.Fprintf(st.stdout, "%s: ok: %d implementation(s) x %d workload(s) x %d level(s) x %d trial(s)\n",
			planPath, len(p.Implementations), len(p.Workloads), len(p.Load.Levels), p.Trials)
		return nil
	}
	return executePlan(st, root, p, *resultsDir, "showdown run "+strings.Join(args, " "))
}

// executePlan runs a resolved plan, writes its report, prints the summary
// and decides the exit code.
func executePlan(st *state, root string, p *plan.Plan, resultsDir, command string) error {
	rn := &lab.Runner{
		Root:       root,
		ResultsDir: resultsDir,
		Progress:   st.stderr,
		TTY:        st.stderrTTY,
		Command:    command,
	}
	dir, rec, err := rn.Run(st.ctx, p)
	if dir != "" {
		// The report's summary.md (headlines, only measured columns)
		// replaces the runner's plain one, and is what the terminal shows.
		paths, rerr := report.WriteFiles(dir, dir)
		if rerr != nil {
			fmt.Fprintf(st.stderr, "showdown: report: %v\n", rerr)
		}
		if md, err := os.ReadFile(filepath.Join(dir, results.MarkdownSummaryFile)); err == nil {
			fmt.Fprintf(st.stdout, "\n%s", md)
		}
		fmt.Fprintf(st.stdout, "\nresults: %s\n", dir)
		for _, p := range paths {
			fmt.Fprintf(st.stdout, "report:  %s\n", p)
		}
	}
	if st.ctx.Err() != nil {
		return exitError{code: exitInterrupted, err: errors.New("interrupted; what was measured is in the results folder")}
	}
	if err != nil {
		return err
	}
	if n := problems(rec); n > 0 {
		return exitError{code: exitCheckFailed, err: fmt.Errorf("%d failed run(s) or invariant violation(s); see %s", n, filepath.Join(dir, results.MarkdownSummaryFile))}
	}
	if crossed := results.CrossedThresholds(rec); len(crossed) > 0 {
		for _, c := range crossed {
			fmt.Fprintf(st.stderr, "threshold crossed: %s\n", c)
		}
		return exitError{code: exitThresholds, err: fmt.Errorf("%d fail_if threshold(s) crossed; see %s", len(crossed), filepath.Join(dir, results.MarkdownSummaryFile))}
	}
	return nil
}

// loadPlan reads and validates a plan against the services under root,
// printing every problem; a plan with mistakes is a usage error.
func loadPlan(st *state, root, path string) (*plan.Plan, []*service.Manifest, error) {
	p, ms, err := stack.LoadPlan(root, path)
	var list plan.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(st.stderr, e.Error())
		}
		return nil, nil, usageError{err: fmt.Errorf("%s: %d problem(s); nothing was run", path, len(list)), hint: "plans/README.md describes every field"}
	}
	return p, ms, err
}

// problems counts failed service runs and invariant violations.
func problems(r *results.Run) int {
	n := 0
	for _, sr := range r.Services {
		if sr.Status != results.OK {
			n++
		}
		for _, l := range sr.Levels {
			n += len(l.Violations)
		}
	}
	for _, c := range r.Comparisons {
		n += len(c.Violations)
	}
	for _, c := range r.Capacities {
		n += len(c.Violations)
	}
	return n
}
