// Package verify is the contract conformance suite: every implementation
// under services/ must pass it (see workloads/README.md). It talks to a
// running service over HTTP only, like TechEmpower's verify mode, and
// reports one Result per check, in this order:
//
//   - common: /health, /metrics (the pinned names, the counter moves, the
//     "unmatched" route), 404 for unknown paths, 405 with Allow, malformed
//     HTTP, error answers on a kept-alive connection;
//   - per workload, a table of rows (request, accepted statuses, body
//     checks): the endpoints, then hostile inputs (wrong types, zero and
//     negative values, numbers beyond 2^53 and 2^63, floats, Unicode, U+0000,
//     lone surrogates, empty, truncated and 2 MiB bodies, duplicate keys,
//     SQL injection, path traversal), then proof that nothing was hurt;
//   - stateful checks: bank balances against every accepted transfer,
//     50 concurrent transfer workers, concurrent sign-ups; balances and
//     SKU lookups come from the database, not a cache (its statements are
//     counted with the Statements hook);
//   - destructive checks, last: a database outage per engine (DatabaseDown
//     and DatabaseUp hooks), a hung database per workload (DatabaseHang
//     and DatabaseResume) and SIGTERM under load (Terminate and Exited).
//
// Every request goes over its own connection, written byte for byte
// (http.go), so a row can send what net/http would not. Where the contract
// allows two answers (duplicate keys: last wins or 400) a row accepts both;
// a 5xx is never accepted for an input. Check names are stable: the CLI and
// its tests refer to them.
package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"slices"
	"time"
)

// Target is a running service to check.
type Target struct {
	BaseURL   string   // "http://127.0.0.1:PORT"
	Workloads []string // workloads to check, e.g. {"string","bank"}
	KnownSKUs []int64  // sku_ids known to exist (from db.Prepare), for the sku checks
	// Optional hooks. A check that needs a nil hook is reported as Skip with the reason.
	DatabaseDown func(ctx context.Context, workload string) error    // stop the workload's database
	DatabaseUp   func(ctx context.Context, workload string) error    // start it again
	Terminate    func() error                                        // send SIGTERM to the service
	Exited       func(ctx context.Context) (exitCode int, err error) // wait for the service process to exit
	// DatabaseHang freezes the workload's database (SIGSTOP: connections
	// stay open, nothing answers) and DatabaseResume thaws it; the suite
	// always calls DatabaseResume after a DatabaseHang.
	DatabaseHang   func(ctx context.Context, workload string) error
	DatabaseResume func(ctx context.Context, workload string) error
	// Statements counts the statements the service's login has run on the
	// workload's database so far (the harness's own not counted).
	Statements func(ctx context.Context, workload string) (int64, error)
	// OpenTransactions counts the service login's sessions waiting inside
	// a transaction on the workload's database (db.OpenTransactions).
	OpenTransactions func(ctx context.Context, workload string) (int, error)
	// NonDestructive leaves out the checks that stop or freeze the
	// database or stop the service (the outage, hung-database and shutdown
	// checks): what `showdown run` checks before load, on the very start
	// it then measures.
	NonDestructive bool
}

// Status is the outcome of a check.
type Status int

// The outcomes of a check.
const (
	Pass Status = iota
	Fail
	Skip
)

