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

func FuzzParse(f *testing.F) {
	// Any file, however broken, parses or gives an ErrorList, never a panic.
	for _, name := range []string{"broken.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"vars:\n  a: {pick: [1, &x 2, *x]}\n  b: \"{{a}}{{randint 1 2}}\"\nsetup:\n  - url: /s\n    capture: {s: {header: X}}\nsteps:\n  - method: POST\n    url: /x/{{a}}\n    body: {a: [\"{{b}}\", {c: \"{{s}}\"}], d: *x}\n    expect: {status: [200], json: {$.a: {exists: true}}, body_contains: x}\n    pause: 1s\n",
		"steps: *a\n", "a: &a [1]\nsteps: *a\n", "steps:\n  - !!binary aGk=\n", "steps: [{url: '{{'}]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse("f.yaml", data, Options{BaseURL: "http://h", Lists: map[string][]string{"l": {"1"}}})
		if err != nil {
			if _, ok := err.(ErrorList); !ok {
				t.Fatalf("error %v is a %T", err, err)
			}
			return
		}
		u := sc.NewUser(1)
		var req load.Request
		for i := range sc.Steps() {
			req.Reset()
			_ = u.Request(0, i, &req)
		}
	})
}
