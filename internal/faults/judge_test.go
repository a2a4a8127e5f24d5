package faults

import (
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/db"
)

// evidence builds a calm run: one phase, fault at 1 s, four transfers
// answered 200 with their rows, one unknown without a row.
func evidence() Evidence {
	s := time.Second
	e := Evidence{
		Stack:  "test",
		Phases: []*Phase{{Fault: ServiceKill, Start: 0, At: s, End: 5 * s}},
		Attempts: []*Attempt{
			{Worker: 0, Seq: 0, From: 1, To: 2, Amount: 1, Sent: 0, Done: s / 2, Status: 200},
			{Worker: 1, Seq: 0, From: 2, To: 1, Amount: 2, Sent: s / 2, Done: s, Status: 200},
			{Worker: 0, Seq: 1, From: 1, To: 3, Amount: 4, Sent: s, Done: 3 * s, Status: 0},
			{Worker: 1, Seq: 1, From: 3, To: 1, Amount: 5, Sent: 2 * s, Done: 3 * s, Status: 200},
			{Worker: 0, Seq: 2, From: 2, To: 3, Amount: 7, Sent: 3 * s, Done: 4 * s, Status: 200},
		},
		Ledger: []db.Transfer{
			{ID: 10, From: 1, To: 2, Amount: 1},
			{ID: 11, From: 2, To: 1, Amount: 2},
			{ID: 12, From: 3, To: 1, Amount: 5},
			{ID: 13, From: 2, To: 3, Amount: 7},
		},
		Snapshots:   []Snapshot{{At: s, Total: 300}, {At: 2 * s, Total: 300}},
		TotalBefore: 300,
		TotalAfter:  300,
	}
	return e
}

func TestJudge(t *testing.T) {
	s := time.Second
	tests := []struct {
		name   string
		change func(e *Evidence)
		want   string // in the problems; "" means the verdict is pass
	}{
		// Everything matches: pass, and the unknown transfer may be absent.
		{"calm", func(e *Evidence) {}, ""},
		// An unknown transfer that did happen is allowed.
		{"unknown committed", func(e *Evidence) {
			e.Ledger = append(e.Ledger, db.Transfer{ID: 14, From: 1, To: 3, Amount: 4})
		}, ""},
		// A 200 whose row is missing: money the client was told moved did not.
		{"lost 200", func(e *Evidence) { e.Ledger = e.Ledger[1:] }, "1 transfers answered 2xx are not in the ledger"},
		// A row nobody sent.
		{"extra row", func(e *Evidence) {
			e.Ledger = append(e.Ledger, db.Transfer{ID: 14, From: 1, To: 2, Amount: 99})
		}, "1 ledger rows match no transfer sent"},
		// A row whose accounts differ from the request that owns the amount.
		{"wrong accounts", func(e *Evidence) { e.Ledger[0].To = 3 }, "1 ledger rows match no transfer sent"},
		// The same transfer twice.
		{"duplicate", func(e *Evidence) {
			e.Ledger = append(e.Ledger, db.Transfer{ID: 14, From: 1, To: 2, Amount: 1})
		}, "1 transfers are in the ledger twice"},
		// A 503 that happened all the same.
		{"phantom 503", func(e *Evidence) { e.Attempts[0].Status = 503 }, "answered 4xx/5xx or refused are in the ledger"},
		// A refused connection cannot have written a row.
		{"phantom refused", func(e *Evidence) { e.Attempts[0].Status, e.Attempts[0].Refused = 0, true }, "answered 4xx/5xx or refused are in the ledger"},
		// The sum changed between the start and the end.
		{"total changed", func(e *Evidence) { e.TotalAfter = 299 }, "the sum of balances changed: 300 before, 299 after"},
		// A reader saw another sum in the middle.
		{"bad snapshot", func(e *Evidence) { e.Snapshots[1].Total = 301 }, "1 snapshots saw a sum of balances other than 300"},
		// A 500 is a bug by the contract.
		{"500", func(e *Evidence) {
			e.Attempts = append(e.Attempts, &Attempt{Worker: 1, Seq: 2, From: 1, To: 2, Amount: 8, Sent: 3 * s, Done: 3 * s, Status: 500})
		}, "1 transfers answered 500"},
		// Every transfer was funded: a 409 is wrong.
		{"409", func(e *Evidence) {
			e.Attempts = append(e.Attempts, &Attempt{Worker: 1, Seq: 2, From: 1, To: 2, Amount: 8, Sent: 3 * s, Done: 3 * s, Status: 409})
		}, "1 transfers answered 4xx"},
		// No 2xx to a transfer sent after the fault: no recovery.
		{"no recovery", func(e *Evidence) {
			for _, a := range e.Attempts[2:] {
				a.Status = 503
			}
			e.Ledger = e.Ledger[:2]
		}, "no transfer sent after the fault was answered 2xx"},
		// The fault's own check failed.
		{"fault problem", func(e *Evidence) { e.Phases[0].Problems = []string{"exit code 1 after SIGTERM, want 0"} }, "exit code 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := evidence()
			tt.change(&e)
			ft := Judge(e)
			var all []string
			all = append(all, ft.Problems...)
			for _, r := range ft.Rows {
				all = append(all, r.Problems...)
			}
			got := strings.Join(all, "\n")
			switch {
			case tt.want == "" && ft.Verdict != "pass":
				t.Errorf("verdict %s, want pass; problems:\n%s", ft.Verdict, got)
			case tt.want != "" && ft.Verdict != "fail":
				t.Errorf("verdict %s, want fail (%s)", ft.Verdict, tt.want)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("problems lack %q:\n%s", tt.want, got)
			}
		})
	}
}

