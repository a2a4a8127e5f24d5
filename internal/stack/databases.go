// Package stack brings a service and the databases its workloads need up
// and down: the database servers, the workloads' data, the service's
// environment, the service itself, its health, and teardown. `showdown
// run` and `showdown verify` both use it, so there is one way up.
package stack

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/machine"
	"github.com/showdownlab/showdown/workloads"
)

// Server is one running database server, whatever its engine.
type Server interface {
	URL() string
	PID() int
	Port() int
	Up(ctx context.Context) error
	Down(ctx context.Context) error
	Restart(ctx context.Context) error
	Stop() error
	Pause() error  // freeze it (SIGSTOP), for the hung-database checks
	Resume() error // thaw it
	Crash() error  // kill it (SIGKILL) keeping its data, for the fault test
}

var (
	_ Server = (*db.Postgres)(nil)
	_ Server = (*db.MariaDB)(nil)
)

// Engines lists, in start order, the database engines a set of workloads
// needs.
func Engines(ws []string) []workloads.Engine {
	need := map[workloads.Engine]bool{}
	for _, w := range ws {
		need[workloads.Database(w)] = true
	}
	var out []workloads.Engine
	for _, e := range workloads.Engines {
		if need[e] {
			out = append(out, e)
		}
	}
	return out
}

// DatabaseOptions configures StartDatabases.
type DatabaseOptions struct {
	// MaxConnections is each server's connection limit (0: the engine's
	// default).
	MaxConnections int
	// LogDir receives postgres.log and mariadb.log ("": output discarded).
	LogDir string
	// CPUs pins each server's processes to these CPUs, in taskset's list
	// form ("": not pinned); again after every restart.
	CPUs string
	// Progress receives one line per server started (nil: discarded).
	Progress io.Writer
	// Warn receives problems that do not stop the run, such as a pinning
	// that failed (nil: discarded).
	Warn func(string)
	// StatementStats makes PostgreSQL count the service's statements
	// (db.WithStatementStats) for Statements; verify wants it, measured
	// runs do not pay for it.
	StatementStats bool
	// Durable runs the servers durably (db.WithDurable), as the fault
	// test needs.
	Durable bool
}

// Databases are the database servers a set of workloads needs.
type Databases struct {
	// Servers are the running servers; nil for an engine not started.
	Servers db.Servers
	opts    DatabaseOptions
	owned   bool
}

// StartDatabases starts a server for each engine in engines. On error the
// servers already started are stopped.
func StartDatabases(ctx context.Context, engines []workloads.Engine, o DatabaseOptions) (*Databases, error) {
	d := &Databases{opts: o, owned: true}
	if o.LogDir != "" && len(engines) > 0 {
		if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
			return nil, err
		}
	}
	for _, e := range engines {
		opts := []db.Option{}
		if o.MaxConnections > 0 {
			opts = append(opts, db.WithMaxConnections(o.MaxConnections))
		}
		if o.StatementStats {
			opts = append(opts, db.WithStatementStats())
		}
		if o.Durable {
			opts = append(opts, db.WithDurable())
		}
		if o.LogDir != "" {
			f, err := os.Create(filepath.Join(o.LogDir, logName(e)))
			if err != nil {
				d.Stop()
				return nil, err
			}
			opts = append(opts, db.WithLog(f))
		}
		d.say("starting %s", engineName(e))
		var err error
		switch e {
		case workloads.Postgres:
			d.Servers.Postgres, err = db.StartPostgres(ctx, opts...)
		case workloads.MySQL:
			d.Servers.MariaDB, err = db.StartMariaDB(ctx, opts...)
		}
		if err != nil {
			d.Stop()
			return nil, fmt.Errorf("start %s: %w", engineName(e), err)
		}
		d.pin(e)
	}
	return d, nil
}

// Use wraps servers someone else started and stops; Stop leaves them
// running.
func Use(s db.Servers, o DatabaseOptions) *Databases {
	return &Databases{Servers: s, opts: o}
}

func logName(e workloads.Engine) string {
	if e == workloads.MySQL {
		return "mariadb.log"
	}
	return string(e) + ".log"
}

func engineName(e workloads.Engine) string {
	switch e {
	case workloads.Postgres:
		return "PostgreSQL"
	case workloads.MySQL:
		return "MariaDB"
	}
	return string(e)
}

func (d *Databases) say(format string, args ...any) {
	if d.opts.Progress != nil {
		fmt.Fprintf(d.opts.Progress, format+"\n", args...)
	}
}

// server returns the running server of engine e, or nil.
func (d *Databases) server(e workloads.Engine) Server {
	if d == nil {
		return nil
	}
	switch e {
	case workloads.Postgres:
		if d.Servers.Postgres != nil {
			return d.Servers.Postgres
		}
	case workloads.MySQL:
		if d.Servers.MariaDB != nil {
			return d.Servers.MariaDB
		}
	}
	return nil
}

// For returns the server workload w uses, or an error when w needs none or
// its engine was not started.
func (d *Databases) For(w string) (Server, error) {
	e := workloads.Database(w)
	if e == workloads.NoDatabase {
		return nil, fmt.Errorf("workload %s uses no database", w)
	}
	if s := d.server(e); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("workload %s needs %s, which is not started", w, engineName(e))
}

// PID is the pid of the server workload w uses, or 0.
func (d *Databases) PID(w string) int {
	if s := d.server(workloads.Database(w)); s != nil {
		return s.PID()
	}
	return 0
}

