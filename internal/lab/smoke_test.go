package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
)

// TestSmokePlan runs plans/smoke.yaml end to end: every real
// implementation built, started against private databases, checked,
// warmed up, loaded, audited and stopped. It runs last in this package
// because it pins the test process to the generator's CPUs.
func TestSmokePlan(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every implementation")
	}
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.LoadPlan(filepath.Join(root, "plans", "smoke.yaml"), catalogOf(t, root), thisMachine())
	if err != nil {
		t.Fatal(err)
	}
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Progress: testWriter{t}, Command: "showdown run plans/smoke.yaml"}
	dir, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	want := len(p.Implementations) * len(p.Workloads) * p.Trials
	if len(rec.Services) != want {
		t.Errorf("%d service runs, want %d", len(rec.Services), want)
	}
	for _, sr := range rec.Services {
		if sr.Status != results.OK {
			t.Errorf("%s on %s: %s: %s\n%s", sr.Implementation, sr.Workload, sr.Status, sr.Reason, sr.LogTail)
			continue
		}
		if sr.StartupSeconds <= 0 || sr.RSSIdleBytes == 0 || sr.ArtifactBytes == 0 {
			t.Errorf("%s on %s: startup %.2fs, idle RSS %d, artifact %d; want all measured", sr.Implementation, sr.Workload, sr.StartupSeconds, sr.RSSIdleBytes, sr.ArtifactBytes)
		}
		for _, lr := range sr.Levels {
			if lr.Total.Samples == 0 || lr.Total.Errors != 0 || len(lr.Violations) != 0 {
				t.Errorf("%s on %s at %d: %d samples, %d errors %v, violations %v", sr.Implementation, sr.Workload, lr.Level, lr.Total.Samples, lr.Total.Errors, lr.Total.Reasons, lr.Violations)
			}
			if lr.Service.RSSPeakBytes == 0 || lr.Service.ThreadsMax == 0 || lr.Service.FDsMax == 0 {
				t.Errorf("%s on %s at %d: resources not sampled: %+v", sr.Implementation, sr.Workload, lr.Level, lr.Service)
			}
			for _, f := range []string{"summary.json", "timeseries.csv", "latency.hlog"} {
				if _, err := os.Stat(filepath.Join(dir, lr.Dir, f)); err != nil {
					t.Errorf("missing %s: %v", filepath.Join(lr.Dir, f), err)
				}
			}
		}
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
