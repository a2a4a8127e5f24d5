package db

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/showdownlab/showdown/workloads"
)

// refused runs stmt and wants an error that mentions one of want.
func refused(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want it refused", what)
		return
	}
	for _, w := range want {
		if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(w)) {
			return
		}
	}
	t.Errorf("%s: %v; want an error mentioning one of %q", what, err, want)
}

// pgExec connects with url and runs stmt.
func pgExec(ctx context.Context, url, stmt string) error {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, stmt)
	return err
}

// withPassword replaces the password of a URL user:password@.
func withPassword(url, user, password string) string {
	i := strings.Index(url, "://"+user+":")
	j := strings.Index(url, "@")
	return url[:i+len("://"+user+":")] + password + url[j:]
}

func TestPostgresLeastPrivilege(t *testing.T) {
	s := servers(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := s.Postgres
	if _, err := Prepare(ctx, "bank", s, PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := p.URL()
	outside := filepath.Join(t.TempDir(), "written-by-postgres")

	// What the service's role may not do.
	refused(t, "COPY TO PROGRAM", pgExec(ctx, svc, "COPY (SELECT 1) TO PROGRAM 'touch "+outside+"'"),
		"permission denied", "must be superuser")
	refused(t, "COPY TO a file", pgExec(ctx, svc, "COPY (SELECT 1) TO '"+outside+"'"),
		"permission denied", "must be superuser")
	refused(t, "pg_read_file", pgExec(ctx, svc, "SELECT pg_read_file('PG_VERSION')"), "permission denied")
	refused(t, "CREATE TABLE", pgExec(ctx, svc, "CREATE TABLE intruder (v int)"), "permission denied")
	refused(t, "CREATE ROLE", pgExec(ctx, svc, "CREATE ROLE intruder"), "permission denied")
	refused(t, "ALTER ROLE SUPERUSER", pgExec(ctx, svc, "ALTER ROLE showdown SUPERUSER"), "permission denied", "must be superuser")
	refused(t, "connect to database postgres", pgExec(ctx, strings.Replace(svc, "/showdown?", "/postgres?", 1), "SELECT 1"), "permission denied")
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("%s exists: the service's role wrote outside the database", outside)
	}

	// What it may: its workload's tables, which it owns, and only those.
	if err := pgExec(ctx, svc, "INSERT INTO client (balance) VALUES (5)"); err != nil {
		t.Errorf("the service's role cannot write its table: %v", err)
	}
	c, err := pgx.Connect(ctx, p.adminURL(p.Port(), dbName))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, "SELECT c.relname FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner "+
		"WHERE r.rolname = 'showdown' AND c.relkind = 'r' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	owned, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	// Other tests share the server: users' table may be there too.
	var workloadTables []string
	for _, w := range workloads.Names {
		if workloads.Database(w) == "postgres" {
			schema, _ := readSQL(w, "schema.sql")
			workloadTables = append(workloadTables, tablesOf(schema)...)
		}
	}
	for _, tb := range owned {
		if !slices.Contains(workloadTables, tb) {
			t.Errorf("showdown owns table %s, which no workload creates", tb)
		}
	}
	for _, tb := range []string{"client", "transaction"} {
		if !slices.Contains(owned, tb) {
			t.Errorf("showdown does not own bank's table %s (owns %v)", tb, owned)
		}
	}
	var super, createDB, createRole bool
	if err := c.QueryRow(ctx, "SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = 'showdown'").
		Scan(&super, &createDB, &createRole); err != nil {
		t.Fatal(err)
	}
	if super || createDB || createRole {
		t.Errorf("role showdown: superuser %v, createdb %v, createrole %v; want none", super, createDB, createRole)
	}

	// Every login needs its own password.
	logins := []struct {
		what string
		url  string
	}{
		// The service's role with a wrong password.
		{"showdown, wrong password", withPassword(svc, dbUser, "wrong")},
		// The superuser with no password over TCP.
		{"postgres, no password", strings.Replace(p.adminURL(p.Port(), dbName), ":"+p.admin+"@", "@", 1)},
		// The superuser with the service's password.
		{"postgres, the service's password", withPassword(p.adminURL(p.Port(), dbName), pgAdmin, p.password)},
		// The superuser over the Unix socket with no password: not trusted either.
		{"postgres over the socket, no password", fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", p.Dir(), p.Port(), pgAdmin, dbName)},
	}
	for _, l := range logins {
		refused(t, l.what, pgExec(ctx, l.url, "SELECT 1"), "password authentication failed", "no password", "password")
	}
	if err := pgExec(ctx, p.adminURL(p.Port(), dbName), "SELECT 1"); err != nil {
		t.Errorf("the superuser with its password: %v", err)
	}

	// Two servers never share a password.
	if o := startOther(t, func(ctx context.Context) (instance, error) { return StartPostgres(ctx) }); o.(*Postgres).password == p.password {
		t.Error("two servers got the same password")
	}
	private(t, p.Dir(), "postgres", []string{"data"}, []string{fmt.Sprintf(".s.PGSQL.%d", p.Port())})
}

// startOther starts one more server for the test, stopped at its end.
func startOther(t *testing.T, start func(context.Context) (instance, error)) instance {
	t.Helper()
	o, err := start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Stop() })
	return o
}