func TestJudgeCounts(t *testing.T) {
	s := time.Second
	e := evidence()
	// A second phase from 3 s, fault at 3.5 s: the last attempt is its.
	e.Phases = append(e.Phases, &Phase{Fault: DatabaseCrash, Start: 3 * s, At: 3*s + s/2, End: 5 * s})
	e.Attempts = append(e.Attempts,
		&Attempt{Worker: 1, Seq: 2, From: 1, To: 2, Amount: 8, Sent: 3 * s, Done: 3 * s, Status: 503},
		&Attempt{Worker: 1, Seq: 3, From: 1, To: 2, Amount: 10, Sent: 4 * s, Done: 4*s + s/4, Status: 200},
		&Attempt{Worker: 1, Seq: 4, From: 1, To: 2, Amount: 12, Sent: 4 * s, Done: 4 * s, Refused: true},
	)
	e.Ledger = append(e.Ledger, db.Transfer{ID: 20, From: 1, To: 2, Amount: 10})
	ft := Judge(e)
	if len(ft.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(ft.Rows))
	}
	r0, r1 := ft.Rows[0], ft.Rows[1]
	if r0.Sent != 4 || r0.Status2 != 3 || r0.Unknown != 1 || r0.UnknownCommitted != 0 {
		t.Errorf("first row: sent %d 2xx %d unknown %d (in ledger %d), want 4 3 1 0", r0.Sent, r0.Status2, r0.Unknown, r0.UnknownCommitted)
	}
	// The first 2xx to a transfer sent at or after the fault (1 s): sent at 2 s, answered at 3 s.
	if r0.Recovery != 2*s {
		t.Errorf("first row: recovery %v, want 2s", r0.Recovery)
	}
	if r1.Sent != 4 || r1.Status2 != 2 || r1.Status5 != 1 || r1.Refused != 1 {
		t.Errorf("second row: sent %d 2xx %d 5xx %d refused %d, want 4 2 1 1", r1.Sent, r1.Status2, r1.Status5, r1.Refused)
	}
	// The answer at 4.25 s to the transfer sent at 4 s; the one sent at 3 s is before the fault.
	if r1.Recovery != 3*s/4 {
		t.Errorf("second row: recovery %v, want 750ms", r1.Recovery)
	}
	if ft.Verdict != "pass" {
		t.Errorf("verdict %s: %v %v %v", ft.Verdict, ft.Problems, r0.Problems, r1.Problems)
	}
}

func TestPrefixKeepsTheStart(t *testing.T) {
	var b strings.Builder
	p := &prefix{&b, 5}
	for _, w := range []string{"abc", "defg", "hij"} {
		if n, err := p.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
		}
	}
	if got := b.String(); got != "abcde" {
		t.Errorf("kept %q, want %q", got, "abcde")
	}
}
