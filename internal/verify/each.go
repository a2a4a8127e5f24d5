package verify

import "context"

// RunEach runs the suite's non-destructive checks of workload w
// (Target.NonDestructive) on the service at baseURL once and tells report
// each check's name, whether it passed or was skipped, and its detail: the
// contract check the lab makes before measuring. known are the sku
// workload's known ids; openTransactions reads the service's open
// transactions from its database (nil: the checks that need it skip).
func RunEach(ctx context.Context, baseURL, w string, known []int64, openTransactions func(ctx context.Context, workload string) (int, error), report func(check string, passed, skipped bool, detail string)) {
	t := Target{BaseURL: baseURL, Workloads: []string{w}, KnownSKUs: known, NonDestructive: true, OpenTransactions: openTransactions}
	Run(ctx, t, func(r Result) {
		report(r.Check, r.Status == Pass, r.Status == Skip, r.Detail)
	})
}
