package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/showdownlab/showdown/internal/jmx"
	"github.com/showdownlab/showdown/load/atomicfile"
)

func init() {
	register(&command{
		name:    "import",
		summary: "turn another tool's test plan into a scenario (import jmx PLAN.jmx)",
		run:     runImport,
	})
}

const importSynopsis = `jmx [--strict] [--out FILE.yaml] [-J name=value ...] PLAN.jmx

Writes the scenario of a JMeter 5 test plan to FILE.yaml (default: the plan's
name with .yaml, in the current folder) and its thread group's load to
FILE.load.yaml, then lists every element it did not translate with its line.
A rate timer (Constant Throughput, Precise Throughput, Throughput Shaping)
makes the load an open model at its rate, the threads its connections.
A property with no default (${__P(NAME)}) needs -J NAME=VALUE where the plan
wants a constant (threads, server, timer); in a request it becomes a scenario
variable for attack --var. docs/jmeter.md says what each element becomes.`

func runImport(st *state, args []string) error {
	fs := newFlagSet(st, "import", importSynopsis)
	strict := fs.Bool("strict", false, "refuse the plan (write nothing, exit 1) when an element cannot be translated")
	out := fs.String("out", "", "write the scenario to `FILE.yaml`")
	var props stringList
	fs.Var(&props, "J", "set the property `name=value` of ${__P(name,default)}, as JMeter's -J does (repeatable)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	hint := "run 'showdown help import'"
	if len(pos) != 2 || pos[0] != "jmx" {
		return usageError{err: errors.New("want: showdown import jmx PLAN.jmx"), hint: hint}
	}
	plan := pos[1]
	properties := map[string]string{}
	for _, p := range props {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return usageError{err: fmt.Errorf("-J %q: want name=value", p), hint: hint}
		}
		properties[name] = value
	}
	data, err := os.ReadFile(plan)
	if err != nil {
		return fmt.Errorf("cannot read the plan: %w", err)
	}
	if *out == "" {
		*out = strings.TrimSuffix(filepath.Base(plan), filepath.Ext(plan)) + ".yaml"
	}
	res, err := jmx.Import(plan, data, jmx.Options{ScenarioPath: *out, Properties: properties})
	var missing *jmx.MissingPropertiesError
	if errors.As(err, &missing) {
		return usageError{err: err, hint: missing.Hint()}
	}
	if err != nil {
		return err
	}
	w := st.stdout
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "Not translated (%d):\n", len(res.Skipped))
		for _, p := range res.Skipped {
			fmt.Fprintf(w, "  %s:%d: %s %q: %s\n", plan, p.Line, p.Type, p.Name, p.Reason)
		}
	}
	if *strict && len(res.Skipped) > 0 {
		return exitError{code: exitFailure, err: fmt.Errorf("--strict: %d element(s) of %s cannot be translated; nothing written", len(res.Skipped), plan)}
	}
	if len(res.Became) > 0 {
		fmt.Fprintln(w, "Translated into the load:")
		for _, p := range res.Became {
			fmt.Fprintf(w, "  %s:%d: %s %q %s\n", plan, p.Line, p.Type, p.Name, p.Reason)
		}
	}
	if len(res.Ignored) > 0 {
		fmt.Fprintf(w, "Ignored (%d):\n", len(res.Ignored))
		for _, p := range res.Ignored {
			fmt.Fprintf(w, "  %s:%d: %s %q: %s\n", plan, p.Line, p.Type, p.Name, p.Reason)
		}
	}
	if len(res.Notes) > 0 {
		fmt.Fprintln(w, "Differences from JMeter:")
		for _, n := range res.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	loadPath := strings.TrimSuffix(*out, filepath.Ext(*out)) + ".load.yaml"
	if err := atomicfile.WriteFile(*out, res.Scenario, 0o644); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(loadPath, res.Load.YAML(*out), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "Wrote %s (scenario) and %s (load). Run it with:\n  showdown attack %s\n",
		*out, loadPath, strings.Join(res.Load.AttackArgs(*out), " "))
	for _, u := range res.Unset {
		fmt.Fprintf(w, "  --var %s=VALUE: property %s has no default in the plan (JMeter's -J %s=VALUE); without it the scenario sends %q, as JMeter would\n",
			u.Var, u.Name, u.Name, u.Value)
	}
	return nil
}
