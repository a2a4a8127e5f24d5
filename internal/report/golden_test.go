package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output; if the change is intended, run go test ./internal/report -update\n%s", path, firstDiff(got, want))
	}
}

// firstDiff shows the first line where got and want differ, numbered.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) || i >= len(g) || i >= len(w) {
			col := 0
			for col < min(len(gl), len(wl)) && gl[col] == wl[col] {
				col++
			}
			return fmt.Sprintf("line %d, byte %d:\n--- got:\n%s\n--- want:\n%s", i+1, col+1, around(gl, col), around(wl, col))
		}
	}
	return ""
}

// around is the part of a line near byte col (report.html has long lines).
func around(b []byte, col int) []byte {
	lo, hi := max(0, col-80), min(len(b), col+160)
	return b[lo:hi]
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name, input string
	}{
		// a showdown run: 2 implementations x 2 workloads x 2 levels x 2 trials
		{"run", "testdata/run"},
		// a k6 JSON output (gzip), half of the requests answered 404
		{"k6", "../imported/testdata/k6.json.gz"},
		// a JMeter CSV results file with two labels and one stall
		{"jmeter", "../imported/testdata/jmeter.jtl"},
		// an attack folder: a level of the run on its own
		{"attack", "testdata/run/runs/bank/go-stdlib/trial-1/level-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Load(tc.input)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []struct{ format, ext string }{{FormatMarkdown, "md"}, {FormatJSON, "json"}, {FormatCSV, "csv"}} {
				var b bytes.Buffer
				if err := WriteFormat(&b, res, f.format); err != nil {
					t.Fatal(err)
				}
				got := bytes.ReplaceAll(b.Bytes(), []byte(tc.input), []byte("INPUT"))
				golden(t, tc.name+".golden."+f.ext, got)
			}
			var h bytes.Buffer
			if err := WriteHTML(&h, res); err != nil {
				t.Fatal(err)
			}
			// The whole page: tables, every chart's series and axes, the
			// notes; a chart that loses a line or a point changes it.
			golden(t, tc.name+".golden.html", bytes.ReplaceAll(h.Bytes(), []byte(tc.input), []byte("INPUT")))
		})
	}
}
