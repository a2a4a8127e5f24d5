package db

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// Postgres is a private PostgreSQL 15 server in a temporary directory on a free loopback port.
type Postgres struct {
	*server
	password string // the service role's, new for every server
	admin    string // the superuser's password, new for every server
	stats    bool   // pg_stat_statements is loaded (WithStatementStats)
}

// dbUser and dbName are the service's login and database on both servers;
// pgAdmin is PostgreSQL's superuser, which only the harness uses.
const (
	dbUser  = "showdown"
	dbName  = "showdown"
	pgAdmin = "postgres"
)

// pgLibGlob is where Debian installs PostgreSQL's server binaries.
var pgLibGlob = "/usr/lib/postgresql/*/bin"

// postgresBin finds the directory holding initdb and postgres:
// $SHOWDOWN_PG_BIN, then the newest /usr/lib/postgresql/*/bin, then PATH.
func postgresBin() (string, error) {
	has := func(dir string) bool {
		for _, n := range []string{"initdb", "postgres"} {
			if st, err := os.Stat(filepath.Join(dir, n)); err != nil || st.IsDir() {
				return false
			}
		}
		return true
	}
	looked := []string{}
	if d := os.Getenv("SHOWDOWN_PG_BIN"); d != "" {
		if has(d) {
			return d, nil
		}
		looked = append(looked, "$SHOWDOWN_PG_BIN="+d)
	}
	dirs, _ := filepath.Glob(pgLibGlob)
	version := func(d string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(d)), 64)
		return v
	}
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	looked = append(looked, pgLibGlob)
	if p, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	looked = append(looked, "PATH")
	return "", &MissingError{
		What:    "PostgreSQL server binaries (initdb, postgres)",
		Looked:  strings.Join(looked, ", "),
		Install: "apt-get install -y postgresql (or set SHOWDOWN_PG_BIN to the directory holding initdb and postgres)",
	}
}

// StartPostgres initialises a PostgreSQL cluster in a new temporary
// directory, starts it on a free loopback port (as the postgres user when
// running as root) and waits until it answers. Every login needs a password
// made for this server: the superuser postgres (the harness's own, for
// Prepare, Reset and Audit) and the service's role showdown, which is no
// superuser, may only connect to database showdown and will own only the
// tables Prepare creates. On any error, nothing is left behind. The caller
// must Stop it.
func StartPostgres(ctx context.Context, opts ...Option) (*Postgres, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	o := newOptions(opts)
	if o.maxConns <= 0 {
		o.maxConns = DefaultPostgresMaxConnections
	}
	cred, err := runAs("postgres")
	if err != nil {
		return nil, err
	}
	s := &server{engine: "PostgreSQL", o: o, cred: cred, stopSig: syscall.SIGINT,
		bindFail: []string{"could not bind", "Address already in use", "could not create any TCP/IP sockets"}}
	p := &Postgres{server: s, stats: o.statementStats}
	ok := false
	defer s.stopUnless(&ok)
	if p.password, p.admin, err = s.begin("showdown-pg-"); err != nil {
		return nil, err
	}
	pw, err := s.writeFile("pwfile", p.admin+"\n")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(s.dir, "data")
	err = s.run(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", pgAdmin, "--pwfile="+pw,
		"--auth-host=scram-sha-256", "--auth-local=scram-sha-256", "-E", "UTF8", "--locale=C",
		"--no-sync", "--no-instructions")
	os.Remove(pw)
	if err != nil {
		return nil, err
	}
	s.command = func(port int) (string, []string) {
		args := []string{"-D", data, "-p", strconv.Itoa(port), "-k", s.dir,
			"-c", "listen_addresses=127.0.0.1",
			"-c", "unix_socket_permissions=0700",
			"-c", "max_connections=" + strconv.Itoa(o.maxConns),
			"-c", "logging_collector=off",
		}
		if o.durable {
			args = append(args, "-c", "fsync=on", "-c", "synchronous_commit=on", "-c", "full_page_writes=on")
		} else {
			args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
		}
		if o.statementStats {
			args = append(args, "-c", "shared_preload_libraries=pg_stat_statements",
				"-c", "pg_stat_statements.track=top")
		}
		for _, st := range o.settings {
			args = append(args, "-c", st.name+"="+st.value)
		}
		return filepath.Join(bin, "postgres"), args
	}
	s.ready = func(ctx context.Context, port int) error {
		c, err := pgx.Connect(ctx, p.adminURL(port, "postgres"))
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		return c.Ping(ctx)
	}
	if err := s.startFresh(ctx); err != nil {
		return nil, err
	}
	if err := p.createRole(ctx); err != nil {
		return nil, err
	}
	ok = true
	return p, nil
}

// createRole creates the service's role and database: the role may log in
// to database showdown and use its schema public, and nothing else (no
// superuser, no CREATE in the schema, no other database); the superuser
// keeps the database, Prepare gives the role its tables.
func (p *Postgres) createRole(ctx context.Context) error {
	port := p.server.getPort()
	steps := []struct {
		database string
		stmts    []string
	}{
		{"postgres", []string{
			"CREATE ROLE " + dbUser + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '" + p.password + "'",
			"CREATE DATABASE " + dbName,
			"REVOKE ALL ON DATABASE " + dbName + " FROM PUBLIC",
			"GRANT CONNECT ON DATABASE " + dbName + " TO " + dbUser,
			"REVOKE ALL ON DATABASE postgres FROM PUBLIC",
			"REVOKE ALL ON DATABASE template1 FROM PUBLIC",
		}},
		{dbName, []string{
			"REVOKE ALL ON SCHEMA public FROM PUBLIC",
			"GRANT USAGE ON SCHEMA public TO " + dbUser,
		}},
	}
	if p.stats {
		steps[1].stmts = append(steps[1].stmts, "CREATE EXTENSION pg_stat_statements")
	}
	for _, st := range steps {
		c, err := pgx.Connect(ctx, p.adminURL(port, st.database))
		if err != nil {
			return fmt.Errorf("PostgreSQL: connect as %s: %w", pgAdmin, err)
		}
		for _, q := range st.stmts {
			if _, err := c.Exec(ctx, q); err != nil {
				c.Close(context.Background())
				return fmt.Errorf("PostgreSQL: %s: %w", strings.Replace(q, p.password, "***", 1), err)
			}
		}
		c.Close(context.Background())
	}
	return nil
}

// adminURL is the superuser's URL for database, for the harness only.
func (p *Postgres) adminURL(port int, database string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", pgAdmin, p.admin, port, database)
}

// URL is the service's connection URL,
// "postgres://showdown:PASSWORD@127.0.0.1:PORT/showdown?sslmode=disable",
// with a password made for this server.
func (p *Postgres) URL() string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", dbUser, p.password, p.server.getPort(), dbName)
}

// Stop stops the server and removes its directory; it is safe to call more than once.
func (p *Postgres) Stop() error {
	if p == nil {
		return nil
	}
	return p.server.stop()
}
