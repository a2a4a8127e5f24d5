package lab

import (
	"context"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
)

// TestRunFaultsCatchesBrokenBank runs a plan's faults section against the
// broken bank, whose ledger rows say amount+1: every transfer it answers
// 200 has no row of its own, which the judge must call lost, in run.json.
func TestRunFaultsCatchesBrokenBank(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL twice and a service")
	}
	root, cat := testRoot(t)
	p := parseTestPlan(t, cat, `name: broken-faults
implementations: [broken-bank]
workloads: [bank]
load:
  levels: [1]
  duration: 1s
  warmup: 0s
placement: {}
faults:
  inject: [service-kill]
  per_fault: 1s
  workers: 4
`)
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Command: "go test", NoiseSeconds: -1}
	dir, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	if len(rec.Faults) != 1 {
		t.Fatalf("%d fault tests, want 1 (warnings %v)", len(rec.Faults), rec.Warnings)
	}
	ft := rec.Faults[0]
	if ft.Stack != "broken-bank" || len(ft.Rows) != 1 || ft.Rows[0].Fault != "service-kill" {
		t.Fatalf("fault test %+v, want one service-kill row of broken-bank", ft)
	}
	if r := ft.Rows[0]; ft.Verdict != "fail" || r.Lost == 0 || r.Status2 == 0 {
		t.Errorf("verdict %s, %d answered 2xx, %d lost; want fail with lost transfers (problems %v %v)", ft.Verdict, r.Status2, r.Lost, ft.Problems, r.Problems)
	}
	back, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Faults) != 1 || back.Faults[0].Rows[0].Lost != ft.Rows[0].Lost {
		t.Errorf("run.json lost the fault test: %+v", back.Faults)
	}
}
