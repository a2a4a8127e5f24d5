package stack

import (
	"os"
	"path/filepath"

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
	catalog := plan.Catalog{}
	for _, m := range ms {
		catalog[m.Name] = m.Workloads
		catalog[m.Dir] = m.Workloads
	}
	p, err := plan.ParsePlan(file, data, catalog, m)
	if err != nil {
		return nil, nil, err
	}
	return p, ms, nil
}
