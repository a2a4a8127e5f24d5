package stack

import (
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
)

// LoadPlan reads the plan at path and validates it against the services
// under root (their names and the workloads each serves); it returns the
// services beside the plan. A plan with mistakes fails with a
// plan.ErrorList holding every one.
func LoadPlan(root, path string) (*plan.Plan, []*service.Manifest, error) {
	ms, err := service.Discover(root)
	if err != nil {
		return nil, nil, err
	}
	catalog := plan.Catalog{}
	for _, m := range ms {
		catalog[m.Name] = m.Workloads
	}
	p, err := plan.LoadPlan(path, catalog)
	if err != nil {
		return nil, nil, err
	}
	return p, ms, nil
}
