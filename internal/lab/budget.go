package lab

import (
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

// CheckConnections checks, before anything starts, that the services a
// plan keeps alive at once and the harness fit the databases'
// max_connections (a *stack.BudgetError when they do not). A sequential
// plan runs one implementation at a time, so each is checked alone; an
// interleaved one keeps every arm alive, and the lab sizes the servers
// for them all (ConnectionsAlive), so only the pools must be readable.
// ms are the manifests found.
func CheckConnections(p *plan.Plan, ms []*service.Manifest) error {
	var ws []string
	for _, w := range p.Workloads {
		ws = append(ws, w.Name)
	}
	if len(stack.Engines(ws)) == 0 {
		return nil // no database is started
	}
	pools, err := planPools(p, ms)
	if err != nil {
		return err
	}
	if armsAlive(p) {
		return nil
	}
	for _, pool := range pools {
		if err := stack.CheckConnections([]stack.Pool{pool}, p.Database.MaxConnections); err != nil {
			return err
		}
	}
	return nil
}

// planPools returns the pool of each arm of p, with the environment it
// starts with (ArmEnv: its cores knob included), on its service CPUs:
// node-http at 4 cores runs 4 workers with a pool each.
func planPools(p *plan.Plan, ms []*service.Manifest) ([]stack.Pool, error) {
	var pools []stack.Pool
	for _, im := range p.Arms() {
		m, err := service.Lookup(ms, im.Service)
		if err != nil {
			return nil, err
		}
		cpus := len(cpuSet(p.Placement.ServiceCPUs))
		if im.Cores > 0 {
			cpus = im.Cores
		}
		pool, err := stack.PoolOf(im.ID(), m, ArmEnv(p, im, m), cpus)
		if err != nil {
			return nil, err
		}
		pools = append(pools, pool)
	}
	return pools, nil
}

// ConnectionsAlive is what every arm of p alive at once, and the harness,
// may open on one database server; ms are the manifests found.
func ConnectionsAlive(p *plan.Plan, ms []*service.Manifest) (int, error) {
	pools, err := planPools(p, ms)
	if err != nil {
		return 0, err
	}
	n := stack.HarnessConnections
	for _, pool := range pools {
		n += pool.Connections()
	}
	return n, nil
}

// armsAlive reports whether p keeps every arm alive at once: in
// interleaved rounds, and in a capacity search.
func armsAlive(p *plan.Plan) bool {
	ok, _ := p.Interleaved()
	return ok || p.SLO != nil
}
