package lab

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/proctree"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/load"
)

// testRoot holds the lab's own test services (testdata/services/*).
func testRoot(t *testing.T) (string, plan.Catalog) {
	t.Helper()
	root, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return root, catalogOf(t, root)
}

// catalogOf lists the services under root/services and their workloads.
func catalogOf(t *testing.T, root string) plan.Catalog {
	t.Helper()
	ms, err := service.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	cat := plan.Catalog{}
	for _, m := range ms {
		cat[m.Name] = m.Workloads
	}
	return cat
}

func parseTestPlan(t *testing.T, cat plan.Catalog, text string) *plan.Plan {
	t.Helper()
	p, err := plan.ParsePlan("test.yaml", []byte(text), cat, thisMachine())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// noDescendants fails the test if this process still has children a few
// seconds after a run: every service and database must be gone.
func noDescendants(t *testing.T) {
	t.Helper()
	var left []int32
	for i := 0; i < 50; i++ {
		left = proctree.Descendants(int32(os.Getpid()))
		if len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	var names []string
	for _, pid := range left {
		b, _ := os.ReadFile(filepath.Join("/proc", itoa(pid), "cmdline"))
		names = append(names, itoa(pid)+" "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	t.Errorf("processes left behind:\n%s", strings.Join(names, "\n"))
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }

func TestRunCatchesBrokenBank(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and a service")
	}
	root, cat := testRoot(t)
	p := parseTestPlan(t, cat, `name: broken
implementations: [broken-bank]
workloads: [bank]
verify: quick
load:
  levels: [2]
  duration: 2s
  warmup: 0s
placement: {}
`)
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Command: "go test", NoiseSeconds: -1}
	dir, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	if len(rec.Services) != 1 {
		t.Fatalf("%d service runs, want 1", len(rec.Services))
	}
	sr := rec.Services[0]
	if sr.Status != results.OK {
		t.Fatalf("service run %s: %s\n%s", sr.Status, sr.Reason, sr.LogTail)
	}
	lr := sr.Levels[0]
	// The broken bank answers every request as the contract says...
	if lr.Total.Samples == 0 || lr.Total.Errors != 0 {
		t.Errorf("load: %d samples, %d errors; want samples and no errors", lr.Total.Samples, lr.Total.Errors)
	}
	// ...and only the audit of the database finds the wrong ledger.
	var checks []string
	for _, v := range lr.Violations {
		checks = append(checks, v.Check)
	}
	if !strings.Contains(strings.Join(checks, ","), "ledger") {
		t.Errorf("violations %v, want the ledger check to fail", lr.Violations)
	}
	back, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Services) != 1 || len(back.Services[0].Levels[0].Violations) == 0 {
		t.Errorf("run.json lost the violations")
	}
}

func TestRunInterruptStopsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and a service")
	}
	root, cat := testRoot(t)
	p := parseTestPlan(t, cat, `name: interrupted
implementations: [broken-bank]
workloads: [bank]
verify: quick
load:
  levels: [2, 4]
  duration: 60s
  warmup: 0s
placement: {}
`)
	parent := resultsDir(t)
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: parent, Command: "go test", NoiseSeconds: -1}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		dir string
		rec *results.Run
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		dir, rec, err := rn.Run(ctx, p)
		done <- outcome{dir, rec, err}
	}()
	// Interrupt once the first level is under way.
	deadline := time.Now().Add(90 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(parent, "*", "runs", "bank", "broken-bank", "trial-1", "level-2"))
		if len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first level never started")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	cancel()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(45 * time.Second):
		t.Fatal("Run did not return after the interrupt")
	}
	if o.err == nil {
		t.Error("Run returned no error after an interrupt")
	}
	noDescendants(t)
	back, err := results.ReadRun(o.dir)
	if err != nil {
		t.Fatalf("run.json after an interrupt: %v", err)
	}
	if !back.Interrupted {
		t.Error("run.json does not say the run was interrupted")
	}
	if len(back.Services) != 1 || back.Services[0].Levels[0].Total.Samples == 0 {
		t.Fatalf("what was measured before the interrupt was not kept: %+v", back.Services)
	}
	// The level cut short is marked so, not ok, and left out of the
	// cells; the next one was never started; the audit ran on its own
	// deadline, so the cancelled context is no violation (the broken
	// bank's wrong ledger is).
	sr := back.Services[0]
	if sr.Status != results.Interrupted {
		t.Errorf("service run %s (%s), want interrupted", sr.Status, sr.Reason)
	}
	l1, l2 := sr.Levels[0], sr.Levels[1]
	if l1.Status != results.Interrupted || !strings.Contains(l1.Reason, "interrupted after") {
		t.Errorf("first level %s (%s), want interrupted", l1.Status, l1.Reason)
	}
	if l2.Status != results.Skipped {
		t.Errorf("second level %s, want skipped", l2.Status)
	}
	for _, v := range l1.Violations {
		if v.Check != "ledger" {
			t.Errorf("violation %s: %s; only the broken ledger may be one", v.Check, v.Detail)
		}
	}
	for _, c := range results.Cells(back) {
		if len(c.Levels) > 0 {
			t.Errorf("cell %s %d holds an interrupted level", c.Implementation, c.Level)
		}
	}
	for _, f := range []string{"summary.json", "timeseries.csv", "latency.hlog"} {
		if _, err := os.Stat(filepath.Join(o.dir, l1.Dir, f)); err != nil {
			t.Errorf("the interrupted level's %s: %v", f, err)
		}
	}
}

