package lab

import (
	"context"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stack"
)

// TestRunInterleavedAA runs one implementation against its own second
// start in interleaved rounds over two fresh starts: every round measures
// both arms, each start's level is measured alone too, the verdict has
// the A/A pair, the audit after the rounds catches the broken ledger, and
// nothing is left running.
func TestRunInterleavedAA(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and two services")
	}
	root, cat := testRoot(t)
	p := parseTestPlan(t, cat, `name: aa
implementations: [broken-bank]
workloads: [bank]
verify: quick
aa: true
round: 500ms
settle: 200ms
measure_max: 8s
load:
  levels: [2]
  duration: 1s
  warmup: 1s
database: {max_connections: 30}
`)
	if ok, why := p.Interleaved(); !ok || p.MinStarts() != 2 {
		t.Fatalf("interleaved %v (%s), trials %d; want rounds over two starts", ok, why, p.MinStarts())
	}
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Command: "go test", NoiseSeconds: -1}
	dir, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	// Two arms alive at once, each with a pool of 20: the server was
	// sized for them, above the plan's 30.
	if want := 2*20 + stack.HarnessConnections; rec.Databases.MaxConnections != want {
		t.Errorf("max_connections %d, want %d", rec.Databases.MaxConnections, want)
	}
	if len(rec.Services) != 4 {
		t.Fatalf("%d service records, want 2 arms x 2 starts", len(rec.Services))
	}
	for _, sr := range rec.Services {
		if sr.Status != results.OK || sr.Levels[0].Status != results.OK {
			t.Errorf("%s trial %d: %s %s; level %s", sr.Implementation, sr.Trial, sr.Status, sr.Reason, sr.Levels[0].Status)
		}
	}
	if len(rec.Comparisons) != 1 {
		t.Fatalf("%d comparisons, want 1", len(rec.Comparisons))
	}
	c := rec.Comparisons[0]
	if c.Workload != "bank" || c.Level != 2 || len(c.Arms) != 2 || c.Arms[1] != "broken-bank+aa" {
		t.Errorf("comparison %s at %d, arms %v", c.Workload, c.Level, c.Arms)
	}
	starts := map[int]int{}
	for _, r := range c.Rounds {
		starts[r.Start]++
		if len(r.Arms) != 2 || r.Arms[0].Arm == r.Arms[1].Arm {
			t.Errorf("start %d round %d measured %d arms", r.Start, r.Index, len(r.Arms))
		}
		for _, a := range r.Arms {
			if a.Samples == 0 || a.Throughput <= 0 || a.Seconds < 0.4 {
				t.Errorf("start %d round %d %s: %d samples in %.2fs", r.Start, r.Index, a.Arm, a.Samples, a.Seconds)
			}
			// Its rows held against its answers, the other arm frozen: the
			// broken ledger writes every transfer, once.
			if a.Writes == nil {
				t.Errorf("start %d round %d %s: no writes counted", r.Start, r.Index, a.Arm)
			} else if tr := a.Writes.Counts["POST /transaction 200"]; tr.Answered == 0 || tr.Lost() > 0 || tr.Extra() > 0 || len(a.Writes.Violations) > 0 {
				t.Errorf("start %d round %d %s: transfers %+v, %v; want them answered and written", r.Start, r.Index, a.Arm, tr, a.Writes.Violations)
			}
		}
	}
	if starts[1] < plan.MinRounds || starts[2] < plan.MinRounds {
		t.Errorf("rounds per start %v, want at least %d in each of two", starts, plan.MinRounds)
	}
	v := c.Verdict
	if v == nil || v.AA == nil || v.AA.Starts != 2 || len(v.Ranking) != 1 {
		t.Fatalf("verdict %+v, want the A/A pair over two starts and one arm ranked", v)
	}
	if !(v.AA.Low < v.AA.Ratio && v.AA.Ratio < v.AA.High) {
		t.Errorf("A/A interval [%g, %g] around %g", v.AA.Low, v.AA.High, v.AA.Ratio)
	}
	// The broken bank's ledger is wrong: the audit after the rounds says so.
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "INVARIANT FAILED") || len(c.Violations) == 0 {
		t.Errorf("warnings %q, violations %v; want the audit's failed invariant", c.Warnings, c.Violations)
	}
	back, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Comparisons) != 1 || len(back.Comparisons[0].Rounds) != len(c.Rounds) || back.Comparisons[0].Verdict == nil {
		t.Errorf("run.json does not hold the comparison back")
	}
}

// TestRoundsReadDatabaseCPU runs a bank service, then a string service,
// each against its own second start in interleaved rounds: every arm
// round on bank reads the CPU of PostgreSQL's whole tree (its backends
// serve the pool's connections, so it is busy whenever the service is),
// and no round on string reads any, having no database.
func TestRoundsReadDatabaseCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and four services")
	}
	root, cat := testRoot(t)
	for _, w := range []struct{ workload, service string }{{"bank", "broken-bank"}, {"string", "leaky-string"}} {
		p := parseTestPlan(t, cat, `name: dbcpu
implementations: [`+w.service+`]
workloads: [`+w.workload+`]
verify: quick
aa: true
round: 500ms
settle: 200ms
measure_max: 6s
load:
  levels: [2]
  duration: 1s
  warmup: 1s
database: {max_connections: 30}
`)
		rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Command: "go test", NoiseSeconds: -1}
		_, rec, err := rn.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		noDescendants(t)
		if len(rec.Comparisons) != 1 || len(rec.Comparisons[0].Rounds) == 0 {
			t.Fatalf("%s: %d comparisons, want one with rounds", w.workload, len(rec.Comparisons))
		}
		c := rec.Comparisons[0]
		var read []float64
		for _, r := range c.Rounds {
			for _, a := range r.Arms {
				read = append(read, a.DatabaseCPU)
				switch {
				case w.workload == "bank" && a.DatabaseCPU <= 0:
					t.Errorf("bank start %d round %d %s: database CPU %g, want PostgreSQL's tree read", r.Start, r.Index, a.Arm, a.DatabaseCPU)
				case w.workload == "string" && a.DatabaseCPU != 0:
					t.Errorf("string start %d round %d %s: database CPU %g, want none", r.Start, r.Index, a.Arm, a.DatabaseCPU)
				}
			}
		}
		t.Logf("%s: database CPU per arm round, in percent of one CPU: %.1f", w.workload, read)
		if d := c.Database; (w.workload == "bank") != (d != nil) || (d != nil && (d.Engine != "PostgreSQL" || d.Count == 0 || d.CPUs != p.Placement.DatabaseCPUs)) {
			t.Errorf("%s: database %+v; want PostgreSQL on the placement's %q, on bank only", w.workload, d, p.Placement.DatabaseCPUs)
		}
	}
}
