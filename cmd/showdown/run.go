package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/showdownlab/showdown/internal/faults"
	"github.com/showdownlab/showdown/internal/lab"
	"github.com/showdownlab/showdown/internal/machine"
	"github.com/showdownlab/showdown/internal/neighbour"
	"github.com/showdownlab/showdown/internal/noise"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/report"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/internal/verify"
	"github.com/showdownlab/showdown/internal/wording"
	"github.com/showdownlab/showdown/load"
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
	cpus := fs.String("cpus", "", "with --check: check the plan for another machine, of `N` CPUs (16) or with a CPU list (0-15), instead of this one")
	against := fs.String("against", "", "compare each implementation of the plan (or the stack of a folder given instead of a plan) with itself at git revision `REV` (HEAD~1, main, a hash): the revision is the baseline of fail_if (docs/your-change.md)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usageError{err: fmt.Errorf("one plan at a time, got %d", fs.NArg()), hint: "showdown run plans/default.yaml"}
	}
	m, on := thisMachine(), ""
	if *cpus != "" {
		if !*check {
			return usageError{err: errors.New("--cpus checks a plan for another machine and goes with --check; a run uses this machine's CPUs"), hint: "showdown run --check --cpus 16 bench/cores.yaml"}
		}
		var err error
		if m, err = plan.ParseMachine(*cpus); err != nil {
			return usageError{err: fmt.Errorf("--cpus: %w", err), hint: "a count of CPUs (--cpus 16) or a CPU list in taskset's form (--cpus 0-15, --cpus 2,3)"}
		}
		on = " on CPUs " + m.String()
	}
	root, err := stack.Root(st.getenv)
	if err != nil {
		return err
	}
	planPath := filepath.Join(root, "plans", "default.yaml")
	if fs.NArg() == 1 {
		planPath = fs.Arg(0)
	}
	var (
		p  *plan.Plan
		ms []*service.Manifest
	)
	if *against != "" && fs.NArg() == 1 && isStackFolder(planPath) {
		p, ms, err = loadFolderAgainst(st, root, planPath, *against, m)
	} else {
		p, ms, err = loadPlanAgainst(st, root, planPath, m, *against)
	}
	if err != nil {
		return err
	}
	if err := connectionBudget(lab.CheckConnections(p, ms)); err != nil {
		return err
	}
	if *check && p.SLO != nil {
		fmt.Fprintf(st.stdout, "%s: ok%s: the capacity (%s) at %s of %d implementation(s) x %d workload(s), over %d fresh start(s)\n",
			planPath, on, p.Capacity.Unit(), p.SLO.String(), len(p.Implementations), len(p.Workloads), p.MinStarts())
		return nil
	}
	if *check {
		fmt.Fprintf(st.stdout, "%s: ok%s: %d implementation(s) x %d workload(s) x %d level(s) x %d trial(s)\n",
			planPath, on, len(p.Implementations), len(p.Workloads), len(p.Load.Levels), p.Trials)
		for _, line := range compareLines(p) {
			fmt.Fprintln(st.stdout, line)
		}
		return nil
	}
	return executePlan(st, root, p, *resultsDir, "showdown run "+strings.Join(args, " "))
}

// labSteps are the parts of a run that the lab calls and their own
// packages own.
var labSteps = lab.Steps{
	Noise: func(ctx context.Context, cpus []int, seconds int) (results.NoiseFloor, error) {
		f, err := noise.Measure(ctx, cpus, seconds)
		return results.NoiseFloor(f), err
	},
	HostFloor: func(ctx context.Context, a *load.Attacker, serverCPU int) (results.HostFloor, error) {
		l, err := noise.MeasureLatency(ctx, a, serverCPU, 0, 0)
		return results.HostFloor(l), err
	},
	Neighbour: neighbour.StartOn,
	Contract:  verify.RunEach,
	Faults:    faults.RunPlan,
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
		Steps:      labSteps,
	}
	dir, rec, err := rn.Run(st.ctx, p)
	if dir != "" {
		// The report's summary.md (headlines, only measured columns)
		// replaces the runner's plain one, and is what the terminal shows.
		paths, rerr := report.WriteFiles(dir, dir)
		if rerr != nil {
			fmt.Fprintf(st.stderr, "showdown: report: %v\n", rerr)
		}
		// The terminal gets the answer's narrow form where it has one
		// (report.TerminalWidth columns); summary.md keeps the wide table.
		if res, lerr := report.Load(dir); lerr == nil && report.HasTerminalForm(res) {
			fmt.Fprintln(st.stdout)
			report.WriteTerminal(st.stdout, res, report.TerminalWidth)
			fmt.Fprintf(st.stdout, "\nevery ratio's interval, the verdict's every line and the wide table: %s\n", filepath.Join(dir, results.MarkdownSummaryFile))
		} else if md, err := os.ReadFile(filepath.Join(dir, results.MarkdownSummaryFile)); err == nil {
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
	crossed := results.CrossedThresholds(rec)
	for _, c := range crossed {
		fmt.Fprintf(st.stderr, "threshold crossed: %s\n", c)
	}
	slower := results.CrossedSlower(rec)
	for _, s := range slower {
		fmt.Fprintf(st.stderr, "%s\n", wording.Slower(s))
	}
	if n := len(crossed) + len(slower); n > 0 {
		return exitError{code: exitThresholds, err: fmt.Errorf("%d fail_if threshold(s) crossed; see %s", n, filepath.Join(dir, results.MarkdownSummaryFile))}
	}
	return nil
}

// thisMachine is the machine plans run on here: the CPUs this process
// could run on at its start (under taskset -c 2-3, CPUs 2 and 3).
func thisMachine() plan.Machine { return plan.Machine{CPUs: machine.CPUs()} }

// loadPlan reads and validates a plan against the services under root and
// machine m, printing every problem; a plan with mistakes is a usage
// error.
func loadPlan(st *state, root, path string, m plan.Machine) (*plan.Plan, []*service.Manifest, error) {
	return loadPlanAgainst(st, root, path, m, "")
}

// loadPlanAgainst is loadPlan with every implementation compared against
// itself at git revision against (run --against; empty: none).
func loadPlanAgainst(st *state, root, path string, m plan.Machine, against string) (*plan.Plan, []*service.Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	p, ms, err := stack.ParsePlanAgainst(root, path, data, m, against)
	return reportPlan(st, path, p, ms, err)
}

// reportPlan prints every mistake of a plan that does not validate and
// makes it a usage error (exit 2, nothing run).
func reportPlan(st *state, path string, p *plan.Plan, ms []*service.Manifest, err error) (*plan.Plan, []*service.Manifest, error) {
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
		for _, rd := range c.Rounds {
			for _, a := range rd.Arms {
				if a.Writes != nil {
					n += len(a.Writes.Violations)
				}
			}
		}
	}
	for _, c := range r.Capacities {
		n += len(c.Violations)
	}
	return n
}
