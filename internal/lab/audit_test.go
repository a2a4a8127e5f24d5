package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/load"
)

func TestPathMatches(t *testing.T) {
	tests := []struct {
		pattern, url string
		want         bool
	}{
		{"/transaction", "/transaction", true},                            // the same path
		{"/transaction", "http://127.0.0.1:8080/transaction", true},       // absolute URL
		{"/transaction", "/transaction?x=1", true},                        // query ignored
		{"/client/new/{balance}", "/client/new/400", true},                // {x} is any segment
		{"/client/new/{balance}", "/client/new/{{amount}}", true},         // a template fills a {x}
		{"/client/new/{balance}", "/client/new", false},                   // fewer segments
		{"/client/new/{balance}", "/client/new/", false},                  // an empty segment is none
		{"/client/new/{balance}", "/client/7/balance", false},             // another route
		{"/user", "/{{path}}", false},                                     // a template never stands for a literal
		{"/user", "/users", false},                                        // literal segments compare whole
		{"/client/new/{balance}", "{{base}}/client/new/400", false},       // a templated host is no path
		{"/transaction", "http://127.0.0.1:8080", false},                  // no path at all
		{"/client/{id}/balance", "/client/{{client_1_id}}/balance", true}, // a template in the middle
	}
	for _, tt := range tests {
		if got := pathMatches(tt.pattern, tt.url); got != tt.want {
			t.Errorf("pathMatches(%q, %q) = %v, want %v", tt.pattern, tt.url, got, tt.want)
		}
	}
}

