package db

import (
	"context"
	"testing"
	"time"
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
