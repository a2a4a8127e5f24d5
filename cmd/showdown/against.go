package main

import (
	"fmt"
	"os"
	"path/filepath"
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
// --against REV FOLDER` (stack.FolderAgainst), printing its mistakes.
func loadFolderAgainst(st *state, root, folder, rev string, m plan.Machine) (*plan.Plan, []*service.Manifest, error) {
	p, ms, err := stack.FolderAgainst(root, folder, rev, m)
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
