package lab

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stack"
)

// contract runs the contract suite's non-destructive checks of workload w
// (the Contract step, verify.RunEach: all but the database outage, hung
// database and shutdown checks, which stay in `showdown verify`) on the
// started service that is then measured, and counts them into c. It
// returns why the service fails the contract, or "".
//
// The suite's statement counting (it proves SKU lookups and balances are
// not cached) needs pg_stat_statements, which the lab's databases do not
// load so that it costs the measured runs nothing: those checks are
// skipped here and run in `showdown verify`.
//
// A suite that fails runs once more, after ContractRetryPause: on a busy
// machine a stack pinned to one CPU can miss one of the suite's deadlines
// once. The implementation fails when the second attempt fails too; when
// it passes, the first attempt's failures stay in c.FirstFailures.
func (x *execution) contract(ctx context.Context, svc *stack.Service, w string, c *results.Contract) string {
	x.progress.Phase("contract", 0)
	x.runSuite(ctx, svc, w, c)
	if c.Failed > 0 && ctx.Err() == nil {
		x.Say("%s on %s: %d contract check(s) failed (%s); running the suite once more", svc.Manifest().Name, w, c.Failed, c.Failures[0].Check)
		first := c.Failures
		select {
		case <-ctx.Done():
		case <-time.After(ContractRetryPause):
		}
		*c = results.Contract{Mode: c.Mode, Attempts: 2, FirstFailures: first}
		x.runSuite(ctx, svc, w, c)
	}
	if err := ctx.Err(); err != nil {
		return "contract check: " + err.Error()
	}
	if c.Failed == 0 {
		return ""
	}
	var names []string
	for i, f := range c.Failures {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(c.Failures)-3))
			break
		}
		names = append(names, f.Check)
	}
	return fmt.Sprintf("contract: %d of %d checks failed (%s); `showdown verify --service %s --workload %s` shows each request and response",
		c.Failed, c.Passed+c.Failed+c.Skipped, strings.Join(names, "; "), svc.Manifest().Name, w)
}

// ContractRetryPause is the pause before a failed contract suite runs
// again.
const ContractRetryPause = time.Second

// maxDetail bounds a failed check's detail in run.json.
const maxDetail = 500

// runSuite runs the suite's non-destructive checks of w once (the
// Contract step), counting them into c.
func (x *execution) runSuite(ctx context.Context, svc *stack.Service, w string, c *results.Contract) {
	var open func(ctx context.Context, workload string) (int, error)
	if x.dbs != nil {
		open = x.dbs.OpenTransactions
	}
	x.rn.Steps.Contract(ctx, svc.URL(), w, x.known, open, func(check string, passed, skipped bool, detail string) {
		switch {
		case passed:
			c.Passed++
		case skipped:
			c.Skipped++
		default:
			c.Failed++
			if len(detail) > maxDetail {
				detail = detail[:maxDetail] + "..."
			}
			c.Failures = append(c.Failures, results.CheckFailure{Check: check, Detail: detail})
		}
	})
}
