package db

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
)

// MariaDB is a private MariaDB server in a temporary directory on a free loopback port.
// Its lifecycle (Port, Dir, PID, Down, Up, Restart, Crash, Pause, Resume)
// is the server's it embeds, which PostgreSQL shares.
type MariaDB struct {
	*server
	password string // the service user's, new for every server
	root     string // root's password, new for every server
}

// myAdmin is MariaDB's administrator, which only the harness uses.
const myAdmin = "root"

// mariadbDirs is where Debian installs MariaDB's server and its install script.
var mariadbDirs = []string{"/usr/sbin", "/usr/bin"}

// mariadbBins finds the server and the install script: mariadbd or mysqld,
// and mariadb-install-db or mysql_install_db, on PATH or in mariadbDirs.
func mariadbBins() (server, install string, err error) {
	missing := &MissingError{
		What:    "MariaDB server (mariadbd and mariadb-install-db)",
		Looked:  "PATH, " + strings.Join(mariadbDirs, ", "),
		Install: "apt-get install -y mariadb-server",
	}
	server, err = lookPath([]string{"mariadbd", "mysqld"}, mariadbDirs)
	if err != nil {
		return "", "", missing
	}
	install, err = lookPath([]string{"mariadb-install-db", "mysql_install_db"}, mariadbDirs)
	if err != nil {
		return "", "", missing
	}
	return server, install, nil
}

// myConfig is the go-sql-driver configuration for user with password.
func myConfig(port int, user, password string) *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Passwd = user, password
	c.Net, c.Addr = "tcp", "127.0.0.1:"+strconv.Itoa(port)
	c.DBName = dbName
	c.AllowNativePasswords = true
	c.InterpolateParams = true
	return c
}

// StartMariaDB initialises a MariaDB data directory in a new temporary
// directory, starts the server on a free loopback port (as the mysql user
// when running as root) and waits until it answers. Every login needs a
// password made for this server: root (the harness's own, for Prepare;
// only from localhost and 127.0.0.1) and the service's user showdown, which
// may only read and write the rows of database showdown's tables (SELECT,
// INSERT, UPDATE, DELETE; no FILE, no DDL). On any error, nothing is left
// behind. The caller must Stop it.
func StartMariaDB(ctx context.Context, opts ...Option) (*MariaDB, error) {
	bin, install, err := mariadbBins()
	if err != nil {
		return nil, err
	}
	o := newOptions(opts)
	cred, err := runAs("mysql")
	if err != nil {
		return nil, err
	}
	s := &server{engine: "MariaDB", o: o, cred: cred, stopSig: syscall.SIGTERM,
		bindFail: []string{"Address already in use", "Can't start server: Bind on TCP/IP port"}}
	m := &MariaDB{server: s}
	ok := false
	defer s.stopUnless(&ok)
	if m.password, m.root, err = s.begin("showdown-mariadb-"); err != nil {
		return nil, err
	}
	// root keeps localhost (the socket) and 127.0.0.1, both with a
	// password; its other hosts (::1, the machine's name) go.
	extra, err := s.writeFile("init.sql", fmt.Sprintf(
		"FLUSH PRIVILEGES;\n"+
			"DELETE FROM mysql.global_priv WHERE User = '%[4]s' AND Host NOT IN ('localhost', '127.0.0.1');\n"+
			"FLUSH PRIVILEGES;\n"+
			"ALTER USER '%[4]s'@'localhost' IDENTIFIED BY '%[5]s';\n"+
			"ALTER USER '%[4]s'@'127.0.0.1' IDENTIFIED BY '%[5]s';\n"+
			"CREATE DATABASE %[1]s CHARACTER SET utf8mb4;\n"+
			"CREATE USER '%[2]s'@'127.0.0.1' IDENTIFIED BY '%[3]s';\n"+
			"CREATE USER '%[2]s'@'localhost' IDENTIFIED BY '%[3]s';\n"+
			"GRANT SELECT, INSERT, UPDATE, DELETE ON %[1]s.* TO '%[2]s'@'127.0.0.1';\n"+
			"GRANT SELECT, INSERT, UPDATE, DELETE ON %[1]s.* TO '%[2]s'@'localhost';\n",
		dbName, dbUser, m.password, myAdmin, m.root))
	if err != nil {
		return nil, err
	}
	files := filepath.Join(s.dir, "files") // secure_file_priv: empty, the server's alone
	if err := os.Mkdir(files, 0o700); err != nil {
		return nil, fmt.Errorf("MariaDB: %w", err)
	}
	if err := s.own(files); err != nil {
		return nil, err
	}
	data := filepath.Join(s.dir, "data")
	common := []string{"--no-defaults", "--datadir=" + data}
	args := append(append([]string{}, common...), "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve", "--extra-file="+extra,
		"--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0")
	err = s.run(ctx, install, args...)
	os.Remove(extra) // it holds the passwords
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(data, 0o700); err != nil {
		return nil, fmt.Errorf("MariaDB: %w", err)
	}
	socket := filepath.Join(s.dir, "mysqld.sock")
	s.sockets = []string{socket}
	s.command = func(port int) (string, []string) {
		args := append(append([]string{}, common...),
			"--port="+strconv.Itoa(port),
			"--bind-address=127.0.0.1",
			"--socket="+socket,
			"--pid-file="+filepath.Join(s.dir, "mariadbd.pid"),
			"--tmpdir="+s.dir,
			"--skip-name-resolve",
			"--skip-log-bin",
			"--local-infile=0",
			"--secure-file-priv="+files,
		)
		if o.durable {
			args = append(args, "--innodb-flush-log-at-trx-commit=1", "--innodb-doublewrite=1")
		} else {
			args = append(args, "--innodb-flush-log-at-trx-commit=2", "--innodb-doublewrite=0")
		}
		if o.maxConns > 0 {
			args = append(args, "--max-connections="+strconv.Itoa(o.maxConns))
		}
		for _, st := range o.settings {
			args = append(args, "--"+st.name+"="+st.value)
		}
		return bin, args
	}
	s.ready = func(ctx context.Context, port int) error {
		db, err := m.openAdmin(port)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.PingContext(ctx)
	}
	if err := s.startFresh(ctx); err != nil {
		return nil, err
	}
	ok = true
	return m, nil
}

// openMySQL opens a one-connection pool with config c.
func openMySQL(c *mysql.Config) (*sql.DB, error) {
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	return db, nil
}

// openAdmin opens a one-connection pool as root on database showdown, for
// the harness only.
func (m *MariaDB) openAdmin(port int) (*sql.DB, error) {
	return openMySQL(myConfig(port, myAdmin, m.root))
}

// URL is the service's connection URL,
// "mysql://showdown:PASSWORD@127.0.0.1:PORT/showdown", with a password made
// for this server.
func (m *MariaDB) URL() string {
	return fmt.Sprintf("mysql://%s:%s@127.0.0.1:%d/%s", dbUser, m.password, m.server.getPort(), dbName)
}

// Stop stops the server and removes its directory; it is safe to call more than once.
func (m *MariaDB) Stop() error {
	if m == nil {
		return nil
	}
	return m.server.stop()
}
