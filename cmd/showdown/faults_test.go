package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/machine"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

func TestVerifyFaultsUsage(t *testing.T) {
	root := tinyTree(t)
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		// A fault that does not exist.
		{"unknown fault", []string{"--faults", "--service", "tiny-bad", "--fault", "db-pause,meteor"}, `unknown fault "meteor"`},
		// The faults restart the service: showdown must own it.
		{"url", []string{"--faults", "--url", "http://127.0.0.1:1"}, "--faults needs --service"},
		// Only the bank has transfers.
		{"workload", []string{"--faults", "--service", "tiny-bad", "--workload", "sku"}, "--faults runs the bank workload only"},
		// No workers, no test.
		{"workers", []string{"--faults", "--service", "tiny-bad", "--workers", "0"}, "--workers 0 is out of range"},
		// A window too short to hold a fault.
		{"per-fault", []string{"--faults", "--service", "tiny-bad", "--per-fault", "10ms"}, "--per-fault 10ms is too short"},
		// A service without the bank.
		{"no bank", []string{"--faults", "--service", "tiny-bad"}, "tiny-bad does not serve workload bank"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, _, errb := svcTestState(context.Background(), map[string]string{"SHOWDOWN_ROOT": root})
			if code := run(st, append([]string{"verify"}, tt.args...)); code != exitUsage {
				t.Errorf("exit code = %d, want %d (usage)\nstderr:\n%s", code, exitUsage, errb)
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, errb)
			}
		})
	}
}

// TestFaults runs 'showdown verify --faults' for every implementation, a
// short version (2 s per fault, 16 workers, a 1 s pause), against one
// real durable PostgreSQL: no 2xx may be lost, no row may be extra, every
// sum of balances must hold, no transfer answered 4xx/5xx may be in the
// ledger (a failed COMMIT is resolved, workloads/bank/README.md), every
// fault must be recovered from, and the transfer open at SIGTERM must be
// answered 200 before a clean exit. Two stacks run at once, each lane
// with its own PostgreSQL (conformanceLanes).
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, starts and kills every service (skipped with -short)")
	}
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := service.Discover(root)
	if err != nil {
		t.Errorf("invalid manifests:\n%v", err)
	}
	prebuildOnce(t, ms)
	// One durable PostgreSQL per lane (conformanceLanes), each shared by
	// the stacks of its lane in turn: a fault crashes and restarts its
	// server, so two stacks never share one at once. Cleanup, not defer:
	// the parallel subtests run after this function returns.
	type lane struct{ pg *db.Postgres }
	lanes := make(chan *lane, conformanceLanes)
	for range conformanceLanes {
		l := &lane{}
		t.Cleanup(func() { l.pg.Stop() })
		lanes <- l
	}
	prev := faultDatabases
	faultDatabases = func(ctx context.Context, progress io.Writer) (*stack.Databases, error) {
		l := ctx.Value(laneKey{}).(*lane)
		if l.pg == nil {
			fmt.Fprintln(progress, "starting postgres (shared by a lane, durable)")
			pg, err := db.StartPostgres(ctx, db.WithDurable())
			if err != nil {
				return nil, err
			}
			l.pg = pg
		}
		return stack.Use(db.Servers{Postgres: l.pg}, stack.DatabaseOptions{Progress: progress}), nil
	}
	t.Cleanup(func() { faultDatabases = prev })

	for _, m := range ms {
		if !m.Supports("bank") {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			if why := toolchainMissing(m); why != "" {
				t.Skipf("toolchain absent: %s", why)
			}
			t.Parallel()
			l := <-lanes
			defer func() { lanes <- l }()
			start := time.Now()
			before, _ := machine.ReadStat()
			st, out, errb := svcTestState(context.WithValue(context.Background(), laneKey{}, l), map[string]string{"SHOWDOWN_ROOT": root})
			code := run(st, []string{"verify", "--faults", "--service", m.Name, "--health-timeout", "5m",
				"--per-fault", "2s", "--pause", "1s", "--workers", "16"})
			t.Logf("%s in %s:\n%s", m.Name, time.Since(start).Round(time.Second), out)
			if code != exitOK {
				t.Errorf("showdown verify --faults --service %s: exit code %d\nstderr:\n%s\n%s", m.Name, code, errb, machine.Since(before))
			}
		})
	}
}