// TestRunContractFailure runs the contract suite (verify: full, the
// default) before load: the broken bank fails it, is recorded as failed
// with its failed checks and no level measured, and the plan goes on to
// the next implementation.
func TestRunContractFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and a service")
	}
	root, cat := testRoot(t)
	p := parseTestPlan(t, cat, `name: contract
implementations:
  - broken-bank
  - service: broken-bank
    variant: again
workloads: [bank]
load:
  levels: [2]
  duration: 2s
  warmup: 0s
placement: {}
`)
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Command: "go test", NoiseSeconds: -1}
	dir, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	if len(rec.Services) != 2 {
		t.Fatalf("%d service runs, want both implementations tried", len(rec.Services))
	}
	back, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, sr := range back.Services {
		c := sr.Contract
		if sr.Status != results.Failed || !strings.HasPrefix(sr.Reason, "contract: ") {
			t.Errorf("%s: %s (%s), want failed by the contract", sr.Implementation, sr.Status, sr.Reason)
		}
		if c == nil || c.Mode != "full" || c.Failed == 0 || len(c.Failures) != c.Failed || c.Passed == 0 {
			t.Fatalf("%s: contract record %+v, want the full suite with failures", sr.Implementation, c)
		}
		// The fixture has no /metrics: the suite must say so.
		found := false
		for _, f := range c.Failures {
			found = found || strings.Contains(f.Check, "metrics")
		}
		if !found {
			t.Errorf("%s: failures %+v name no metrics check", sr.Implementation, c.Failures)
		}
		if sr.Levels[0].Status != results.Skipped {
			t.Errorf("%s: level %s, want skipped after a failed contract", sr.Implementation, sr.Levels[0].Status)
		}
	}
}

// TestRunAutoWarmupAndTrials runs two fresh starts with an automatic
// warm-up: each start is its own trial, its warm-up is recorded with its
// curve (steady, or stopped at the cap), and every level carries the
// machine's disturbance columns and summary.
func TestRunAutoWarmupAndTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and a service")
	}
	root, cat := testRoot(t)
	p := parseTestPlan(t, cat, `name: warm
implementations: [broken-bank]
workloads: [bank]
verify: quick
load:
  levels: [2]
  duration: 2s
  warmup: auto
  warmup_max: 12s
trials: 2
`)
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Command: "go test", NoiseSeconds: 3}
	dir, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	if len(rec.Services) != 2 {
		t.Fatalf("%d service runs, want 2", len(rec.Services))
	}
	// The machine's noise was measured before the first start, on every
	// CPU (the plan has no placement), and each warm-up records it.
	f := rec.Machine.Noise
	if f == nil || len(f.CPUs) != runtime.NumCPU() || len(f.Rates[0]) != 3 {
		t.Fatalf("machine noise %+v, want 3 s on each of %d CPUs", f, runtime.NumCPU())
	}
	for _, sr := range rec.Services {
		if wu := sr.Warmup; wu != nil && wu.Auto && wu.Noise != f.Max {
			t.Errorf("warm-up machine noise %v, want the machine's %v", wu.Noise, f.Max)
		}
	}
	for i, sr := range rec.Services {
		if sr.Start != i+1 || sr.Trial != i+1 {
			t.Errorf("record %d: start %d, trial %d; want a fresh start per trial", i, sr.Start, sr.Trial)
		}
		wu := sr.Warmup
		if wu == nil || !wu.Auto || wu.Requests == 0 {
			t.Fatalf("record %d (%s: %s): warm-up %+v, want an automatic warm-up that served requests", i, sr.Status, sr.Reason, wu)
		}
		if wu.Seconds > 13 {
			t.Errorf("record %d: warm-up of %.1fs went past the 12 s cap", i, wu.Seconds)
		}
		if wu.Steady && len(wu.Throughput) < 10 {
			t.Errorf("record %d: steady after %d seconds, before the rule's 10 s window was full", i, len(wu.Throughput))
		}
		lr := sr.Levels[0]
		if lr.Disturbance == nil || lr.Disturbance.Seconds == 0 {
			t.Errorf("record %d: no disturbance summary", i)
		}
		s, err := load.ReadSeries(filepath.Join(dir, lr.Dir))
		if err != nil {
			t.Fatal(err)
		}
		if s.Col("other_cpu_service_cpus") == nil || s.Col("steal_percent") == nil {
			t.Errorf("record %d: timeseries.csv columns %v lack the disturbance columns", i, s.Columns)
		}
	}
}
