package lab

import (
	"context"
	"path/filepath"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

// startDatabases starts the servers the plan's workloads need, pinned to
// the plan's database CPUs, and prepares every workload's data once.
func (x *execution) startDatabases(ctx context.Context) error {
	p := x.plan
	info := &x.rec.Databases
	info.MaxConnections, info.Seed, info.SKUIndex = p.Database.MaxConnections, p.Database.Seed, *p.Database.SKUIndex
	var ws []string
	for _, w := range p.Workloads {
		ws = append(ws, w.Name)
	}
	engines := stack.Engines(ws)
	info.Postgres = p.UsesPostgres()
	if info.MariaDB = p.UsesMariaDB(); info.MariaDB {
		info.SKURows = p.Database.SKURows
	}
	maxConns := p.Database.MaxConnections
	if armsAlive(p) && len(engines) > 0 {
		// Every arm is alive at once in interleaved rounds (and in a
		// capacity search), each with its
		// pools: the servers must admit them all, and the harness.
		var ms []*service.Manifest
		for _, m := range x.manifests {
			ms = append(ms, m)
		}
		need, err := ConnectionsAlive(p, ms)
		if err != nil {
			return err
		}
		if need > maxConns {
			x.Say("max_connections %d: the %d arms alive at once and the harness (%d) may open that many, above the plan's %d",
				need, len(p.Arms()), stack.HarnessConnections, maxConns)
			maxConns = need
			info.MaxConnections = need
		}
	}
	dbs, err := stack.StartDatabases(ctx, engines, stack.DatabaseOptions{
		MaxConnections: maxConns,
		LogDir:         filepath.Join(x.dir, "databases"),
		CPUs:           p.Placement.DatabaseCPUs,
		Progress:       sayWriter{x},
		Warn:           func(msg string) { x.Warn("%s", msg) },
	})
	if err != nil {
		return err
	}
	x.dbs = dbs
	start := time.Now()
	known, err := dbs.Prepare(ctx, ws, db.PrepareOptions{
		SKURows: p.Database.SKURows, Seed: p.Database.Seed, NoSKUIndex: !*p.Database.SKUIndex,
	})
	if err != nil {
		return err
	}
	x.known, info.KnownSKUs = known, known
	x.skuIndex = *p.Database.SKUIndex
	info.PrepareSeconds = time.Since(start).Seconds()
	return nil
}

// BeforeStart applies the database policy before a service starts:
// restart the servers its workloads use (restart: trial), once each.
// Each workload's data is emptied before it is measured.
func (x *execution) BeforeStart(ctx context.Context, ws []plan.Workload) (string, error) {
	if x.plan.Database.Restart != "trial" {
		return "", nil
	}
	for _, w := range plan.OnePerDatabase(ws) {
		if err := x.dbs.Restart(ctx, w.Name); err != nil {
			return "restart database", err
		}
	}
	return "", nil
}
