package rounds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
)

// noisyDay is the main job's run of 2026-11-27 on a noisy AMD EPYC host
// (../shared/fixtures/noisy-day-2026-11-27): three of five pairs came
// out "no significant difference" with the pair-alone estimator.
const noisyDay = "../../../shared/fixtures/noisy-day-2026-11-27"

// TestNoisyDayVerdict re-judges the noisy day's rounds with this
// version's verdict: the three pairs whose two starts' means both
// exceed 1.3× and whose rounds agree in sign 10 of 10 are separated; the
// round the records show starved (rust-axum at 28% of its CPU) is left
// out.
func TestNoisyDayVerdict(t *testing.T) {
	if _, err := os.Stat(filepath.Join(noisyDay, "run.json")); err != nil {
		t.Skipf("the fixture is not here (%v): it lives in the shared folder beside the repository", err)
	}
	rec, err := results.ReadRun(noisyDay)
	if err != nil {
		t.Fatal(err)
	}
	c := rec.Comparisons[0]
	v := Judge(c, rec.Plan)
	for _, pr := range v.Pairs {
		t.Logf("%s / %s: %.2f× [%.2f, %.2f], df/start %.2f, %d dropped", pr.Better, pr.Worse, pr.Ratio, pr.Low, pr.High, pr.DFPerStart, pr.Dropped)
	}
	if v.Disturbed < 1 {
		t.Errorf("disturbed rounds %d, want the starved rust-axum round at least", v.Disturbed)
	}
	want := map[string]bool{"java-helidon/go-stdlib": true, "go-stdlib/java-spring": true, "node-http/python-fastapi": true}
	for _, pr := range v.Pairs {
		key := pr.Better + "/" + pr.Worse
		if want[key] && !pr.Significant {
			t.Errorf("%s: %.2f× [%.2f, %.2f] not separated", key, pr.Ratio, pr.Low, pr.High)
		}
		delete(want, key)
	}
	if len(want) > 0 {
		t.Errorf("pairs not adjacent in the ranking %v: %v", v.Ranking, want)
	}
	if got := strings.Join(v.Ranking, " > "); got != "rust-axum > java-helidon > go-stdlib > java-spring > node-http > python-fastapi" {
		t.Errorf("ranking %s", got)
	}
}
