package stack

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
)

// LoadPlan reads the plan at path and validates it against the services
// under root (their names and the workloads each serves) and machine m;
// it returns the services beside the plan. A plan with mistakes fails
// with a plan.ErrorList holding every one.
func LoadPlan(root, path string, m plan.Machine) (*plan.Plan, []*service.Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return ParsePlan(root, path, data, m)
}

// ParsePlan is LoadPlan for plan text read from file (or made by a
// command, file naming it). The stacks are those under root's services/
// and those the plan names by folder (path:); a folder without a manifest
// is the plan's mistake, reported at its line.
func ParsePlan(root, file string, data []byte, m plan.Machine) (*plan.Plan, []*service.Manifest, error) {
	return ParsePlanAgainst(root, file, data, m, "")
}

// ParsePlanAgainst is ParsePlan with each implementation compared against
// itself at git revision against (`showdown run --against REV`; empty:
// none added). Every implementation at a revision (rev:, or against's) is
// materialised (Materialise) and its manifest read under its arm's name;
// a folder outside git, or a revision that does not exist, is the plan's
// mistake at the implementation's line, reported with the others.
func ParsePlanAgainst(root, file string, data []byte, m plan.Machine, against string) (*plan.Plan, []*service.Manifest, error) {
	var dirs []string
	for _, d := range plan.Folders(file, data) {
		if _, err := os.Stat(filepath.Join(d, service.ManifestFile)); err == nil {
			dirs = append(dirs, d)
		}
	}
	ms, err := service.Discover(root, dirs...)
	if err != nil {
		return nil, nil, err
	}
	ms, revs, revErrs := revisions(ms, file, data, against)
	catalog := plan.Catalog{}
	for _, m := range ms {
		catalog[m.Name] = m.Workloads
		catalog[m.Dir] = m.Workloads
	}
	p, err := plan.ParsePlanAgainst(file, data, catalog, m, against)
	if err != nil || len(revErrs) > 0 {
		var list plan.ErrorList
		if !errors.As(err, &list) && err != nil {
			return nil, nil, err
		}
		// A revision that could not be read is said once, as such, not
		// again as a stack the catalog lacks.
		for _, e := range list {
			if !slices.ContainsFunc(revErrs, func(r *plan.Error) bool {
				return r.Line == e.Line && (strings.HasPrefix(e.Msg, "no stack in") || strings.HasPrefix(e.Msg, "unknown service"))
			}) {
				revErrs = append(revErrs, e)
			}
		}
		revErrs.Sort()
		return nil, nil, revErrs
	}
	for name, r := range revs {
		p.SetRevision(name, r.Commit, r.Dir)
	}
	return p, ms, nil
}

// revisions materialises the implementations of plan text that name a
// revision and adds their manifests to ms, each under its arm's name;
// it returns the revisions by arm and the plan's mistakes.
func revisions(ms []*service.Manifest, file string, data []byte, against string) ([]*service.Manifest, map[string]Revision, plan.ErrorList) {
	commits := map[string]Revision{}
	var errs plan.ErrorList
	for _, r := range plan.Revisions(file, data, against) {
		if _, done := commits[r.Name]; done {
			continue
		}
		folder := r.Folder
		if folder == "" {
			sm, err := service.Lookup(ms, r.Stack)
			if err != nil {
				continue // the plan's validation names the unknown service
			}
			folder = sm.Dir
		}
		rev, err := Materialise(folder, r.Rev)
		var mm *service.Manifest
		if err == nil {
			mm, err = service.LoadAs(rev.Dir, r.Name)
		}
		if err != nil {
			e := &plan.Error{File: file, Line: r.Line, Field: r.Field, Msg: err.Error()}
			var re *RevisionError
			if errors.As(err, &re) {
				e.Hint = re.Hint
			}
			errs = append(errs, e)
			continue
		}
		ms = append(ms, mm)
		commits[r.Name] = rev
	}
	return ms, commits, errs
}