// private checks that dir, its subfolders and its sockets are 0700 and
// owned by the server's user (the caller when not root).
func private(t *testing.T, dir, user string, subdirs, sockets []string) {
	t.Helper()
	uid := uint32(os.Geteuid())
	if cred, err := runAs(user); err == nil && cred != nil {
		uid = cred.Uid
	}
	check := func(p string, socket bool) {
		st, err := os.Lstat(p)
		if err != nil {
			t.Error(err)
			return
		}
		if socket != (st.Mode()&os.ModeSocket != 0) {
			t.Errorf("%s: mode %v, socket %v", p, st.Mode(), socket)
		}
		if perm := st.Mode().Perm(); perm != 0o700 {
			t.Errorf("%s: permissions %v, want 0700", p, perm)
		}
		if o := st.Sys().(*syscall.Stat_t).Uid; o != uid {
			t.Errorf("%s: owned by uid %d, want %d (%s)", p, o, uid, user)
		}
	}
	check(dir, false)
	for _, d := range subdirs {
		check(filepath.Join(dir, d), false)
	}
	for _, s := range sockets {
		check(filepath.Join(dir, s), true)
	}
	// No file there holds a password in the clear.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if n := e.Name(); n == "pwfile" || n == "init.sql" {
			t.Errorf("%s still holds %s, which had the passwords", dir, n)
		}
	}
}

