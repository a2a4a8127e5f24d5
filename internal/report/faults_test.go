package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/results"
)

// TestHTMLFaults checks that a run's fault tests make a table in the
// report, one line per fault, with each problem said below.
func TestHTMLFaults(t *testing.T) {
	res, err := Load("testdata/run")
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if err := WriteHTML(&plain, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), `id="faults"`) {
		t.Error("a run without faults has a faults section")
	}
	res.Run.Faults = []*results.FaultTest{{Stack: "go-stdlib", Verdict: "fail", Workers: 50, Durability: "durable: test",
		Rows: []*results.FaultRow{
			{Stack: "go-stdlib", Fault: "service-kill", At: 12 * time.Second, Sent: 1234, Status2: 1200, Unknown: 34, Recovery: 150 * time.Millisecond, Verdict: "pass"},
			{Stack: "go-stdlib", Fault: "db-crash", At: 72 * time.Second, Sent: 999, Status2: 990, Status5: 9, Phantom: 2, Recovery: -1, Verdict: "fail",
				Problems: []string{"2 transfers answered 4xx/5xx or refused are in the ledger"}},
		}}}
	var h bytes.Buffer
	if err := WriteHTML(&h, res); err != nil {
		t.Fatal(err)
	}
	s := h.String()
	for _, want := range []string{
		`<a href="#faults">faults</a>`,
		"<td>service-kill</td><td>12s</td><td>1234</td><td>1200</td>",
		"<td>db-crash</td><td>1m12s</td><td>999</td>",
		"<td>none</td><td>fail</td>",
		"db-crash: 2 transfers answered 4xx/5xx or refused are in the ledger",
		"durable: test",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
