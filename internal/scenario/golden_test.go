package scenario

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/showdownlab/showdown/load"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestErrorsGolden(t *testing.T) {
	// testdata/broken.yaml is the example of docs/scenarios.md#errors; its
	// report is testdata/broken.golden (refresh with go test -update).
	_, err := Load(filepath.Join("testdata", "broken.yaml"), Options{BaseURL: "http://h"})
	if err == nil {
		t.Fatal("no error")
	}
	got := []byte(err.Error() + "\n")
	golden := filepath.Join("testdata", "broken.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("got:\n%s\nwant (%s):\n%s", got, golden, want)
	}
}

func FuzzCheck(f *testing.F) {
	// Any response body, however broken, gives a pass or a CheckError,
	// never a panic.
	for _, s := range []string{`{"a":{"b":[1,{"c":"x"}]},"n":1}`, `{"a":`, `[`, `"`, `{"a":"\`, `{"a" 1}`, `{"a":{"b":[1,`, ``, `nul`} {
		f.Add([]byte(s))
	}
	sc, err := Parse("f.yaml", []byte("steps:\n  - url: http://h/\n    expect:\n      json:\n        $.a.b[1].c: x\n        $.n: {exists: true}\n    capture: {v: '$.a.b[0]', w: $.a}\n"), Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		u := sc.NewUser(1)
		var req load.Request
		if err := u.Request(0, 0, &req); err != nil {
			t.Fatal(err)
		}
		if err := u.Check(0, 0, &load.Response{Status: 200, Body: body}); err != nil {
			if _, ok := err.(*load.CheckError); !ok {
				t.Fatalf("error %v is a %T", err, err)
			}
		}
	})
}
