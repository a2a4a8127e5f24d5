package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

// isStackFolder reports whether path is a folder holding a stack's
// manifest, rather than a plan file.
func isStackFolder(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(path, service.ManifestFile))
	return err == nil
}

// loadFolderAgainst makes and validates the plan of `showdown run
// --against REV FOLDER`: the folder's stack at REV (the baseline) and at
// the working tree, on its first workload (string where it serves it) at
// 50 users, warmed until steady, with the defaults of a plan that names
// no stopping rule (±3% within 10 minutes after the builds).
func loadFolderAgainst(st *state, root, folder, rev string, m plan.Machine) (*plan.Plan, []*service.Manifest, error) {
	abs, err := filepath.Abs(folder)
	if err != nil {
		return nil, nil, err
	}
	ms, err := service.Discover(root, abs)
	if err != nil {
		return nil, nil, err
	}
	sm, err := service.Find(ms, abs)
	if err != nil {
		return nil, nil, err
	}
	w := sm.Workloads[0]
	if slices.Contains(sm.Workloads, "string") {
		w = "string"
	}
	name := sm.Name + "-against-" + plan.RevName(rev)
	text := fmt.Sprintf(`name: %s
description: %s at the working tree against %s, on %s at 50 users
implementations:
  - path: %q
workloads: [%s]
load: {model: closed, levels: [50], warmup: auto}
`, name, sm.Name, rev, w, abs, w)
	// The plan is made here, as if beside the folder.
	file := filepath.Join(filepath.Dir(abs), name+".yaml")
	p, ms, err := stack.ParsePlanAgainst(root, file, []byte(text), m, rev)
	var list plan.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			e.File, e.Line = folder, 0 // the plan is not a file: the folder's mistake
		}
	}
	return reportPlan(st, "run --against "+rev+" "+folder, p, ms, err)
}

// compareLines say, for run --check, what a plan compares beyond its
// arms: the defaults it got, the revisions and their commits, and what
// fails it.
func compareLines(p *plan.Plan) []string {
	var out []string
	if p.BudgetDefaulted {
		out = append(out, fmt.Sprintf("no budget, precision, measure_max or trials named: starts go on while a pair is wider than ±%v and another fits in %v after the builds (the defaults, plans/README.md)",
			p.Rounds.Precision, time.Duration(p.Rounds.Budget)))
	}
	for _, im := range p.Implementations {
		if im.Rev != "" {
			c := im.Commit
			if len(c) > 12 {
				c = c[:12]
			}
			out = append(out, fmt.Sprintf("%s: revision %s, commit %s", im.ID(), im.Rev, c))
		}
	}
	if p.SlowerThan > 0 {
		out = append(out, fmt.Sprintf("fail_if slower_than %v: every arm against the baseline %s; exit 3 only when an interval lies wholly beyond", p.SlowerThan, p.Baseline()))
	}
	return out
}
