package faults

import (
	"fmt"
	"sort"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/results"
)

// Attempt is one transfer the test sent and what became of it.
type Attempt struct {
	Worker, Seq int
	From, To    int64
	Amount      int64
	// Sent and Done are from the start of the test: when the request
	// left and when its answer (or its error) came.
	Sent, Done time.Duration
	// Status is the answer's status code, 0 when none came.
	Status int
	// Refused is a connection refused: nothing reached the service.
	Refused bool
	// Answer is the start of the body of an answer that is not 2xx (what
	// the service said went wrong), at most answerExcerpt bytes.
	Answer string
}

// answerExcerpt bounds Attempt.Answer.
const answerExcerpt = 200

// Unknown reports a transfer sent whose answer never came: it may or may
// not have happened.
func (a *Attempt) Unknown() bool { return a.Status == 0 && !a.Refused }

// Phase is one fault's window of the test: from Start to the next phase's
// Start, the fault injected at At.
type Phase struct {
	Fault     Fault
	Start, At time.Duration
	End       time.Duration
	// Problems are what the fault's own checks found (a held transfer
	// not answered 200, an exit code not 0, a recovery that failed).
	Problems []string
}

// Snapshot is one reader's sum of all balances, read in one transaction.
type Snapshot struct {
	At    time.Duration
	Total int64
}

// Evidence is everything the judge looks at.
type Evidence struct {
	Stack    string
	Phases   []*Phase
	Attempts []*Attempt
	// Ledger is the bank's transfer rows at the end.
	Ledger      []db.Transfer
	Snapshots   []Snapshot
	TotalBefore int64
	TotalAfter  int64
}

// Judge decides, from the evidence alone, what each fault cost: every
// ledger row must match a transfer answered 2xx or unknown, every 2xx
// must have its row, no 4xx, 5xx or refused transfer may have one, and
// every sum of balances must equal the one before the first transfer.
func Judge(e Evidence) *results.FaultTest {
	ft := &results.FaultTest{Stack: e.Stack, Transfers: len(e.Ledger), TotalBefore: e.TotalBefore,
		TotalAfter: e.TotalAfter, Snapshots: len(e.Snapshots)}
	byAmount := make(map[int64]*Attempt, len(e.Attempts))
	for _, a := range e.Attempts {
		byAmount[a.Amount] = a
	}
	rows := map[*Attempt]int{}
	for _, t := range e.Ledger {
		a := byAmount[t.Amount]
		switch {
		case a == nil || a.From != t.From || a.To != t.To:
			ft.Extra++
		case rows[a] > 0:
			ft.Duplicates++
		default:
			rows[a]++
		}
	}
	if ft.Extra > 0 {
		ft.Problems = append(ft.Problems, fmt.Sprintf("%d ledger rows match no transfer sent", ft.Extra))
	}
	if ft.Duplicates > 0 {
		ft.Problems = append(ft.Problems, fmt.Sprintf("%d transfers are in the ledger twice", ft.Duplicates))
	}
	if e.TotalAfter != e.TotalBefore {
		ft.Problems = append(ft.Problems, fmt.Sprintf("the sum of balances changed: %d before, %d after", e.TotalBefore, e.TotalAfter))
	}

	phases := append([]*Phase(nil), e.Phases...)
	sort.Slice(phases, func(i, j int) bool { return phases[i].Start < phases[j].Start })
	of := func(at time.Duration) int {
		i := sort.Search(len(phases), func(i int) bool { return phases[i].Start > at }) - 1
		if i < 0 {
			return 0
		}
		return i
	}
	for _, p := range phases {
		ft.Rows = append(ft.Rows, &results.FaultRow{Stack: e.Stack, Fault: string(p.Fault), At: p.At, Recovery: -1,
			Problems: append([]string(nil), p.Problems...)})
	}
	if len(phases) == 0 {
		ft.Problems = append(ft.Problems, "no fault was injected")
		ft.Verdict = verdict(ft.Problems)
		return ft
	}
	for _, a := range e.Attempts {
		i := of(a.Sent)
		r, p := ft.Rows[i], phases[i]
		r.Sent++
		committed := rows[a] > 0
		switch {
		case a.Refused:
			r.Refused++
		case a.Status == 0:
			r.Unknown++
			if committed {
				r.UnknownCommitted++
			}
		case a.Status < 300:
			r.Status2++
			if a.Sent >= p.At && (r.Recovery < 0 || a.Done-p.At < r.Recovery) {
				r.Recovery = a.Done - p.At
			}
		case a.Status < 500:
			r.Status4++
		default:
			r.Status5++
			if a.Status == 500 {
				r.Status500++
			}
		}
		switch {
		case a.Status >= 200 && a.Status < 300 && !committed:
			r.Lost++
		case (a.Refused || a.Status >= 300) && committed:
			r.Phantom++
		}
	}
	for _, s := range e.Snapshots {
		if s.Total != e.TotalBefore {
			ft.Rows[of(s.At)].BadTotals++
		}
	}
	for _, r := range ft.Rows {
		if r.Lost > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%d transfers answered 2xx are not in the ledger", r.Lost))
		}
		if r.Phantom > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%d transfers answered 4xx/5xx or refused are in the ledger", r.Phantom))
		}
		if r.BadTotals > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%d snapshots saw a sum of balances other than %d", r.BadTotals, e.TotalBefore))
		}
		if r.Status500 > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%d transfers answered 500 (an unavailable database is 503 by the contract)", r.Status500))
		}
		if r.Status4 > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%d transfers answered 4xx (every transfer was valid and funded)", r.Status4))
		}
		if r.Recovery < 0 {
			r.Problems = append(r.Problems, "no transfer sent after the fault was answered 2xx")
		}
		r.Verdict = verdict(r.Problems)
		if r.Verdict != pass {
			ft.Problems = append(ft.Problems, fmt.Sprintf("%s: %d problems", r.Fault, len(r.Problems)))
		}
	}
	ft.Verdict = verdict(ft.Problems)
	return ft
}

const (
	pass = "pass"
	fail = "fail"
)

func verdict(problems []string) string {
	if len(problems) > 0 {
		return fail
	}
	return pass
}