// String returns "PASS", "FAIL" or "SKIP".
func (s Status) String() string {
	switch s {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	case Skip:
		return "SKIP"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result is the outcome of one check.
type Result struct {
	Workload string        // "" for checks common to all workloads
	Check    string        // short stable name, e.g. "bank/transfer insufficient funds -> 409"
	Status   Status        // Pass, Fail or Skip
	Detail   string        // why it failed or was skipped; for some passes, what was measured
	Request  string        // on failure: the request sent (method, path, headers, body, truncated to a few KB)
	Response string        // on failure: the response received (status line, headers, body, truncated)
	Elapsed  time.Duration // how long the check took
}

// check is one named check; run returns nil (pass), a skipError (skip) or
// any other error (fail, its text is the Detail).
type check struct {
	workload string
	name     string
	run      func(ctx context.Context, s *session) error
}

// stage yields the checks of one step of the suite. Stages are evaluated
// lazily, in order, so a stage can use what an earlier one set up (the
// clients a bank table transfers between).
type stage func() []check

// skipError marks a check as skipped; its text is the reason.
type skipError string

func (e skipError) Error() string { return string(e) }

func skipf(format string, args ...any) error { return skipError(fmt.Sprintf(format, args...)) }

// passNote marks a check as passed with a note worth reading (what a
// stateful check measured); its text is the Detail.
type passNote string

func (e passNote) Error() string { return string(e) }

// Run runs every check for t's workloads, calling report once per check as it completes, and returns
// how many failed. Destructive checks run last: the database outage (needs DatabaseDown/Up), then
// graceful shutdown under load (needs Terminate/Exited; it leaves the service stopped).
func Run(ctx context.Context, t Target, report func(Result)) (failed int) {
	if report == nil {
		report = func(Result) {}
	}
	seen := map[string]bool{}
	t.Workloads = slices.DeleteFunc(slices.Clone(t.Workloads), func(w string) bool { dup := seen[w]; seen[w] = true; return dup })
	s, err := newSession(t)
	if err != nil {
		report(Result{Check: "target", Status: Fail, Detail: err.Error()})
		return 1
	}
	// A service that is not there would fail every check alike: say it once.
	c, err := (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, "tcp", s.addr)
	if err != nil {
		report(Result{Check: "target reachable", Status: Fail,
			Detail: fmt.Sprintf("cannot connect to %s: %v (is the service running and listening there?)", s.addr, err)})
		return 1
	}
	c.Close()
	for _, st := range plan(t) {
		for _, c := range st() {
			r := runCheck(ctx, s, c)
			if r.Status == Fail {
				failed++
			}
			report(r)
		}
	}
	return failed
}

// runCheck runs one check, turning a panic into a failure so one broken
// check cannot hide the others.
func runCheck(ctx context.Context, s *session, c check) (r Result) {
	r = Result{Workload: c.workload, Check: c.name}
	if err := ctx.Err(); err != nil {
		r.Status, r.Detail = Skip, "not run: "+err.Error()
		return r
	}
	s.last = exchange{}
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			r.Status = Fail
			r.Detail = fmt.Sprintf("check panicked (a bug in internal/verify): %v\n%s", p, debug.Stack())
		}
		r.Elapsed = time.Since(start)
	}()
	err := c.run(ctx, s)
	var skip skipError
	var note passNote
	switch {
	case err == nil:
		r.Status = Pass
	case errors.As(err, &note):
		r.Status, r.Detail = Pass, note.Error()
	case errors.As(err, &skip):
		r.Status, r.Detail = Skip, skip.Error()
	default:
		r.Status, r.Detail = Fail, err.Error()
		r.Request, r.Response = s.last.request, s.last.response
		if r.Request == "" && r.Response == "" {
			r.Response = "(no request recorded)"
		}
	}
	return r
}

// plan lists the stages for t: checks common to every service, then each
// workload's checks in the contract's order, then the destructive ones.
func plan(t Target) []stage {
	has := map[string]bool{}
	for _, w := range t.Workloads {
		has[w] = true
	}
	var stages []stage
	stages = append(stages, commonStages(t)...)
	if has["string"] {
		stages = append(stages, stringStages(t)...)
	}
	if has["bank"] {
		stages = append(stages, bankStages(t)...)
	}
	if has["users"] {
		stages = append(stages, usersStages(t)...)
	}
	if has["sku"] {
		stages = append(stages, skuStages(t)...)
	}
	if t.NonDestructive {
		return stages
	}
	stages = append(stages, outageStages(t)...)
	stages = append(stages, shutdownStages(t)...)
	return stages
}

// fixed turns a list of checks into a stage.
func fixed(cs ...check) stage { return func() []check { return cs } }
