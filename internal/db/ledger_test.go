package db

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestDurableCrash starts each engine durably, checks its settings, commits
// a row, kills the server with Crash and starts it again: the row must
// have survived the crash recovery.
func TestDurableCrash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	settings := map[string][]struct{ query, want string }{
		"postgres": {{"SHOW fsync", "on"}, {"SHOW synchronous_commit", "on"}, {"SHOW full_page_writes", "on"}},
		"mariadb":  {{"SELECT @@innodb_flush_log_at_trx_commit", "1"}, {"SELECT @@innodb_doublewrite", "1"}},
	}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			s, err := e.start(ctx, WithDurable())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			for _, st := range settings[e.name] {
				if v, err := e.value(ctx, s.URL(), st.query); err != nil || v != st.want {
					t.Errorf("%s = %q (%v), want %q", st.query, v, err, st.want)
				}
			}
			crash := s.(interface{ Crash() error })
			pg, _ := s.(*Postgres)
			if pg != nil {
				// A committed deposit, acknowledged before the crash.
				if _, err := Prepare(ctx, "bank", Servers{Postgres: pg}, PrepareOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := e.exec(ctx, s.URL(), "INSERT INTO client (balance) VALUES (5)"); err != nil {
					t.Fatal(err)
				}
			}
			pid := s.PID()
			if err := crash.Crash(); err != nil {
				t.Fatal(err)
			}
			if s.PID() != 0 {
				t.Errorf("PID after Crash = %d, want 0", s.PID())
			}
			waitGone(t, pid)
			if err := crash.Crash(); err == nil {
				t.Error("Crash of a server that is down: no error")
			}
			if err := s.Up(ctx); err != nil {
				t.Fatalf("Up after Crash: %v", err)
			}
			if v, err := e.value(ctx, s.URL(), "SELECT 1"); err != nil || v != "1" {
				t.Errorf("after recovery: %q, %v", v, err)
			}
			if pg != nil {
				r, err := OpenBankReader(ctx, Servers{Postgres: pg})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if total, clients, err := r.Total(ctx); err != nil || total != 5 || clients != 1 {
					t.Errorf("after recovery: total %d of %d clients (%v), want 5 of 1", total, clients, err)
				}
			}
		})
	}
}

// TestClientLock holds a client's row and sees a transaction of the
// service wait for it, and only that one: a wait between two service
// transactions is not ours.
func TestClientLock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := servers(t)
	pgs := Servers{Postgres: s.Postgres}
	if _, err := Prepare(ctx, "bank", pgs, PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, s.Postgres.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	a, b := svc(), svc()
	if _, err := a.Exec(ctx, "INSERT INTO client (balance) VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	// b waits for a's lock on client 2: not the test's lock.
	if _, err := a.Exec(ctx, "BEGIN; SELECT id FROM client WHERE id = 2 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	bdone := make(chan error, 1)
	go func() {
		_, err := b.Exec(ctx, "SELECT id FROM client WHERE id = 2 FOR UPDATE")
		bdone <- err
	}()
	l, err := LockClients(ctx, pgs, 1)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n, err := l.Waiters(ctx); err != nil || n != 0 {
		t.Errorf("waiters with only another's lock waited for: %d (%v), want 0", n, err)
	}
	// a now waits for the test's lock on client 1.
	adone := make(chan error, 1)
	go func() {
		_, err := a.Exec(ctx, "SELECT id FROM client WHERE id = 1 FOR UPDATE")
		adone <- err
	}()
	n := 0
	for deadline := time.Now().Add(10 * time.Second); n == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n, err = l.Waiters(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n != 1 {
		t.Errorf("waiters = %d, want 1", n)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-adone; err != nil {
		t.Errorf("the waiting statement after Release: %v", err)
	}
	if _, err := a.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-bdone; err != nil {
		t.Errorf("b: %v", err)
	}
	if _, err := LockClients(ctx, pgs, 1, 99); err == nil {
		t.Error("LockClients of a client that does not exist: no error")
	}
}
