package lab

import (
	"context"
	"path/filepath"
	"slices"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/workloads"
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
	info.Postgres = slices.Contains(engines, workloads.Postgres)
	if info.MariaDB = slices.Contains(engines, workloads.MySQL); info.MariaDB {
		info.SKURows = p.Database.SKURows
	}
	dbs, err := stack.StartDatabases(ctx, engines, stack.DatabaseOptions{
		MaxConnections: p.Database.MaxConnections,
		LogDir:         filepath.Join(x.dir, "databases"),
		CPUs:           p.Placement.DatabaseCPUs,
		Progress:       sayWriter{x},
		Warn:           func(msg string) { x.warn("%s", msg) },
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
	info.PrepareSeconds = time.Since(start).Seconds()
	return nil
}

// beforeStart applies the database policy before a service starts:
// restart the workload's server and empty what earlier runs wrote.
func (x *execution) beforeStart(ctx context.Context, workload string) (string, error) {
	if x.plan.Database.Restart == "trial" {
		if err := x.dbs.Restart(ctx, workload); err != nil {
			return "restart database", err
		}
	}
	if x.plan.Database.Reset != "never" {
		if err := x.dbs.Reset(ctx, workload); err != nil {
			return "reset database", err
		}
	}
	return "", nil
}
