package db

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// instance is what both server types offer.
type instance interface {
	URL() string
	PID() int
	Port() int
	Dir() string
	Down(context.Context) error
	Up(context.Context) error
	Restart(context.Context) error
	Stop() error
}

var (
	_ instance = (*Postgres)(nil)
	_ instance = (*MariaDB)(nil)
)

// engine starts one kind of server and runs SQL on it through its URL.
type engine struct {
	name  string
	start func(context.Context, ...Option) (instance, error)
	exec  func(ctx context.Context, url, stmt string) error
	value func(ctx context.Context, url, query string) (string, error)
	// maxConns is the query that shows max_connections.
	maxConns string
	// readyLine is in the server's log once it is ready.
	readyLine string
}

// syncBuffer is a bytes.Buffer safe for the log copier and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var engines = []engine{
	{
		name:      "postgres",
		maxConns:  "SHOW max_connections",
		readyLine: "database system is ready to accept connections",
		start:     func(ctx context.Context, o ...Option) (instance, error) { return StartPostgres(ctx, o...) },
		exec: func(ctx context.Context, url, stmt string) error {
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			_, err = c.Exec(ctx, stmt)
			return err
		},
		value: func(ctx context.Context, url, q string) (string, error) {
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				return "", err
			}
			defer c.Close(ctx)
			var v string
			err = c.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&v)
			return v, err
		},
	},
	{
		name:      "mariadb",
		maxConns:  "SELECT @@max_connections",
		readyLine: "ready for connections",
		start:     func(ctx context.Context, o ...Option) (instance, error) { return StartMariaDB(ctx, o...) },
		exec: func(ctx context.Context, url, stmt string) error {
			db, err := openURL(url)
			if err != nil {
				return err
			}
			defer db.Close()
			_, err = db.ExecContext(ctx, stmt)
			return err
		},
		value: func(ctx context.Context, url, q string) (string, error) {
			db, err := openURL(url)
			if err != nil {
				return "", err
			}
			defer db.Close()
			var v string
			err = db.QueryRowContext(ctx, q).Scan(&v)
			return v, err
		},
	},
}

// openURL opens a mysql:// URL the way a service would: by turning it into
// the driver's DSN.
func openURL(url string) (*sql.DB, error) {
	rest, ok := strings.CutPrefix(url, "mysql://")
	if !ok {
		return nil, fmt.Errorf("not a mysql URL: %s", url)
	}
	cred, rest, _ := strings.Cut(rest, "@")
	addr, dbname, _ := strings.Cut(rest, "/")
	user, pass, _ := strings.Cut(cred, ":")
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = user, pass, "tcp", addr, dbname
	c.Timeout = 3 * time.Second
	return sql.Open("mysql", c.FormatDSN())
}

// adminURL is the administrator's URL of a server (postgres or root), in
// the form the engine's exec and value take.
func adminURL(i instance) string {
	switch s := i.(type) {
	case *Postgres:
		return s.adminURL(s.Port(), dbName)
	case *MariaDB:
		return fmt.Sprintf("mysql://%s:%s@127.0.0.1:%d/%s", myAdmin, s.root, s.Port(), dbName)
	}
	panic(fmt.Sprintf("adminURL: %T", i))
}

// gone reports whether neither pid nor its process group exists any more.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) && errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)
}

// waitGone waits (bounded) until pid and its group are gone.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 200 && !gone(pid); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !gone(pid) {
		t.Errorf("process %d or its group still exists", pid)
	}
}

// processesMentioning lists the pids other than this test's whose command
// line contains s.
func processesMentioning(s string) []int {
	return slices.DeleteFunc(processesNaming(s), func(pid int) bool { return pid == os.Getpid() })
}

// parentDir makes a parent directory the database users can traverse.
func parentDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "showdown-dbtest-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func empty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("%s still holds %d entries, first %s", dir, len(ents), ents[0].Name())
	}
}