// Env is what a service needs to reach the running servers: DATABASE_URL
// and MYSQL_URL.
func (d *Databases) Env() map[string]string {
	env := map[string]string{}
	if s := d.server(workloads.Postgres); s != nil {
		env["DATABASE_URL"] = s.URL()
	}
	if s := d.server(workloads.MySQL); s != nil {
		env["MYSQL_URL"] = s.URL()
	}
	return env
}

// Ports are the TCP ports on 127.0.0.1 of the running servers, in
// start order: what a service's connections to them are counted by
// (monitor.Connections).
func (d *Databases) Ports() []int {
	var out []int
	for _, e := range workloads.Engines {
		if s := d.server(e); s != nil {
			out = append(out, s.Port())
		}
	}
	return out
}

// Up brings every server back up; one already up is left alone (a server
// left down or hung by an interrupted outage check comes back first).
func (d *Databases) Up(ctx context.Context) error {
	for _, e := range workloads.Engines {
		if s := d.server(e); s != nil {
			_ = s.Resume() // an error only says it is not running
			if err := s.Up(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// Statements counts the statements run so far on the database of
// workload w (db.Statements).
func (d *Databases) Statements(ctx context.Context, w string) (int64, error) {
	return db.Statements(ctx, w, d.Servers)
}

// OpenTransactions counts the service login's sessions waiting inside a
// transaction on the database of workload w (db.OpenTransactions).
func (d *Databases) OpenTransactions(ctx context.Context, w string) (int, error) {
	return db.OpenTransactions(ctx, w, d.Servers)
}

// BusySessions describes the service login's sessions on the database
// of workload w that run a statement or sit inside a transaction, ""
// when none do (db.BusySessions).
func (d *Databases) BusySessions(ctx context.Context, w string) (string, error) {
	return db.BusySessions(ctx, w, d.Servers)
}

// Prepare creates the schema and loads the data of each workload in ws
// that has a database, and returns the sku ids the sku workload knows (nil
// without sku).
func (d *Databases) Prepare(ctx context.Context, ws []string, o db.PrepareOptions) (knownSKUs []int64, err error) {
	for _, w := range ws {
		if workloads.Database(w) == workloads.NoDatabase {
			continue
		}
		if w == "sku" {
			rows, seed := o.SKURows, o.Seed
			if rows <= 0 {
				rows = db.DefaultSKURows
			}
			if seed == 0 {
				seed = db.DefaultSeed
			}
			d.say("loading %d sku rows (seed %d)", rows, seed)
		} else {
			d.say("preparing %s", w)
		}
		p, err := db.Prepare(ctx, w, d.Servers, o)
		if err != nil {
			return nil, fmt.Errorf("prepare %s: %w", w, err)
		}
		if w == "sku" {
			knownSKUs = p.KnownSKUs
		}
	}
	return knownSKUs, nil
}

// Reset empties what a run wrote into workload w's database; a workload
// without a database is left alone.
func (d *Databases) Reset(ctx context.Context, w string) error {
	if workloads.Database(w) == workloads.NoDatabase {
		return nil
	}
	return db.Reset(ctx, w, d.Servers)
}

// Restart restarts the server workload w uses and pins it again; a
// workload without a database is left alone.
func (d *Databases) Restart(ctx context.Context, w string) error {
	e := workloads.Database(w)
	s := d.server(e)
	if s == nil {
		return nil
	}
	if err := s.Restart(ctx); err != nil {
		return err
	}
	d.pin(e)
	return nil
}

// Audit checks workload w's invariants in its database (see
// db.AuditWithin: the row count within [atLeast, atMost], unchecked when
// atLeast < 0).
func (d *Databases) Audit(ctx context.Context, w string, atLeast, atMost int64) ([]db.Violation, error) {
	if workloads.Database(w) == workloads.NoDatabase {
		return nil, nil
	}
	return db.AuditWithin(ctx, w, d.Servers, atLeast, atMost)
}

func (d *Databases) pin(e workloads.Engine) {
	s := d.server(e)
	if s == nil || d.opts.CPUs == "" {
		return
	}
	if err := machine.PinTree(s.PID(), d.opts.CPUs); err != nil && d.opts.Warn != nil {
		d.opts.Warn(fmt.Sprintf("%s not pinned to CPUs %s: %v", engineName(e), d.opts.CPUs, err))
	}
}

// Stop stops the servers StartDatabases started; nil-safe.
func (d *Databases) Stop() {
	if d == nil || !d.owned {
		return
	}
	for _, e := range workloads.Engines {
		if s := d.server(e); s != nil {
			_ = s.Stop()
		}
	}
}

// SetSKUIndex creates or drops the sku workload's index on sku_id (one
// value of a plan's database dimension).
func (d *Databases) SetSKUIndex(ctx context.Context, on bool) error {
	if on {
		d.say("sku: creating the index on sku_id")
	} else {
		d.say("sku: dropping the index on sku_id")
	}
	return db.SetSKUIndex(ctx, d.Servers, on)
}

// Written counts the rows workload w's requests write, by request (see
// db.Written); nil for a workload that writes nothing.
func (d *Databases) Written(ctx context.Context, w string) (map[string]int64, error) {
	if workloads.Database(w) == workloads.NoDatabase {
		return nil, nil
	}
	return db.Written(ctx, w, d.Servers)
}