// myOpen opens one connection with the driver's config c.
func myOpen(ctx context.Context, c *mysql.Config) (*sql.Conn, func(), error) {
	c.Timeout = 5 * time.Second
	db, err := openMySQL(c)
	if err != nil {
		return nil, nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return conn, func() { conn.Close(); db.Close() }, nil
}

// myExec connects with c and runs stmt.
func myExec(ctx context.Context, c *mysql.Config, stmt string) error {
	conn, done, err := myOpen(ctx, c)
	if err != nil {
		return err
	}
	defer done()
	_, err = conn.ExecContext(ctx, stmt)
	return err
}

func TestMariaDBLeastPrivilege(t *testing.T) {
	s := servers(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := s.MariaDB
	if _, err := Prepare(ctx, "sku", s, PrepareOptions{SKURows: 100}); err != nil {
		t.Fatal(err)
	}
	svc := func() *mysql.Config { return myConfig(m.Port(), dbUser, m.password) }
	outside := filepath.Join(t.TempDir(), "written-by-mariadb")

	// What the service's user may not do.
	refused(t, "SELECT INTO OUTFILE", myExec(ctx, svc(), "SELECT 1 INTO OUTFILE '"+outside+"'"), "access denied", "FILE")
	refused(t, "SELECT INTO DUMPFILE", myExec(ctx, svc(), "SELECT 1 INTO DUMPFILE '"+outside+"'"), "access denied", "FILE")
	refused(t, "LOAD_FILE", func() error {
		conn, done, err := myOpen(ctx, svc())
		if err != nil {
			return err
		}
		defer done()
		var v sql.NullString
		if err := conn.QueryRowContext(ctx, "SELECT LOAD_FILE('/etc/hostname')").Scan(&v); err != nil {
			return err
		}
		if v.Valid {
			return nil // it read the file
		}
		return fmt.Errorf("access denied: LOAD_FILE gave NULL")
	}(), "access denied")
	refused(t, "CREATE TABLE", myExec(ctx, svc(), "CREATE TABLE intruder (v int)"), "denied")
	refused(t, "DROP TABLE", myExec(ctx, svc(), "DROP TABLE purch_sku_master"), "denied")
	refused(t, "SET GLOBAL local_infile", myExec(ctx, svc(), "SET GLOBAL local_infile = 1"), "denied", "privilege")
	refused(t, "another database", myExec(ctx, svc(), "SELECT * FROM mysql.user"), "denied")
	// LOAD DATA LOCAL INFILE: local_infile is off again after Prepare's load.
	mysql.RegisterReaderHandler("security-test", func() io.Reader { return strings.NewReader("1\n") })
	defer mysql.DeregisterReaderHandler("security-test")
	refused(t, "LOAD DATA LOCAL INFILE", myExec(ctx, svc(), "LOAD DATA LOCAL INFILE 'Reader::security-test' INTO TABLE purch_sku_master (mem_id)"),
		"not allowed", "disabled", "denied", "local")
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("%s exists: the service's user wrote outside the database", outside)
	}

	// What it may: read the workload's rows.
	conn, done, err := myOpen(ctx, svc())
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM purch_sku_master").Scan(&n); err != nil || n != 100 {
		t.Errorf("the service reads %d rows (%v), want 100", n, err)
	}
	var grants []string
	rows, err := conn.QueryContext(ctx, "SHOW GRANTS")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		grants = append(grants, g)
	}
	done()
	for _, g := range grants {
		if strings.Contains(g, "FILE") || strings.Contains(g, "ALL PRIVILEGES") || strings.Contains(g, "SUPER") {
			t.Errorf("the service's user has %q", g)
		}
	}

	// Every login needs its own password; root's is not empty.
	socket := filepath.Join(m.Dir(), "mysqld.sock")
	logins := []struct {
		what string
		c    *mysql.Config
	}{
		// root over TCP with no password.
		{"root, no password", myConfig(m.Port(), myAdmin, "")},
		// root with a wrong password.
		{"root, wrong password", myConfig(m.Port(), myAdmin, "wrong")},
		// root with the service's password.
		{"root, the service's password", myConfig(m.Port(), myAdmin, m.password)},
		// The service's user with a wrong password.
		{"showdown, wrong password", myConfig(m.Port(), dbUser, "wrong")},
		// root over the socket with no password.
		{"root over the socket, no password", func() *mysql.Config {
			c := myConfig(m.Port(), myAdmin, "")
			c.Net, c.Addr = "unix", socket
			return c
		}()},
	}
	for _, l := range logins {
		refused(t, l.what, myExec(ctx, l.c, "SELECT 1"), "access denied")
	}
	sockRoot := myConfig(m.Port(), myAdmin, m.root)
	sockRoot.Net, sockRoot.Addr = "unix", socket
	for _, c := range []*mysql.Config{myConfig(m.Port(), myAdmin, m.root), sockRoot} {
		if err := myExec(ctx, c, "SELECT 1"); err != nil {
			t.Errorf("root with its password over %s: %v", c.Net, err)
		}
	}
	// root has no other host to come from.
	var hosts []string
	rows, err = func() (*sql.Rows, error) {
		db, err := m.openAdmin(m.Port())
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { db.Close() })
		return db.QueryContext(ctx, "SELECT Host FROM mysql.user WHERE User = 'root' ORDER BY Host")
	}()
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var h string
		rows.Scan(&h)
		hosts = append(hosts, h)
	}
	if want := []string{"127.0.0.1", "localhost"}; !slices.Equal(hosts, want) {
		t.Errorf("root's hosts: %v, want %v", hosts, want)
	}
	if o := startOther(t, func(ctx context.Context) (instance, error) { return StartMariaDB(ctx) }); o.(*MariaDB).root == m.root {
		t.Error("two servers got the same root password")
	}
	private(t, m.Dir(), "mysql", []string{"data", "files"}, []string{"mysqld.sock"})
}