func TestLifecycle(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			parent := parentDir(t)
			var log syncBuffer
			s, err := e.start(ctx, WithDir(parent), WithMaxConnections(37), WithLog(&log))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			pid, port, dir := s.PID(), s.Port(), s.Dir()
			if v, err := e.value(ctx, s.URL(), e.maxConns); err != nil || v != "37" {
				t.Errorf("max_connections = %q, %v; want 37 (WithMaxConnections)", v, err)
			}
			if pid <= 0 || gone(pid) {
				t.Fatalf("PID() = %d, want a live process", pid)
			}
			if !regexp.MustCompile(`://showdown:[A-Za-z0-9_-]{24}@127\.0\.0\.1:` + strconv.Itoa(port) + `/showdown\b`).MatchString(s.URL()) {
				t.Errorf("URL() = %s, want user showdown, a 24-character password, port %d and database showdown", s.URL(), port)
			}
			admin := adminURL(s)
			if err := e.exec(ctx, admin, "CREATE TABLE kept (v int)"); err != nil {
				t.Fatal(err)
			}
			if err := e.exec(ctx, admin, "INSERT INTO kept VALUES (7)"); err != nil {
				t.Fatal(err)
			}

			if !strings.Contains(log.String(), e.readyLine) {
				t.Errorf("WithLog got %q, want the server's %q", log.String(), e.readyLine)
			}

			// Down: the server is gone, its data and port stay.
			if err := s.Down(ctx); err != nil {
				t.Fatal(err)
			}
			waitGone(t, pid)
			if s.PID() != 0 {
				t.Errorf("PID() after Down = %d, want 0", s.PID())
			}
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := e.exec(cctx, s.URL(), "SELECT 1"); err == nil {
				t.Error("a query succeeded while the server was down")
			}
			cancel()
			if err := s.Down(ctx); err != nil {
				t.Errorf("second Down: %v", err)
			}

			// Up: same port, same data.
			if err := s.Up(ctx); err != nil {
				t.Fatal(err)
			}
			if s.Port() != port {
				t.Errorf("port after Up = %d, want %d", s.Port(), port)
			}
			if v, err := e.value(ctx, admin, "SELECT v FROM kept"); err != nil || v != "7" {
				t.Errorf("after Up: SELECT v = %q, %v; want 7", v, err)
			}

			// Restart: a new process, same data.
			old := s.PID()
			if err := s.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			waitGone(t, old)
			if v, err := e.value(ctx, admin, "SELECT v FROM kept"); err != nil || v != "7" {
				t.Errorf("after Restart: SELECT v = %q, %v; want 7", v, err)
			}

			// A crash (the server killed from outside): PID reports it
			// gone and Up brings it back with its data.
			crashed := s.PID()
			if err := syscall.Kill(crashed, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 100 && s.PID() != 0; i++ {
				time.Sleep(50 * time.Millisecond)
			}
			if s.PID() != 0 {
				t.Errorf("PID() after a crash = %d, want 0", s.PID())
			}
			waitGone(t, crashed)
			if err := s.Up(ctx); err != nil {
				t.Fatal(err)
			}
			if v, err := e.value(ctx, admin, "SELECT v FROM kept"); err != nil || v != "7" {
				t.Errorf("after a crash and Up: SELECT v = %q, %v; want 7", v, err)
			}

			// Stop: nothing of ours remains, and Stop again is harmless.
			last := s.PID()
			kids := children(last)
			if e.name == "postgres" && len(kids) == 0 {
				t.Error("found no children of the postmaster to check")
			}
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			waitGone(t, last)
			for _, k := range kids {
				if k.alive() {
					t.Errorf("child %d of the server outlived Stop", k.pid)
				}
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("directory %s still exists after Stop (%v)", dir, err)
			}
			if p := processesMentioning(dir); len(p) > 0 {
				t.Errorf("processes %v still mention %s", p, dir)
			}
			if err := s.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
			if err := s.Up(ctx); err == nil {
				t.Error("Up after Stop succeeded, want an error")
			}
			empty(t, parent)
		})
	}
}

