package jmx

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden imports every fixture and compares the scenario, the load and
// the lists with testdata/NAME.golden.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jmx")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jmx")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Import(f, data, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := render(res, "testdata/"+name+".yaml")
			golden := "testdata/" + name + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the import (go test -update rewrites it); got:\n%s", golden, got)
			}
		})
	}
}

// render prints a result the way the golden files hold it.
func render(res *Result, path string) string {
	var b strings.Builder
	b.WriteString("=== scenario\n")
	b.Write(res.Scenario)
	b.WriteString("=== load\n")
	b.Write(res.Load.YAML(path))
	b.WriteString("=== skipped\n")
	for _, p := range res.Skipped {
		b.WriteString(p.String() + "\n")
	}
	b.WriteString("=== ignored\n")
	for _, p := range res.Ignored {
		b.WriteString(p.String() + "\n")
	}
	b.WriteString("=== notes\n")
	for _, n := range res.Notes {
		b.WriteString(n + "\n")
	}
	return b.String()
}
