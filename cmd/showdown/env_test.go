package main

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/faults"
	"github.com/showdownlab/showdown/internal/k8s"
	"github.com/showdownlab/showdown/internal/lab"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

// TestArmEnvAgrees: an arm starts with one environment whichever command
// starts it. For a plan with cores, variants and env, run (lab.ArmEnv),
// up --plan (planTargets) and the fault test (faults.ArmEnv) give every
// arm the same environment, the stack's cores knob included; k8s render,
// which refuses cores, gives the same plan without them the same
// environment as the others do, beside the addresses it sets itself.
func TestArmEnvAgrees(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const body = `name: env
implementations:
  - node-http
  - {service: node-http, variant: pinned, env: {WORKERS: "3"}}
  - {service: go-stdlib, variant: logged, env: {LOG_REQUESTS: "true", GOGC: "200"}}
workloads: [string]
load: {levels: [10]}
env: {EXTRA: plan, DB_POOL_SIZE: "8"}
`
	parse := func(text string) (*plan.Plan, []*service.Manifest) {
		t.Helper()
		p, all, err := stack.ParsePlan(root, filepath.Join(root, "plans", "env.yaml"), []byte(text), plan.MachineOf(8))
		if err != nil {
			t.Fatal(err)
		}
		return p, all
	}
	p, all := parse(body + "cores: [1, 2]\n")
	targets, arms := planTargets(p, all, nil), p.Arms()
	if len(targets) != len(arms) || len(targets) != 6 {
		t.Fatalf("%d targets for %d arms, want 6", len(targets), len(arms))
	}
	want := map[string]map[string]string{
		"node-http@2":        {"EXTRA": "plan", "DB_POOL_SIZE": "8", "LOG_REQUESTS": "false", "WORKERS": "2"},
		"node-http+pinned@2": {"EXTRA": "plan", "DB_POOL_SIZE": "8", "LOG_REQUESTS": "false", "WORKERS": "3"},
		"go-stdlib+logged@1": {"EXTRA": "plan", "DB_POOL_SIZE": "8", "LOG_REQUESTS": "true", "GOGC": "200"},
	}
	runEnv := map[string]map[string]string{}
	for i, im := range arms {
		m, _ := service.Lookup(all, im.Service)
		run, up := lab.ArmEnv(p, im, m), targets[i].env
		runEnv[im.ID()] = run
		if targets[i].id != im.ID() {
			t.Errorf("up --plan's target %d is %s, want %s", i, targets[i].id, im.ID())
		}
		if !maps.Equal(run, up) {
			t.Errorf("%s: run %v, up --plan %v: want one environment", im.ID(), run, up)
		}
		if w, ok := want[im.ID()]; ok && !maps.Equal(run, w) {
			t.Errorf("%s starts with %v, want %v", im.ID(), run, w)
		}
		delete(want, im.ID())
	}
	if len(want) > 0 {
		t.Errorf("arms not in the plan: %v", want)
	}
	// The fault test starts each implementation once, at the most cores:
	// with the environment run gives that arm.
	fa := faults.Arms(p)
	if len(fa) != len(p.Implementations) {
		t.Errorf("the fault test starts %d arms, want %d", len(fa), len(p.Implementations))
	}
	for _, im := range fa {
		m, _ := service.Lookup(all, im.Service)
		if fault, run := faults.ArmEnv(p, im, m), runEnv[im.ID()]; run == nil || !maps.Equal(fault, run) {
			t.Errorf("the fault test starts %s with %v, run with %v: want one environment", im.ID(), fault, run)
		}
	}
	if extra := planTargets(p, all, map[string]string{"WORKERS": "5"}); extra[1].env["WORKERS"] != "5" {
		t.Errorf("up --plan --env WORKERS=5 gives %s %v: want --env over the variant", extra[1].id, extra[1].env)
	}

	// k8s render: the plan without cores.
	p, all = parse(body)
	mf, err := k8s.Render(p, k8s.Options{Start: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, im := range p.Implementations {
		m, _ := service.Lookup(all, im.Service)
		run := lab.ArmEnv(p, im, m)
		for _, d := range mf.Deployments {
			if d.Implementation != im.ID() {
				continue
			}
			seen++
			got := map[string]string{}
			for _, e := range d.Deployment.Spec.Template.Spec.Containers[0].Env {
				if e.Name == "HOST" || e.Name == "PORT" || strings.HasSuffix(e.Name, "_URL") {
					continue
				}
				got[e.Name] = e.Value
			}
			if !maps.Equal(got, run) {
				t.Errorf("k8s render gives %s %v, run %v: want one environment", im.ID(), got, run)
			}
		}
	}
	if seen != len(p.Implementations) {
		t.Errorf("k8s render has %d deployments of %d implementations", seen, len(p.Implementations))
	}
}
