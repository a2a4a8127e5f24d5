package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
)

// Every ready plan parses against the real services on a two-CPU machine
// (the smallest showdown runs on, whichever runs the test); the sources' plans
// carry their mistakes as variants, and the plans that compare stacks
// never use a mistake.
func TestReadyPlans(t *testing.T) {
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := service.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	catalog := plan.Catalog{}
	for _, m := range ms {
		catalog[m.Name] = m.Workloads
	}
	files, _ := filepath.Glob(filepath.Join(root, "plans", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no plans found")
	}
	mistakes := func(p *plan.Plan) []string {
		var ids []string
		for _, im := range p.Implementations {
			mode := p.Env["DB_POOL_MODE"]
			if v, ok := im.Env["DB_POOL_MODE"]; ok {
				mode = v
			}
			if mode != "" && mode != "shared" {
				ids = append(ids, im.ID()+" "+mode)
			}
		}
		return ids
	}
	// Which plans must show a source's connection mistake (row: plan name).
	withMistakes := map[string]bool{
		"bank-2018":    true, // Go's pool per request, Java's connection per request
		"bank-rematch": true, // what the rematch fixed, beside the fix
		"sku-lookup":   true, // the servlet's connection per request
	}
	seen := map[string]bool{}
	for _, f := range files {
		p, err := plan.LoadPlan(f, catalog, plan.MachineOf(2))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		seen[p.Name] = true
		got := mistakes(p)
		switch {
		case withMistakes[p.Name] && len(got) == 0:
			t.Errorf("%s: no as-published variant with the source's DB_POOL_MODE", f)
		case !withMistakes[p.Name] && len(got) > 0:
			t.Errorf("%s uses a mistake meant for reproductions only: %s", f, strings.Join(got, ", "))
		}
	}
	for name := range withMistakes {
		if !seen[name] {
			t.Errorf("plan %s is missing", name)
		}
	}
}

// TestCheckCPUs: run --check --cpus checks a plan for another machine,
// whatever machine runs the test; a bad --cpus says what it takes.
func TestCheckCPUs(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string // in stdout, or in stderr when the exit is not 0
	}{
		// The 16-CPU plan fits a count of 16, and the same as a list.
		{[]string{"run", "--check", "--cpus", "16", "../../bench/cores.yaml"}, exitOK, "ok on CPUs 0-15"},
		{[]string{"run", "--check", "--cpus", "0-15", "../../bench/cores.yaml"}, exitOK, "ok on CPUs 0-15"},
		// On two CPUs it does not, and says how many cores do.
		{[]string{"run", "--check", "--cpus", "2", "../../bench/cores.yaml"}, exitUsage, "cores up to 1 fit"},
		// A plan's CPU list outside the machine's CPUs.
		{[]string{"run", "--check", "--cpus", "4-7", "../../plans/smoke.yaml"}, exitOK, "ok on CPUs 4-7"},
		// Words, and --cpus without --check.
		{[]string{"run", "--check", "--cpus", "sixteen", "../../bench/cores.yaml"}, exitUsage, "hint: a count of CPUs (--cpus 16) or a CPU list"},
		{[]string{"run", "--cpus", "16", "../../bench/cores.yaml"}, exitUsage, "goes with --check"},
	} {
		st, stdout, stderr := testState(context.Background())
		code := run(st, tt.args)
		out := stdout.String()
		if code != exitOK {
			out = stderr.String()
		}
		if code != tt.code || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s%s", tt.args, code, tt.code, tt.want, stdout, stderr)
		}
	}
}
