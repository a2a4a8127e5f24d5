package lab

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
)

// TestRunDatabaseDimensionAndVariantWarmup runs go-stdlib on the sku
// workload against real MariaDB at both values of the sku_index dimension,
// with a variant that warms up not at all: every start measures both
// settings (warmed once), the database switches once per start and the
// next start goes on from where it is, and only the plain service warms.
func TestRunDatabaseDimensionAndVariantWarmup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds go-stdlib, starts MariaDB")
	}
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	p := parseTestPlan(t, catalogOf(t, root), `name: dimension
implementations:
  - go-stdlib
  - service: go-stdlib
    variant: cold
    warmup: none
workloads: [sku]
load:
  levels: [2]
  duration: 2s
  warmup: 2s
trials: 2
database:
  sku_rows: 2000
  sku_index: [false, true]
  restart: never
placement: {}
`)
	rn := &Runner{Steps: testSteps, Root: root, ResultsDir: resultsDir(t), Progress: testWriter{t}, Command: "go test", NoiseSeconds: -1}
	dir, rec, err := rn.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noDescendants(t)
	// Starts in order: trial 1 go-stdlib, cold; trial 2 cold, go-stdlib
	// (rotated). The database starts without the index (the first value)
	// and each start begins with the setting the last one left.
	want := []struct {
		impl, database string
		start          int
		warm           bool
	}{
		{"go-stdlib", "sku_index=false", 1, true},
		{"go-stdlib", "sku_index=true", 1, true},
		{"go-stdlib+cold", "sku_index=true", 2, false},
		{"go-stdlib+cold", "sku_index=false", 2, false},
		{"go-stdlib+cold", "sku_index=false", 3, false},
		{"go-stdlib+cold", "sku_index=true", 3, false},
		{"go-stdlib", "sku_index=true", 4, true},
		{"go-stdlib", "sku_index=false", 4, true},
	}
	if len(rec.Services) != len(want) {
		t.Fatalf("%d service runs, want %d", len(rec.Services), len(want))
	}
	dirs := map[string]bool{}
	for i, w := range want {
		sr := rec.Services[i]
		if sr.Implementation != w.impl || sr.Database != w.database || sr.Start != w.start {
			t.Errorf("record %d: %s at %s, start %d; want %s at %s, start %d", i, sr.Implementation, sr.Database, sr.Start, w.impl, w.database, w.start)
		}
		if sr.Status != results.OK || sr.Levels[0].Total.Samples == 0 || sr.Levels[0].Total.Errors != 0 {
			t.Errorf("record %d: %s %s, %d samples, %d errors", i, sr.Status, sr.Reason, sr.Levels[0].Total.Samples, sr.Levels[0].Total.Errors)
		}
		if (sr.Warmup != nil) != w.warm {
			t.Errorf("record %d (%s): warm-up %+v, want warmed %v", i, sr.Implementation, sr.Warmup, w.warm)
		}
		if dirs[sr.Levels[0].Dir] {
			t.Errorf("record %d: folder %s used twice", i, sr.Levels[0].Dir)
		}
		dirs[sr.Levels[0].Dir] = true
		if _, err := os.Stat(filepath.Join(dir, sr.Levels[0].Dir, "summary.json")); err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	// Every implementation x setting is a cell with both trials.
	cells := results.Cells(rec)
	if len(cells) != 4 {
		t.Fatalf("%d cells, want 4", len(cells))
	}
	for _, c := range cells {
		if len(c.Levels) != 2 || c.Database == "" {
			t.Errorf("cell %s: %d trials, want 2", c.Name(), len(c.Levels))
		}
	}
}
