package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/workloads"
)

// errLines formats each problem of err as "line:col field: message (hint)".
func errLines(t *testing.T, err error) []string {
	t.Helper()
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v (%T) is not an ErrorList", err, err)
	}
	var out []string
	for _, e := range list {
		out = append(out, fmt.Sprintf("%d:%d %s: %s", e.Line, e.Col, e.Field, e.Msg))
	}
	return out
}

func TestParseErrors(t *testing.T) {
	lists := map[string][]string{"sku_ids": {"7", "8"}}
	tests := []struct {
		name string
		src  string
		opts Options
		want []string
	}{
		// Broken YAML is one error with yaml's line.
		{"syntax", "steps:\n  - url: /x\n    bad: [1,\n", Options{}, []string{
			"3:0 : invalid YAML: did not find expected node content"}},
		// An empty file says what a scenario needs.
		{"empty", "", Options{}, []string{"0:0 : the file is empty"}},
		// No steps at all.
		{"no steps", "name: x\n", Options{}, []string{"1:1 steps: a scenario needs at least one step"}},
		// The file must be a mapping.
		{"not a mapping", "- a\n- b\n", Options{}, []string{"1:1 : want a mapping (key: value lines), got a list"}},
		// steps: must be a list.
		{"steps not a list", "steps: {url: /x}\n", Options{}, []string{`1:8 steps: want a non-empty list of steps, got a mapping`}},
		// A misspelled top-level key gets a suggestion.
		{"unknown top key", "stepz: []\nsteps:\n  - url: http://h/x\n", Options{}, []string{`1:1 stepz: unknown key "stepz"`}},
		// A misspelled step key, and a key given twice.
		{"unknown and duplicate step keys", "steps:\n  - url: http://h/x\n    urll: y\n    url: http://h/z\n", Options{}, []string{
			`3:5 steps[0].urll: unknown key "urll"`,
			`4:5 steps[0].url: duplicate key "url" (first at line 2)`}},
		// A step without url.
		{"missing url", "steps:\n  - name: a\n", Options{}, []string{"2:5 steps[0].url: missing url"}},
		// A relative URL needs a base URL from the file or the options.
		{"relative without base", "steps:\n  - url: /x\n", Options{}, []string{`2:10 steps[0].url: relative URL "/x" and no base URL`}},
		// A URL that is neither a path nor absolute.
		{"bad url", "steps:\n  - url: client/1\n", Options{BaseURL: "http://h"}, []string{`2:10 steps[0].url: URL "client/1" is neither a path nor absolute`}},
		// A bad base_url in the file.
		{"bad base_url", "base_url: ftp://h\nsteps:\n  - url: http://h/x\n", Options{}, []string{`1:11 base_url: "ftp://h" is not an http(s) base URL`}},
		// A bad base URL in the options has no line.
		{"bad base option", "steps:\n  - url: /x\n", Options{BaseURL: "h:1"}, []string{
			`0:0 base URL option: "h:1" is not an http(s) base URL`,
			`2:10 steps[0].url: relative URL "/x" and no base URL`}},
		// An unknown method.
		{"method", "steps:\n  - method: FETCH\n    url: http://h/x\n", Options{}, []string{`2:13 steps[0].method: unknown method "FETCH"`}},
		// An unknown variable in a URL, with a suggestion in the hint.
		{"unknown variable", "vars:\n  sku: 1\nsteps:\n  - url: http://h/{{skuu}}\n", Options{}, []string{`4:10 steps[0].url: unknown variable "skuu"`}},
		// An unclosed template.
		{"unclosed template", "steps:\n  - url: http://h/{{user\n", Options{}, []string{`2:10 steps[0].url: unclosed '{{' in "{{user"`}},
		// randint with bad bounds, as a built-in and as a variable.
		{"randint bounds", "vars:\n  n: {randint: [5, 1]}\nsteps:\n  - url: http://h/{{randint 1}}\n", Options{}, []string{
			`2:16 vars.n.randint: low bound 5 is above high bound 1`,
			`4:10 steps[0].url: {{randint LO HI}}: want two integers, got 1 arguments`}},
		// pick needs a non-empty list; a variable needs exactly one generator.
		{"pick", "vars:\n  a: {pick: []}\n  b: {pick: [1], randint: [1, 2]}\nsteps:\n  - url: http://h/\n", Options{}, []string{
			`2:13 vars.a.pick: want a non-empty list, got an empty list`,
			`3:6 vars.b: want exactly one generator`}},
		// pick_list names a list the harness did not supply.
		{"pick_list unknown", "vars:\n  s: {pick_list: sku_id}\nsteps:\n  - url: http://h/{{s}}\n", Options{Lists: lists}, []string{
			`2:18 vars.s.pick_list: no list named "sku_id"`}},
		// A variable used before its definition, and a built-in name redefined.
		{"var order", "vars:\n  a: \"x{{b}}\"\n  b: 1\n  user: 2\nsteps:\n  - url: http://h/\n", Options{}, []string{
			`2:6 vars.a: variable "b" is used before it is defined`,
			`4:3 vars.user: "user" is a built-in name`}},
		// A capture used before the step that captures it.
		{"capture order", "steps:\n  - url: http://h/{{id}}\n  - url: http://h/\n    capture: {id: $.id}\n", Options{}, []string{
			`2:10 steps[0].url: capture "id" is set by steps[1] (""), which does not come before this step`}},
		// A capture cannot reuse a variable's name.
		{"capture shadows var", "vars:\n  id: 1\nsteps:\n  - url: http://h/\n    capture: {id: $.id}\n", Options{}, []string{
			`5:15 steps[0].capture.id: "id" is already a variable`}},
		// Bad JSON paths in assertions and captures.
		{"bad paths", "steps:\n  - url: http://h/\n    expect:\n      json:\n        $.a..b: 1\n        id: 2\n    capture:\n      x: $.a[x]\n", Options{}, []string{
			`5:9 steps[0].expect.json[$.a..b]: bad JSON path "$.a..b": empty key after '.' at offset 3`,
			`6:9 steps[0].expect.json.id: bad JSON path "id": a JSON path must start with $`,
			`8:10 steps[0].capture.x: bad JSON path "$.a[x]": array index must be a number >= 0, got [x]`}},
		// Status codes must be HTTP codes.
		{"status", "steps:\n  - url: http://h/\n    expect: {status: [200, 99, ok]}\n", Options{}, []string{
			`3:28 steps[0].expect.status: want an HTTP status code (100-599), got "99"`,
			`3:32 steps[0].expect.status: want an HTTP status code (100-599), got "ok"`}},
		// exists misspelled, and a non-boolean exists.
		{"exists", "steps:\n  - url: http://h/\n    expect:\n      json:\n        $.a: {exist: true}\n        $.b: {exists: yes please}\n", Options{}, []string{
			`5:15 steps[0].expect.json[$.a].exist: unknown key "exist"`,
			`6:23 steps[0].expect.json[$.b].exists: want true or false, got "yes please"`}},
		// An unquoted template in a JSON body is a YAML flow mapping.
		{"unquoted template", "steps:\n  - url: http://h/\n    method: POST\n    body: {amount: {{user}}}\n", Options{}, []string{
			`4:21 steps[0].body.amount: a key must be a plain value, got a mapping`}},
		// Duplicate step names would merge their results.
		{"duplicate names", "steps:\n  - {name: a, url: http://h/1}\n  - {name: a, url: http://h/2}\n", Options{}, []string{
			`3:5 steps[1].name: duplicate step name "a" (also steps[0])`}},
		// A bad pause and a bad header name.
		{"pause and header", "steps:\n  - url: http://h/\n    pause: 3 seconds\n    headers: {\"X Bad\": 1}\n", Options{}, []string{
			`3:12 steps[0].pause: bad pause "3 seconds"`,
			`4:15 steps[0].headers[X Bad]: bad header name "X Bad"`}},
		// A capture needs a JSON path or one header.
		{"capture forms", "steps:\n  - url: http://h/\n    capture:\n      a: {header: Location, json: $.id}\n      b: [1]\n", Options{}, []string{
			`4:10 steps[0].capture.a: want exactly one of json, header, regex`,
			`5:10 steps[0].capture.b: want a JSON path, {header: Name} or {regex: ...}, got a list`}},
		// A command-line variable with a bad name.
		{"bad --var", "steps:\n  - url: http://h/\n", Options{Vars: map[string]string{"a-b": "1"}}, []string{
			`0:0 --var a-b: bad variable name "a-b"`}},
		// Every problem of a file at once, in file order.
		{"all at once", "vars:\n  a: {pick: [1, 2]}\nsteps:\n  - method: FETCH\n    url: http://h/{{b}}\n  - url: http://h/{{a}}\n    expect: {status: 0}\n", Options{}, []string{
			`4:13 steps[0].method: unknown method "FETCH"`,
			`5:10 steps[0].url: unknown variable "b"`,
			`7:22 steps[1].expect.status: want an HTTP status code (100-599), got "0"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tt.src), tt.opts)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			got := errLines(t, err)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	src := "stepz: []\nsteps:\n  - url: http://h/{{skuu}}\nvars:\n  sku: 1\n"
	_, err := Parse("s.yaml", []byte(src), Options{})
	want := `s.yaml:1:1: stepz: unknown key "stepz" (hint: did you mean "steps"?)` + "\n" +
		`s.yaml:3:10: steps[0].url: unknown variable "skuu" (hint: did you mean "sku"?)`
	if err == nil || err.Error() != want {
		t.Errorf("Error() =\n%v\nwant:\n%s", err, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("does/not/exist.yaml", Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "does/not/exist.yaml: cannot read scenario") {
		t.Errorf("err = %v, want a cannot read error naming the file", err)
	}
}

func TestEmbeddedScenariosParse(t *testing.T) {
	files, err := fs.Glob(workloads.FS, "*/scenario*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("embedded scenarios = %q, want at least 5 (is */*.yaml in the go:embed line?)", files)
	}
	opts := Options{BaseURL: "http://127.0.0.1:8080", Lists: map[string][]string{"sku_ids": {"1", "2"}}}
	for _, f := range files {
		data, err := fs.ReadFile(workloads.FS, f)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Parse(f, data, opts)
		if err != nil {
			t.Errorf("%s:\n%v", f, err)
			continue
		}
		if len(sc.Steps()) == 0 {
			t.Errorf("%s: no steps", f)
		}
	}
}