// TestStartCancelled cancels a start at each phase: the start fails with
// the context's error and leaves no process and no directory.
func TestStartCancelled(t *testing.T) {
	for _, e := range engines {
		for _, phase := range []string{"init", "spawned"} {
			t.Run(e.name+"/"+phase, func(t *testing.T) {
				parent := parentDir(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var pids []int
				testHook = func(p string, pid int) {
					if p == phase {
						pids = append(pids, pid)
						cancel()
					}
				}
				defer func() { testHook = nil }()
				s, err := e.start(ctx, WithDir(parent))
				if err == nil {
					s.Stop()
					t.Fatal("start succeeded after its context was cancelled")
				}
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
				if len(pids) == 0 {
					t.Fatalf("phase %s never reached", phase)
				}
				for _, pid := range pids {
					waitGone(t, pid)
				}
				if p := processesMentioning(parent); len(p) > 0 {
					t.Errorf("processes %v still mention %s", p, parent)
				}
				empty(t, parent)
			})
		}
	}
}

// TestStartFails shows a server that cannot start: the error quotes its
// log, and nothing is left behind.
func TestStartFails(t *testing.T) {
	tests := []struct {
		e    engine
		opt  Option
		want string
	}{
		// PostgreSQL refuses a malformed setting.
		{engines[0], WithSetting("shared_buffers", "lots"), "shared_buffers"},
		// MariaDB refuses an unknown option.
		{engines[1], WithSetting("no-such-option", "1"), "no-such-option"},
	}
	for _, tt := range tests {
		parent := parentDir(t)
		s, err := tt.e.start(context.Background(), WithDir(parent), tt.opt, WithStartTimeout(20*time.Second))
		if err == nil {
			s.Stop()
			t.Errorf("%s: start succeeded, want an error", tt.e.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "log") {
			t.Errorf("%s: error %q does not quote the log about %s", tt.e.name, err, tt.want)
		}
		empty(t, parent)
	}
}

func TestMissingBinaries(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("SHOWDOWN_PG_BIN", "")
	oldGlob, oldDirs := pgLibGlob, mariadbDirs
	pgLibGlob, mariadbDirs = "/nonexistent/*/bin", []string{"/nonexistent"}
	defer func() { pgLibGlob, mariadbDirs = oldGlob, oldDirs }()

	tests := []struct {
		name  string
		start func() error
		hint  string
	}{
		{"postgres", func() error { _, err := StartPostgres(context.Background()); return err }, "apt-get install -y postgresql"},
		{"mariadb", func() error { _, err := StartMariaDB(context.Background()); return err }, "apt-get install -y mariadb-server"},
	}
	for _, tt := range tests {
		err := tt.start()
		var me *MissingError
		if !errors.As(err, &me) {
			t.Errorf("%s: err = %v, want a *MissingError", tt.name, err)
			continue
		}
		if !strings.Contains(me.Hint(), tt.hint) {
			t.Errorf("%s: Hint() = %q, want it to contain %q", tt.name, me.Hint(), tt.hint)
		}
	}
}

// TestSHOWDOWN_PG_BIN shows the environment variable wins over the default place.
func TestPostgresBinFromEnv(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"initdb", "postgres"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("SHOWDOWN_PG_BIN", dir)
	if got, err := postgresBin(); err != nil || got != dir {
		t.Errorf("postgresBin() = %q, %v; want %q", got, err, dir)
	}
}

// TestParentDies kills a process that started servers: its servers die
// with it (Pdeathsig), as they would when showdown itself is killed.
func TestParentDies(t *testing.T) {
	if os.Getenv("SHOWDOWN_DB_CHILD") != "" {
		ctx := context.Background()
		parent := os.Getenv("SHOWDOWN_DB_CHILD")
		pg, err := StartPostgres(ctx, WithDir(parent))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		m, err := StartMariaDB(ctx, WithDir(parent))
		if err != nil {
			pg.Stop()
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("pids", pg.PID(), m.PID())
		time.Sleep(2 * time.Minute) // killed long before
		os.Exit(2)
	}
	parent := parentDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestParentDies$")
	cmd.Env = append(os.Environ(), "SHOWDOWN_DB_CHILD="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pgPID, myPID int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "pids %d %d", &pgPID, &myPID); err == nil {
			break
		}
		if strings.HasPrefix(sc.Text(), "error") {
			t.Fatal(sc.Text())
		}
	}
	if pgPID == 0 || myPID == 0 {
		t.Fatal("the child process did not report its servers")
	}
	kids := children(pgPID)
	if len(kids) == 0 {
		t.Error("found no children of the postmaster to check")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitGone(t, pgPID)
	waitGone(t, myPID)
	for _, k := range kids {
		for i := 0; i < 100 && k.alive(); i++ {
			time.Sleep(100 * time.Millisecond)
		}
		if k.alive() {
			t.Errorf("backend %d outlived its postmaster", k.pid)
		}
	}
	for i := 0; i < 100 && len(processesMentioning(parent)) > 0; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if p := processesMentioning(parent); len(p) > 0 {
		t.Errorf("processes %v outlived their parent", p)
	}

	// The next start removes what the dead run left, and only that: not a
	// directory whose owner lives, nor one with no owner recorded.
	left, _ := filepath.Glob(filepath.Join(parent, "showdown-*"))
	if len(left) != 2 {
		t.Fatalf("the killed run left %v, want its two directories", left)
	}
	living := filepath.Join(parent, "showdown-pg-living")
	unknown := filepath.Join(parent, "showdown-mariadb-unknown")
	for _, d := range []string{living, unknown} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	start, _ := startTime(os.Getpid())
	if err := os.WriteFile(filepath.Join(living, ownerFile), []byte(fmt.Sprintf("%d %s\n", os.Getpid(), start)), 0o600); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	pg, err := StartPostgres(context.Background(), WithDir(parent), WithLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	for _, d := range left {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s of the killed run is still there (%v)", d, err)
		}
		if !strings.Contains(log.String(), "removed "+d) {
			t.Errorf("the log does not say %s was removed", d)
		}
	}
	for _, d := range []string{living, unknown, pg.Dir()} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
