package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
)

// Every ready plan parses against the real services; the sources' plans
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
		p, err := plan.LoadPlan(f, catalog)
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
