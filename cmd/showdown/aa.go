package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/stack"
)

func init() {
	register(&command{
		name:    "aa",
		summary: "the machine checked against itself: one implementation against its own second start, in interleaved rounds",
		run:     runAA,
	})
}

func runAA(st *state, args []string) error {
	fs := newFlagSet(st, "aa", "[flags]")
	svc := fs.String("service", "go-stdlib", "the implementation started twice (same build, separate starts)")
	workload := fs.String("workload", "string", "the workload")
	level := fs.Int("level", 50, "the closed model's users")
	trials := fs.Int("trials", plan.DefaultInterleavedTrials, "fresh starts of both")
	round := fs.Duration("round", plan.DefaultRound, "each arm's measured interval in a round")
	measureMax := fs.Duration("measure-max", plan.DefaultMeasureMax, "the rounds' time over all starts")
	precision := fs.Float64("precision", 100*plan.DefaultPrecision, "the interval's half-width to reach, in percent")
	warmupMax := fs.Duration("warmup-max", plan.DefaultWarmupMax, "the warm-up's cap (it stops earlier once steady)")
	duration := fs.Duration("duration", 6*time.Second, "each arm's level measured alone in a start, before the rounds")
	warmup := fs.String("warmup", "auto", "auto (until steady, at most --warmup-max) or a fixed time such as 5s")
	serviceCPUs := fs.String("service-cpus", "", "the services' CPU list (default: the plan default, CPU 0 on 2+ CPUs)")
	generatorCPUs := fs.String("generator-cpus", "", "the generator's CPU list (with --service-cpus)")
	neighbour := fs.Bool("neighbour", false, "run a noisy neighbour on the service's CPUs")
	resultsDir := fs.String("results", "", "folder for results (default: results/ in the project)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{err: fmt.Errorf("unexpected arguments %q", fs.Args()), hint: "showdown aa --service go-stdlib"}
	}
	root, err := stack.Root(st.getenv)
	if err != nil {
		return err
	}
	text := fmt.Sprintf(`name: aa-%s
description: %s against its own second start on %s at %d users, in interleaved rounds
implementations: [%s]
workloads: [%s]
aa: true
neighbour: %v
trials: %d
round: %s
measure_max: %s
precision: %g%%
verify: quick
load:
  model: closed
  levels: [%d]
  duration: %s
  warmup: %s
  warmup_max: %s
`, *svc, *svc, *workload, *level, *svc, *workload, *neighbour, *trials, *round, *measureMax, *precision, *level, *duration, *warmup, *warmupMax)
	if *serviceCPUs != "" || *generatorCPUs != "" {
		if *serviceCPUs == "" || *generatorCPUs == "" {
			return usageError{err: errors.New("--service-cpus and --generator-cpus go together"), hint: "showdown aa --service-cpus 2 --generator-cpus 10"}
		}
		text += fmt.Sprintf("placement: {service_cpus: %q, generator_cpus: %q, database_cpus: %q}\n", *serviceCPUs, *generatorCPUs, *generatorCPUs)
	}
	p, _, err := stack.ParsePlan(root, "showdown aa", []byte(text), thisMachine())
	if err != nil {
		var list plan.ErrorList
		if errors.As(err, &list) {
			var msgs []string
			for _, e := range list {
				msgs = append(msgs, e.Msg)
			}
			return usageError{err: errors.New(strings.Join(msgs, "; ")), hint: "showdown aa -h lists the flags"}
		}
		return err
	}
	return executePlan(st, root, p, *resultsDir, "showdown aa "+strings.Join(args, " "))
}
