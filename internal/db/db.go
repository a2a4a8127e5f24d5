// Package db runs the private databases the workloads need: a PostgreSQL
// and a MariaDB server, each in its own temporary directory on a free
// loopback port, started as child processes that die with showdown. It also
// creates the workloads' schemas, bulk-loads their seed data, resets them
// between runs and audits their invariants.
//
// Settings that matter when comparing results: PostgreSQL keeps its default
// shared_buffers (128MB) and max_connections (DefaultPostgresMaxConnections,
// the sources' real limit) unless WithMaxConnections says otherwise; MariaDB
// keeps its default innodb_buffer_pool_size (128MB) and max_connections
// (151). Both trade durability for speed, as a throwaway database may:
// PostgreSQL runs with fsync, synchronous_commit and full_page_writes off,
// MariaDB with innodb_flush_log_at_trx_commit=2, no doublewrite buffer and no
// binary log. Every stack meets the same settings. WithDurable turns
// durability back on (the fault test needs a database that keeps every
// commit it acknowledged through a crash).
//
// Logins: every server gets passwords made for it alone. The service's
// login (URL, DSN) is no superuser and has no FILE privilege: it may read
// and write the workloads' tables in database showdown and nothing else;
// the harness's own administrator login (PostgreSQL's postgres, MariaDB's
// root) never leaves this package. MariaDB runs with local_infile off
// (Prepare turns it on only for its own bulk load) and secure_file_priv
// confined to an empty folder. The private directory, the data folder and
// the sockets are 0700 and owned by the server's user.
//
// Binaries: PostgreSQL from $SHOWDOWN_PG_BIN, else the newest
// /usr/lib/postgresql/*/bin, else PATH; MariaDB's mariadbd (or mysqld) and
// mariadb-install-db from PATH, else /usr/sbin and /usr/bin. A missing one is
// a *MissingError whose Hint names the apt-get command. Running as root, the
// servers run as the postgres and mysql users; otherwise as the caller.
//
// Processes: each server is a direct child in its own process group, killed
// by the kernel if showdown dies (Pdeathsig). Stop shuts it down cleanly,
// kills whatever is left after DefaultStopTimeout and removes its directory;
// callers defer Stop and cancel the start's context on Ctrl-C.
package db

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/showdownlab/showdown/workloads"
)

// DefaultPostgresMaxConnections is PostgreSQL's max_connections unless
// WithMaxConnections says otherwise: PostgreSQL's own default, which the
// sources ran with.
const DefaultPostgresMaxConnections = workloads.DefaultMaxConnections

// DefaultStartTimeout bounds how long a server may take to answer after it
// starts (initialisation not included).
const DefaultStartTimeout = 60 * time.Second

// DefaultStopTimeout bounds a clean shutdown before the process group is killed.
const DefaultStopTimeout = 15 * time.Second

// Option configures StartPostgres and StartMariaDB.
type Option func(*options)

type options struct {
	maxConns     int // 0: the engine's default (PostgreSQL: DefaultPostgresMaxConnections)
	log          io.Writer
	parent       string
	startTimeout time.Duration
	settings     []setting
	// statementStats loads pg_stat_statements (see WithStatementStats).
	statementStats bool
	// durable keeps every acknowledged commit through a crash (see WithDurable).
	durable bool
}

type setting struct{ name, value string }

func newOptions(opts []Option) options {
	o := options{parent: os.TempDir(), startTimeout: DefaultStartTimeout}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithMaxConnections sets the server's max_connections (PostgreSQL default
// DefaultPostgresMaxConnections, MariaDB default 151).
func WithMaxConnections(n int) Option {
	return func(o *options) { o.maxConns = n }
}

// WithLog copies the server's own log to w; the log is also kept in the
// server's directory, whose tail errors quote.
func WithLog(w io.Writer) Option {
	return func(o *options) { o.log = w }
}

// WithDir sets the parent of the server's temporary directory (default
// os.TempDir()). When showdown runs as root the server runs as the postgres
// or mysql user, which must be able to traverse parent.
func WithDir(parent string) Option {
	return func(o *options) {
		if parent != "" {
			o.parent = parent
		}
	}
}

// WithStatementStats makes PostgreSQL count every statement the service
// runs (pg_stat_statements, read by Statements), as the contract suite
// needs to tell a service that queries from one that caches. Measured runs
// leave it off: counting costs the database CPU. MariaDB counts its
// statements without it.
func WithStatementStats() Option {
	return func(o *options) { o.statementStats = true }
}

// WithDurable runs the server durably: PostgreSQL with fsync,
// synchronous_commit and full_page_writes on; MariaDB with
// innodb_flush_log_at_trx_commit=1 and the doublewrite buffer (no binary
// log, so sync_binlog does not apply). Without it a crash may lose commits
// already acknowledged, which is the database's contract, not the
// service's; the fault test (showdown verify --faults) needs it.
func WithDurable() Option {
	return func(o *options) { o.durable = true }
}

// DurableSettings describes the durability settings of a server started
// with or without WithDurable, for a report.
func DurableSettings(durable bool) string {
	if durable {
		return "durable: PostgreSQL fsync=on synchronous_commit=on full_page_writes=on; MariaDB innodb_flush_log_at_trx_commit=1 innodb_doublewrite=1"
	}
	return "not durable: PostgreSQL fsync=off synchronous_commit=off full_page_writes=off; MariaDB innodb_flush_log_at_trx_commit=2 innodb_doublewrite=0"
}

// Servers groups the servers a set of workloads needs; nil for one not started.
type Servers struct {
	Postgres *Postgres
	MariaDB  *MariaDB
}

// MissingError reports a database binary that is not installed.
type MissingError struct {
	What    string // what is missing, e.g. "PostgreSQL (initdb, postgres)"
	Looked  string // where it was looked for
	Install string // the command that installs it
}

// Error says what is missing and where it was looked for.
func (e *MissingError) Error() string {
	return fmt.Sprintf("%s not found (looked in %s)", e.What, e.Looked)
}

// Hint gives the command that installs what is missing.
func (e *MissingError) Hint() string {
	return "install it with: " + e.Install
}
