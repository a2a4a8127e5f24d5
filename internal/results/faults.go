package results

import (
	"fmt"
	"time"
)

// FaultRow is one line of the fault test's table (showdown verify
// --faults, a plan's faults section): what one stack did with the bank's
// transfers sent while one fault was injected and after it.
type FaultRow struct {
	Stack string `json:"stack"`
	Fault string `json:"fault"`
	// At is when the fault was injected, from the start of the test.
	At time.Duration `json:"at_ns"`
	// Sent counts the transfers sent in this fault's window; each ends in
	// exactly one of the counts below.
	Sent    int `json:"sent"`
	Status2 int `json:"2xx"`
	Status4 int `json:"4xx"`
	Status5 int `json:"5xx"`
	// Status500 counts the 5xx that were 500 (a bug by the contract: an
	// unavailable database is 503).
	Status500 int `json:"500"`
	// Refused counts the transfers whose connection was refused: nothing
	// reached the service, so none may be in the ledger.
	Refused int `json:"refused"`
	// Unknown counts the transfers sent that got no answer (timeout,
	// connection cut): each may or may not be in the ledger.
	Unknown int `json:"unknown"`
	// UnknownCommitted counts the unknown transfers the ledger holds.
	UnknownCommitted int `json:"unknown_committed"`
	// Lost counts the transfers answered 2xx with no ledger row (must be 0).
	Lost int `json:"lost"`
	// Phantom counts the transfers answered 4xx or 5xx, or refused, that
	// the ledger holds all the same (must be 0).
	Phantom int `json:"phantom"`
	// BadTotals counts the readers' snapshots in this window whose sum of
	// balances differed from the start's (must be 0).
	BadTotals int `json:"bad_totals"`
	// Recovery is from the fault to the first 2xx answer to a transfer
	// sent after it; -1 when none came.
	Recovery time.Duration `json:"recovery_ns"`
	// Verdict is "pass" or "fail".
	Verdict string `json:"verdict"`
	// Problems say why the verdict is fail.
	Problems []string `json:"problems,omitempty"`
}

// FaultTest is the record of one stack's fault test: its rows and what
// holds for the whole run.
type FaultTest struct {
	Stack string `json:"stack"`
	// Durability states the database settings the test ran with.
	Durability string        `json:"durability"`
	Workers    int           `json:"workers"`
	PerFault   time.Duration `json:"per_fault_ns"`
	Rows       []*FaultRow   `json:"rows"`
	// Transfers counts the ledger's transfer rows at the end; Extra those
	// that match no transfer sent, Duplicates those that match one already
	// matched (both must be 0).
	Transfers  int `json:"transfers"`
	Extra      int `json:"extra"`
	Duplicates int `json:"duplicates"`
	// TotalBefore and TotalAfter are the sums of all balances before the
	// first transfer and after the last answer (must be equal); Snapshots
	// counts the readers' sums taken in between.
	TotalBefore int64 `json:"total_before"`
	TotalAfter  int64 `json:"total_after"`
	Snapshots   int   `json:"snapshots"`
	// Verdict is "pass" or "fail", of the rows and the whole run.
	Verdict  string   `json:"verdict"`
	Problems []string `json:"problems,omitempty"`
}

// FaultColumns names the fault table's columns, in order, for every
// rendering (the command's text, the report).
var FaultColumns = []string{"stack", "fault", "at", "sent", "2xx", "4xx", "5xx", "of which 500", "refused", "unknown",
	"unknown in ledger", "lost", "phantom", "bad sums", "first 2xx after", "verdict"}

// Cells renders the row in FaultColumns' order.
func (r *FaultRow) Cells() []string {
	rec := "none"
	if r.Recovery >= 0 {
		rec = FormatFaultDuration(r.Recovery)
	}
	return []string{r.Stack, r.Fault, FormatFaultDuration(r.At), fmt.Sprint(r.Sent), fmt.Sprint(r.Status2), fmt.Sprint(r.Status4),
		fmt.Sprint(r.Status5), fmt.Sprint(r.Status500), fmt.Sprint(r.Refused), fmt.Sprint(r.Unknown), fmt.Sprint(r.UnknownCommitted),
		fmt.Sprint(r.Lost), fmt.Sprint(r.Phantom), fmt.Sprint(r.BadTotals), rec, r.Verdict}
}

// FormatFaultDuration prints a duration to the millisecond below 10 s,
// to the tenth of a second above.
func FormatFaultDuration(d time.Duration) string {
	if d >= 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}
