package db

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestStatements(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	shared := servers(t)
	if _, err := Statements(ctx, "users", shared); !errors.Is(err, ErrNoStatementStats) {
		t.Errorf("PostgreSQL without WithStatementStats: %v, want ErrNoStatementStats", err)
	}
	if _, err := Statements(ctx, "string", shared); err == nil {
		t.Error("a workload without a database: no error")
	}
	pg, err := StartPostgres(ctx, WithStatementStats())
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	myAs := func(user, password string) func(string) error {
		return func(q string) error { return myExec(ctx, myConfig(shared.MariaDB.Port(), user, password), q) }
	}
	tests := []struct {
		workload  string
		s         Servers
		service   func(stmt string) error // runs stmt as the service
		admin     func(stmt string) error // runs stmt as the administrator
		adminSeen bool                    // the administrator's statements count too
	}{
		// PostgreSQL: pg_stat_statements, role showdown only.
		{"users", Servers{Postgres: pg},
			func(q string) error { return pgExec(ctx, pg.URL(), q) },
			func(q string) error { return pgExec(ctx, pg.adminURL(pg.Port(), dbName), q) }, false},
		// MariaDB: the Com_ counters, every login.
		{"sku", shared, myAs(dbUser, shared.MariaDB.password), myAs(myAdmin, shared.MariaDB.root), true},
	}
	for _, tt := range tests {
		before, err := Statements(ctx, tt.workload, tt.s)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			if err := tt.admin("SELECT 1"); err != nil {
				t.Fatal(err)
			}
		}
		mid, err := Statements(ctx, tt.workload, tt.s)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := Statements(ctx, tt.workload, tt.s); err != nil || again != mid {
			t.Errorf("%s: counting counted itself: %d -> %d (%v)", tt.workload, mid, again, err)
		}
		if seen := mid - before; (seen != 0) != tt.adminSeen || (tt.adminSeen && seen < 5) {
			t.Errorf("%s: 5 statements of the administrator counted as %d", tt.workload, seen)
		}
		for i := 0; i < 7; i++ {
			if err := tt.service("SELECT 1"); err != nil {
				t.Fatal(err)
			}
		}
		after, err := Statements(ctx, tt.workload, tt.s)
		if err != nil {
			t.Fatal(err)
		}
		if after-mid < 7 {
			t.Errorf("%s: 7 statements of the service counted as %d (%d -> %d)", tt.workload, after-mid, mid, after)
		}
	}
}

func TestPause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			s, err := e.start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			p := s.(interface {
				Pause() error
				Resume() error
			})
			if err := p.Pause(); err != nil {
				t.Fatal(err)
			}
			qctx, qcancel := context.WithTimeout(ctx, time.Second)
			_, err = e.value(qctx, s.URL(), "SELECT 1")
			qcancel()
			if err == nil {
				t.Error("a paused server answered")
			}
			if err := p.Resume(); err != nil {
				t.Fatal(err)
			}
			if v, err := e.value(ctx, s.URL(), "SELECT 1"); err != nil || v != "1" {
				t.Errorf("after Resume: %q, %v", v, err)
			}
			// Stop thaws a paused server and shuts it down cleanly.
			if err := p.Pause(); err != nil {
				t.Fatal(err)
			}
			pid := s.PID()
			start := time.Now()
			if err := s.Stop(); err != nil {
				t.Errorf("Stop of a paused server: %v", err)
			}
			if d := time.Since(start); d >= DefaultStopTimeout {
				t.Errorf("Stop of a paused server took %v: it was killed, not shut down", d)
			}
			waitGone(t, pid)
		})
	}
}
