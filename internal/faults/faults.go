// Package faults runs the bank under faults, in the manner of Jepsen's
// bank test: transfer workers send for a fixed time while faults are
// injected in turn (kill -9 of the service, a hung database, a clean
// database restart and a crash, SIGTERM with a transfer's transaction
// open), readers sum every balance in one transaction all along, and at
// the end a judge matches the ledger to the answers.
//
// Every transfer carries its identity in its amount, 1 + worker +
// (workers+1) x sequence, unique across the run, so a ledger row names
// the request that wrote it without any change to the contract's API.
// Accounts start with 10^12 each, so no transfer ever lacks funds.
package faults

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/plan"
)

// Fault is one kind of fault the test injects, named as plans name it.
type Fault = plan.Fault

// The faults, in the order the test injects them; their names are the
// plan's (plan.FaultNames).
const (
	// ServiceKill is kill -9 of the service's whole process group, then a
	// restart on the same port.
	ServiceKill = plan.FaultServiceKill
	// DatabasePause is SIGSTOP of the database (Options.Pause), then SIGCONT.
	DatabasePause = plan.FaultDatabasePause
	// DatabaseRestart is a clean restart of the database (fast shutdown).
	DatabaseRestart = plan.FaultDatabaseRestart
	// DatabaseCrash is kill -9 of the postmaster and its backends, then a
	// start that recovers from the write-ahead log.
	DatabaseCrash = plan.FaultDatabaseCrash
	// ServiceTerm is SIGTERM of the service while a transfer waits inside
	// its transaction for row locks the test holds; the locks go 1 s after
	// the signal, the transfer must be answered 200 and the service exit 0.
	ServiceTerm = plan.FaultServiceTerm
)

// All lists every fault in the order they are injected.
var All = plan.FaultNames

// ParseFaults reads a comma-separated list of faults ("all": every one).
func ParseFaults(s string) ([]Fault, error) {
	if strings.TrimSpace(s) == "all" || strings.TrimSpace(s) == "" {
		return All, nil
	}
	var out []Fault
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(All, Fault(f)) {
			return nil, fmt.Errorf("unknown fault %q (known: %s)", f, Names())
		}
		out = append(out, Fault(f))
	}
	return out, nil
}

// Names lists the faults' names, comma-separated.
func Names() string {
	var s []string
	for _, f := range All {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

// Defaults of the test.
const (
	DefaultWorkers  = plan.DefaultFaultWorkers
	DefaultPerFault = plan.DefaultFaultWindow
	DefaultPause    = plan.DefaultFaultPause
	// DefaultTimeout bounds one transfer's wait for its answer; longer
	// than DefaultPause, so a transfer held by a hung database can still
	// be answered.
	DefaultTimeout  = 10 * time.Second
	DefaultAccounts = 100
	DefaultReaders  = 2
	// DefaultRecoveryLimit is how long after its window a fault may still
	// wait for the first 2xx answer.
	DefaultRecoveryLimit = 60 * time.Second
	// startBalance is every account's deposit: the contract's maximum.
	startBalance = 1_000_000_000_000
	// termHold is how long the row locks stay held after SIGTERM.
	termHold = time.Second
	// termExitLimit is the contract's bound on a graceful exit.
	termExitLimit = 10 * time.Second
)

// Options configures Run.
type Options struct {
	// Workers send transfers back to back (DefaultWorkers).
	Workers int
	// PerFault is each fault's window: the fault comes a fifth into it
	// (DefaultPerFault).
	PerFault time.Duration
	// Faults are injected in this order (nil: All).
	Faults []Fault
	// Pause is how long db-pause keeps the database stopped (DefaultPause).
	Pause time.Duration
	// Timeout bounds the wait for one answer (DefaultTimeout).
	Timeout time.Duration
	// Accounts is the number of accounts the workers move money between
	// (DefaultAccounts).
	Accounts int
	// Progress receives a line per fault (nil: discarded).
	Progress io.Writer
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.PerFault <= 0 {
		o.PerFault = DefaultPerFault
	}
	if len(o.Faults) == 0 {
		o.Faults = All
	}
	if o.Pause <= 0 {
		o.Pause = DefaultPause
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Accounts < 2 {
		o.Accounts = DefaultAccounts
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

// Service is the service under test, as the faults need it.
type Service interface {
	// Kill sends SIGKILL to the service's process group and waits for it
	// to exit.
	Kill() error
	// Terminate sends SIGTERM to the service.
	Terminate() error
	// Wait waits for the service to exit and returns its exit code.
	Wait(ctx context.Context) (exitCode int, err error)
	// Restart starts it again at the same URL and waits until it is healthy.
	Restart(ctx context.Context) error
}

// Database is the bank's database server, as the faults need it.
type Database interface {
	Pause() error
	Resume() error
	Restart(ctx context.Context) error
	Crash() error
	Up(ctx context.Context) error
}

// Target is what the test runs against.
type Target struct {
	Stack    string
	BaseURL  string
	Service  Service
	Database Database
	// Bank reaches the bank's database as the harness (readers, row locks,
	// the ledger).
	Bank db.Servers
	// Durability states the database's settings, for the record.
	Durability string
}
