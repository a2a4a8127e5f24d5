package db

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/jackc/pgx/v5"

	"github.com/showdownlab/showdown/workloads"
)

// ErrNoStatementStats is returned by Statements for a PostgreSQL server
// started without WithStatementStats.
var ErrNoStatementStats = errors.New("PostgreSQL counts statements only when started WithStatementStats")

// Statements returns how many statements have run so far on the database
// of workload. PostgreSQL: the calls pg_stat_statements counted for the
// service's role only (the harness's own are not counted). MariaDB: its
// Com_select, Com_insert, Com_update and Com_delete (prepared executions
// included) for every login, counted as each statement starts; the count
// itself is a SHOW, which none of them counts. Two calls around some
// requests, while nothing else uses the database, tell whether the service
// queried it to answer them. A workload without a database is an error.
func Statements(ctx context.Context, workload string, s Servers) (int64, error) {
	switch workloads.Database(workload) {
	case "postgres":
		if s.Postgres == nil {
			return 0, fmt.Errorf("workload %s needs PostgreSQL, which is not started", workload)
		}
		return s.Postgres.statements(ctx)
	case "mysql":
		if s.MariaDB == nil {
			return 0, fmt.Errorf("workload %s needs MariaDB, which is not started", workload)
		}
		return s.MariaDB.statements(ctx)
	}
	return 0, fmt.Errorf("workload %q has no database", workload)
}

func (p *Postgres) statements(ctx context.Context) (int64, error) {
	if !p.stats {
		return 0, ErrNoStatementStats
	}
	c, err := pgx.Connect(ctx, p.adminURL(p.Port(), dbName))
	if err != nil {
		return 0, fmt.Errorf("PostgreSQL: count statements: %w", err)
	}
	defer c.Close(context.Background())
	var n int64
	err = c.QueryRow(ctx, "SELECT coalesce(sum(s.calls), 0)::bigint FROM pg_stat_statements s "+
		"JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $1", dbUser).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("PostgreSQL: count statements: %w", err)
	}
	return n, nil
}

func (m *MariaDB) statements(ctx context.Context) (int64, error) {
	db, err := m.openAdmin(m.Port())
	if err != nil {
		return 0, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Com_insert', 'Com_update', 'Com_delete')")
	if err != nil {
		return 0, fmt.Errorf("MariaDB: count statements: %w", err)
	}
	defer rows.Close()
	var sum int64
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return 0, fmt.Errorf("MariaDB: count statements: %w", err)
		}
		sum += n
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("MariaDB: count statements: %w", err)
	}
	return sum, nil
}

// Pause freezes the server (SIGSTOP to it and, for PostgreSQL, to every
// backend): connections stay open and nothing answers, as with a hung
// host. Resume thaws it; Down and Stop thaw it first.
func (s *server) Pause() error { return s.signalAll(syscall.SIGSTOP) }

// Resume thaws a server Pause froze; on a running server it does nothing.
func (s *server) Resume() error { return s.signalAll(syscall.SIGCONT) }

// signalAll sends sig to the server process and then to its children
// (PostgreSQL's backends run in sessions of their own). The parent goes
// first so that, when stopping, it forks no new child meanwhile.
func (s *server) signalAll(sig syscall.Signal) error {
	pid := s.pid()
	if pid == 0 {
		return fmt.Errorf("%s is not running", s.engine)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("%s: signal %v: %w", s.engine, sig, err)
	}
	for _, k := range children(pid) {
		if k.alive() {
			_ = syscall.Kill(k.pid, sig)
		}
	}
	return nil
}

// OpenTransactions returns how many sessions of the service's login sit
// inside a transaction while waiting for the service (PostgreSQL's "idle
// in transaction", MariaDB's sleeping connections with an InnoDB
// transaction) on the database of workload. A service that hands a
// connection back to its pool between BEGIN and COMMIT leaves one: it
// holds its row locks until the pool closes it.
func OpenTransactions(ctx context.Context, workload string, s Servers) (int, error) {
	var n int
	err := adminRow(ctx, workload, s, "open transactions",
		"SELECT count(*) FROM pg_stat_activity WHERE usename = $1 "+
			"AND state IN ('idle in transaction', 'idle in transaction (aborted)')",
		"SELECT count(*) FROM information_schema.innodb_trx t "+
			"JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id "+
			"WHERE p.user = ? AND p.command = 'Sleep'",
		&n)
	return n, err
}

// BusySessions describes the service login's sessions on the database of
// workload that are not idle outside a transaction (running a statement,
// or inside a transaction), "" when there are none: what a service must
// not be frozen with, since a frozen client's session keeps its locks and
// its statement's place in line until the client runs again. A workload
// without a database has none.
func BusySessions(ctx context.Context, workload string, s Servers) (string, error) {
	if workloads.Database(workload) == "" {
		return "", nil
	}
	var n int
	var states string
	var oldest float64
	err := adminRow(ctx, workload, s, "busy sessions",
		"SELECT count(*), coalesce(string_agg(DISTINCT state, ', '), ''), "+
			"coalesce(max(extract(epoch FROM now() - coalesce(xact_start, query_start))), 0)::float8 "+
			"FROM pg_stat_activity WHERE usename = $1 AND state IS NOT NULL AND state <> 'idle' AND pid <> pg_backend_pid()",
		// Running a statement, or asleep inside an InnoDB transaction.
		"SELECT count(*), coalesce(group_concat(DISTINCT IF(p.command = 'Sleep', 'idle in transaction', 'active')), ''), coalesce(max(p.time), 0) "+
			"FROM information_schema.processlist p LEFT JOIN information_schema.innodb_trx t ON t.trx_mysql_thread_id = p.id "+
			"WHERE p.user = ? AND p.id <> connection_id() AND (p.command <> 'Sleep' OR t.trx_id IS NOT NULL)",
		&n, &states, &oldest)
	if err != nil || n == 0 {
		return "", err
	}
	return fmt.Sprintf("%d session(s) of the service's login busy (%s), the oldest for %.1f s", n, states, oldest), nil
}

// adminRow runs one query about the service's login (its one parameter)
// as the administrator on the database of workload, in PostgreSQL's or
// MariaDB's form as the workload's database is, and scans its row into
// dest; what names the query in errors.
func adminRow(ctx context.Context, workload string, s Servers, what, postgres, mariadb string, dest ...any) error {
	switch workloads.Database(workload) {
	case "postgres":
		if s.Postgres == nil {
			return fmt.Errorf("workload %s needs PostgreSQL, which is not started", workload)
		}
		c, err := pgx.Connect(ctx, s.Postgres.adminURL(s.Postgres.Port(), dbName))
		if err != nil {
			return fmt.Errorf("PostgreSQL: %s: %w", what, err)
		}
		defer c.Close(context.Background())
		if err := c.QueryRow(ctx, postgres, dbUser).Scan(dest...); err != nil {
			return fmt.Errorf("PostgreSQL: %s: %w", what, err)
		}
	case "mysql":
		if s.MariaDB == nil {
			return fmt.Errorf("workload %s needs MariaDB, which is not started", workload)
		}
		db, err := s.MariaDB.openAdmin(s.MariaDB.Port())
		if err != nil {
			return err
		}
		defer db.Close()
		if err := db.QueryRowContext(ctx, mariadb, dbUser).Scan(dest...); err != nil {
			return fmt.Errorf("MariaDB: %s: %w", what, err)
		}
	default:
		return fmt.Errorf("workload %q has no database", workload)
	}
	return nil
}