func TestCompareWritten(t *testing.T) {
	reqs := []scenario.StepRequest{{Method: "POST", URL: "/client/new/100"}, {Method: "POST", URL: "/transaction"}, {Method: "GET", URL: "/client/1/balance"}}
	row := func(ok, refused, none int64) load.LabelStats {
		return load.LabelStats{Samples: ok + refused + none, Statuses: map[int]int64{200: ok, 409: refused}}
	}
	const tr, cl = "POST /transaction 200", "POST /client/new/{balance} 200"
	tests := []struct {
		name          string
		before, after map[string]int64
		rows          []load.LabelStats
		want          []string // checks that fail
	}{
		// Every 200 wrote its row, no more.
		{"exact", map[string]int64{tr: 5, cl: 2}, map[string]int64{tr: 105, cl: 52},
			[]load.LabelStats{row(50, 0, 0), row(100, 7, 0), row(50, 0, 0)}, nil},
		// Rows the answerless requests may or may not have written.
		{"unanswered may write", map[string]int64{tr: 0, cl: 0}, map[string]int64{tr: 103, cl: 50},
			[]load.LabelStats{row(50, 0, 0), row(100, 0, 3), row(50, 0, 0)}, nil},
		// 100 transfers answered 200, 90 written: answers without a commit.
		{"answered, not committed", map[string]int64{tr: 0, cl: 0}, map[string]int64{tr: 90, cl: 50},
			[]load.LabelStats{row(50, 0, 0), row(100, 0, 0), row(50, 0, 0)}, []string{"written: POST /transaction"}},
		// The 409s wrote rows too: more than the slack of 2x2 in flight.
		{"refused but written", map[string]int64{tr: 0, cl: 0}, map[string]int64{tr: 120, cl: 50},
			[]load.LabelStats{row(50, 0, 0), row(100, 20, 0), row(50, 0, 0)}, []string{"written: POST /transaction"}},
		// Within the slack of the requests in flight at either end.
		{"in flight", map[string]int64{tr: 0, cl: 0}, map[string]int64{tr: 104, cl: 54},
			[]load.LabelStats{row(50, 0, 0), row(100, 0, 0), row(50, 0, 0)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			_, vs := compareWritten(tt.before, tt.after, reqs, tt.rows, 2)
			for _, v := range vs {
				got = append(got, v.Check)
				if v.Detail == "" {
					t.Errorf("%s: no detail", v.Check)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("violations %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRunAuditComparesAnswers runs a bank that answers 200 to every other
// transfer without writing it, under the 2018 scenario (whose assertions
// never look at a balance) and every reset mode: the ledger's invariants
// hold, and only counting rows against answers catches it. The same
// service writing every transfer passes.
func TestRunAuditComparesAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and a service")
	}
	root, cat := testRoot(t)
	const uncommitted = `
  - service: broken-bank
    variant: uncommitted
    env: {BROKEN_BANK: uncommitted}`
	const correct = `
  - service: broken-bank
    variant: correct
    env: {BROKEN_BANK: none}`
	for _, tt := range []struct{ reset, implementations string }{
		{"level", uncommitted + correct},
		{"trial", uncommitted + correct},
		// Without a reset the 2018 scenario's setup (clients 1 and 2)
		// holds for the first start only: one implementation a run.
		{"never", uncommitted},
		{"never", correct},
	} {
		reset := tt.reset
		t.Run(reset, func(t *testing.T) {
			p := parseTestPlan(t, cat, `name: answers
implementations:`+tt.implementations+`
workloads:
  - name: bank
    scenario: workloads/bank/scenario-2018.yaml
verify: quick
load:
  levels: [2, 3]
  duration: 2s
  warmup: 0s
database:
  reset: `+reset+`
  restart: never
placement: {}
`)
			rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Command: "go test", NoiseSeconds: -1}
			_, rec, err := rn.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			noDescendants(t)
			if want := strings.Count(tt.implementations, "service:"); len(rec.Services) != want {
				t.Fatalf("%d service runs, want %d", len(rec.Services), want)
			}
			for _, sr := range rec.Services {
				if sr.Status != results.OK {
					t.Fatalf("%s: %s: %s\n%s", sr.Implementation, sr.Status, sr.Reason, sr.LogTail)
				}
				for _, lr := range sr.Levels {
					var checks []string
					for _, v := range lr.Violations {
						checks = append(checks, v.Check+": "+v.Detail)
					}
					got := strings.Join(checks, "\n")
					switch sr.Variant {
					case "uncommitted":
						if len(lr.Violations) != 1 || lr.Violations[0].Check != "written: POST /transaction" || !strings.Contains(got, "not committed") {
							t.Errorf("%s at %d: violations\n%s\nwant only the transfers answered without a commit", sr.Implementation, lr.Level, got)
						}
					default:
						if len(lr.Violations) != 0 {
							t.Errorf("%s at %d: violations on a correct bank:\n%s", sr.Implementation, lr.Level, got)
						}
					}
					if lr.Total.Samples == 0 || lr.Total.Errors != 0 {
						t.Errorf("%s at %d: %d samples, %d errors; want answers and no error", sr.Implementation, lr.Level, lr.Total.Samples, lr.Total.Errors)
					}
				}
			}
		})
	}
}

// TestRunRacyBankCaught runs, over two starts, a bank that moves money
// by reading both balances and writing them back without a transaction,
// beside a correct one, under the 2018 scenario (every transfer on the
// same two rows, 8 users at once; its setup expects clients 1 and 2, so
// the arms take turns, each on a reset database): the audit after the
// racy bank's level finds the money or the ledger broken in every start,
// the correct bank's never. bench/doubles.sh runs it ten times.
func TestRunRacyBankCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and two services")
	}
	root, cat := testRoot(t)
	p := parseTestPlan(t, cat, `name: racy
implementations:
  - service: broken-bank
    variant: racy
    env: {BROKEN_BANK: racy}
  - service: broken-bank
    variant: correct
    env: {BROKEN_BANK: none}
workloads:
  - name: bank
    scenario: workloads/bank/scenario-2018.yaml
verify: quick
interleave: false
trials: 2
load:
  levels: [8]
  duration: 1s
  warmup: 0s
`)
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Command: "go test", NoiseSeconds: -1}
	_, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	caught := map[int]bool{}
	for _, sr := range rec.Services {
		if sr.Status != results.OK {
			t.Fatalf("%s trial %d: %s: %s\n%s", sr.Implementation, sr.Trial, sr.Status, sr.Reason, sr.LogTail)
		}
		for _, lr := range sr.Levels {
			var checks []string
			for _, v := range lr.Violations {
				checks = append(checks, v.Check)
			}
			switch sr.Variant {
			case "racy":
				if slices.Contains(checks, "money") || slices.Contains(checks, "ledger") {
					caught[sr.Trial] = true
				}
			default:
				if len(checks) > 0 {
					t.Errorf("the correct bank, start %d: violations %v", sr.Trial, checks)
				}
			}
			if lr.Writes["POST /transaction 200"].Answered == 0 {
				t.Errorf("%s start %d: writes %+v, want its transfers counted", sr.Implementation, sr.Trial, lr.Writes)
			}
		}
	}
	if !caught[1] || !caught[2] {
		t.Errorf("the racy bank's own level broke money or the ledger in starts %v, want both", caught)
	}
}
