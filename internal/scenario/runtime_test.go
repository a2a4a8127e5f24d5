package scenario

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/load"
)

func mustParse(t testing.TB, src string, opts Options) *Scenario {
	t.Helper()
	if opts.BaseURL == "" {
		opts.BaseURL = "http://h"
	}
	sc, err := Parse("t.yaml", []byte(src), opts)
	if err != nil {
		t.Fatalf("parse:\n%v", err)
	}
	return sc
}

// fmtRequest prints a request as "METHOD URL [headers] body".
func fmtRequest(r *load.Request) string {
	s := r.Method + " " + r.URL
	for _, h := range r.Header {
		s += " [" + h.Name + ": " + h.Value + "]"
	}
	if len(r.Body) > 0 {
		s += " " + string(r.Body)
	}
	return s
}

func TestTemplates(t *testing.T) {
	tests := []struct {
		name string
		src  string // vars and one step
		opts Options
		user int
		iter int
		want string
	}{
		// An empty body sends none.
		{"empty body", "steps:\n  - method: POST\n    url: /x\n    body:\n", Options{}, 1, 0, "POST http://h/x"},
		// Built-ins in a URL.
		{"user and iter", "steps:\n  - url: /u/{{user}}/i/{{ iter }}\n", Options{}, 7, 3, "GET http://h/u/7/i/3"},
		// A constant URL and an absolute URL ignore the base.
		{"absolute", "steps:\n  - url: http://other:9/x\n", Options{}, 1, 0, "GET http://other:9/x"},
		// The base URL option overrides the file's base_url; a trailing slash is dropped.
		{"base override", "base_url: http://file\nsteps:\n  - url: /x\n", Options{BaseURL: "http://opt:1/api/"}, 1, 0, "GET http://opt:1/api/x"},
		// A mapping body is JSON: numbers stay numbers, "{{x}}" alone takes
		// the value's JSON form, mixed text is a JSON string; Content-Type is added.
		{"json body", "vars:\n  n: 5\n  s: a\"b\nsteps:\n  - method: post\n    url: /x\n    body: {n: \"{{n}}\", s: \"{{s}}\", both: \"{{s}}-{{n}}\", lit: 10, f: 1.5, ok: true, no: null, list: [1, \"{{user}}\"], q: \"10\"}\n",
			Options{}, 2, 0, `POST http://h/x [Content-Type: application/json] {"n":5,"s":"a\"b","both":"a\"b-5","lit":10,"f":1.5,"ok":true,"no":null,"list":[1,2],"q":"10"}`},
		// A string body may hold JSON braces: only "{{" starts a template.
		{"json string body", "steps:\n  - method: POST\n    url: /x\n    body: '{\"a\":{\"b\":{{user}}}}'\n", Options{}, 5, 0, `POST http://h/x {"a":{"b":5}}`},
		// A string body is a text template; headers are templates too, and
		// an explicit Content-Type is kept.
		{"string body and headers", "steps:\n  - method: PUT\n    url: /x\n    headers: {Content-Type: text/plain, X-User: \"u{{user}}\"}\n    body: \"hello {{user}}\"\n",
			Options{}, 4, 0, "PUT http://h/x [Content-Type: text/plain] [X-User: u4] hello 4"},
		// Command-line variables override the file and define new ones; numbers stay numbers.
		{"--var", "vars:\n  amount: 10\nsteps:\n  - method: POST\n    url: /{{who}}\n    body: {amount: \"{{amount}}\", who: \"{{who}}\"}\n",
			Options{Vars: map[string]string{"amount": "25", "who": "bob"}}, 1, 0, `POST http://h/bob [Content-Type: application/json] {"amount":25,"who":"bob"}`},
		// A variable template can use earlier variables and built-ins; its
		// type is the referenced value's when it is a single reference.
		{"var template", "vars:\n  a: 3\n  b: \"{{a}}\"\n  c: \"{{b}}-{{user}}\"\nsteps:\n  - method: POST\n    url: /{{c}}\n    body: {b: \"{{b}}\", c: \"{{c}}\"}\n",
			Options{}, 9, 0, `POST http://h/3-9 [Content-Type: application/json] {"b":3,"c":"3-9"}`},
		// Harness lists are typed like --var: numbers are numbers.
		{"pick_list", "vars:\n  sku: {pick_list: ids}\nsteps:\n  - method: POST\n    url: /sku/{{sku}}\n    body: [\"{{sku}}\"]\n",
			Options{Lists: map[string][]string{"ids": {"42"}}}, 1, 0, `POST http://h/sku/42 [Content-Type: application/json] [42]`},
		// YAML anchors and aliases work in bodies.
		{"alias", "vars:\n  a: 1\nsteps:\n  - method: POST\n    url: /x\n    body: {p: &p {x: 1}, q: *p}\n",
			Options{}, 1, 0, `POST http://h/x [Content-Type: application/json] {"p":{"x":1},"q":{"x":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := mustParse(t, tt.src, tt.opts)
			var req load.Request
			if err := sc.NewUser(tt.user).Request(tt.iter, 0, &req); err != nil {
				t.Fatal(err)
			}
			if got := fmtRequest(&req); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// draw renders the random parts of one request per iteration for a user.
func draw(t *testing.T, sc *Scenario, user, iters int) []string {
	t.Helper()
	u := sc.NewUser(user)
	var out []string
	for i := 0; i < iters; i++ {
		var req load.Request
		if err := u.Request(i, 0, &req); err != nil {
			t.Fatal(err)
		}
		var req2 load.Request
		if err := u.Request(i, 1, &req2); err != nil {
			t.Fatal(err)
		}
		out = append(out, req.URL+" "+req2.URL)
	}
	return out
}

func TestRandomDeterminism(t *testing.T) {
	src := "vars:\n  p: {pick: [a, b, c, d]}\n  r: {randint: [10, 20]}\nsteps:\n  - url: /{{p}}/{{r}}/{{randint 1 1000000}}/{{uuid}}\n  - url: /{{p}}/{{r}}\n"
	a := draw(t, mustParse(t, src, Options{Seed: 1}), 1, 20)
	b := draw(t, mustParse(t, src, Options{Seed: 1}), 1, 20)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("same seed and user gave different values:\n%v\n%v", a, b)
	}
	if c := draw(t, mustParse(t, src, Options{Seed: 1}), 2, 20); strings.Join(a, ",") == strings.Join(c, ",") {
		t.Errorf("users 1 and 2 drew the same values: %v", a)
	}
	if c := draw(t, mustParse(t, src, Options{Seed: 2}), 1, 20); strings.Join(a, ",") == strings.Join(c, ",") {
		t.Errorf("seeds 1 and 2 drew the same values: %v", a)
	}
	// Per-iteration variables hold one value for the whole iteration, and
	// stay within their definition.
	re := regexp.MustCompile(`^http://h/([a-d])/(1[0-9]|20)/([0-9]+)/([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}) http://h/([a-d])/(1[0-9]|20)$`)
	seen := map[string]bool{}
	for _, s := range a {
		m := re.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("%q does not match %v", s, re)
		}
		if m[1] != m[5] || m[2] != m[6] {
			t.Errorf("%q: a variable changed within an iteration", s)
		}
		seen[m[1]] = true
	}
	if len(seen) < 2 {
		t.Errorf("pick chose only %v in 20 iterations", seen)
	}
}

func TestCaptures(t *testing.T) {
	src := `steps:
  - url: /a
    capture:
      num: $.id
      str: $.name
      nested: $.items[1].v
      obj: $.obj
      loc: {header: location}
      via_json: {json: '$["odd key"]'}
  - method: POST
    url: /b/{{num}}/{{str}}?loc={{loc}}
    body: {num: "{{num}}", str: "{{str}}", nested: "{{nested}}", obj: "{{obj}}", odd: "{{via_json}}", text: "n={{num}} s={{str}}"}
`
	sc := mustParse(t, src, Options{})
	u := sc.NewUser(1)
	var req load.Request
	if err := u.Request(0, 0, &req); err != nil {
		t.Fatal(err)
	}
	resp := &load.Response{
		Status:    200,
		RawHeader: []byte("Content-Type: application/json\r\nLocation: /user/12\r\n"),
		Body:      []byte(`{"id": 12.0, "name": "a \"q\"", "items": [{"v": 1}, {"v": "two"}], "obj": {"k": [1, 2]}, "odd key": false}`),
	}
	if err := u.Check(0, 0, resp); err != nil {
		t.Fatal(err)
	}
	req.Reset()
	if err := u.Request(0, 1, &req); err != nil {
		t.Fatal(err)
	}
	want := `POST http://h/b/12.0/a "q"?loc=/user/12 [Content-Type: application/json] {"num":12.0,"str":"a \"q\"","nested":"two","obj":{"k": [1, 2]},"odd":false,"text":"n=12.0 s=a \"q\""}`
	if got := fmtRequest(&req); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A capture whose field is missing fails the step that captures.
	err := u.Check(1, 0, &load.Response{Status: 200, Body: []byte(`{"name": "x"}`)})
	if got, want := fmt.Sprint(err), "capture num: $.id missing"; got != want {
		t.Errorf("missing capture: got %q, want %q", got, want)
	}
	err = u.Check(1, 0, &load.Response{Status: 200, Body: resp.Body})
	if got, want := fmt.Sprint(err), "capture loc: no location header"; got != want {
		t.Errorf("missing header: got %q, want %q", got, want)
	}
}

func TestSetupCaptureNotRun(t *testing.T) {
	// A step using a setup capture before RunSetup fails with a hint.
	sc := mustParse(t, "setup:\n  - url: /s\n    capture: {id: $.id}\nsteps:\n  - url: /c/{{id}}\n", Options{})
	var req load.Request
	err := sc.NewUser(1).Request(0, 0, &req)
	if err == nil || !strings.Contains(err.Error(), "id is not set") {
		t.Errorf("err = %v, want id is not set", err)
	}
}

func TestAssertions(t *testing.T) {
	tests := []struct {
		name   string
		expect string
		status int
		body   string
		want   string // failure reason; "" for a pass
	}{
		// Without expect.status any 2xx passes...
		{"default 2xx", "{}", 204, ``, ""},
		// ...and anything else fails, with the contract's error message.
		{"default not 2xx", "{}", 409, `{"error":"insufficient funds"}`, "status 409 (insufficient funds), want 2xx"},
		// A list of statuses.
		{"status list", "{status: [200, 201]}", 404, `{}`, "status 404, want 200 or 201"},
		// Numbers compare by value.
		{"number by value", "{json: {$.balance: 390}}", 200, `{"balance": 390.0}`, ""},
		{"number differs", "{json: {$.balance: 390}}", 200, `{"balance":380}`, "$.balance: got 380, want 390"},
		// A string never equals a number.
		{"type differs", "{json: {$.balance: 390}}", 200, `{"balance":"390"}`, `$.balance: got "390", want 390`},
		// Strings compare after decoding escapes.
		{"string escapes", `{json: {$.v: "HÉ\"LLO"}}`, 200, `{"v":"H\u00c9\"LLO"}`, ""},
		{"string differs", "{json: {$.v: HELLO}}", 200, `{"v":"hello"}`, `$.v: got "hello", want "HELLO"`},
		// Booleans and null.
		{"bool and null", "{json: {$.a: true, $.b: null}}", 200, `{"a":true,"b":null}`, ""},
		// Nested paths and array indexes.
		{"nested", "{json: {'$.a.b[2].c': 3}}", 200, `{"a":{"x":[1,{"c":9}],"b":[0,{"c":1},{"c":3}]}}`, ""},
		// A missing field, and exists.
		{"missing", "{json: {$.id: 1}}", 200, `{"ID":1}`, "$.id: missing"},
		{"exists", "{json: {$.id: {exists: true}}}", 200, `{"id":{"deep":[1]}}`, ""},
		{"exists fails", "{json: {$.id: {exists: true}}}", 201, `{"message":"x"}`, "$.id: missing"},
		{"absent", "{json: {$.password: {exists: false}}}", 200, `{"id":1,"password":"x"}`, "$.password: present, want absent"},
		// A body that is not JSON has no fields.
		{"not json", "{json: {$.id: {exists: true}}}", 200, `oops`, "$.id: missing"},
		// A template compares with the value's type: user is a number.
		{"template", `{json: {$.n: "{{user}}", $.s: "u{{user}}"}}`, 200, `{"n":3,"s":"u3"}`, ""},
		// body_contains.
		{"body_contains", `{body_contains: "LLO"}`, 200, `{"v":"HELLO"}`, ""},
		{"body_contains fails", `{body_contains: "u{{user}}"}`, 200, `{"v":"HELLO"}`, `body does not contain "u3"`},
		// The status is checked first.
		{"status first", "{status: 200, json: {$.v: 1}}", 500, `{"v":1}`, "status 500, want 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := mustParse(t, "steps:\n  - url: /x\n    expect: "+tt.expect+"\n", Options{})
			u := sc.NewUser(3)
			var req load.Request
			if err := u.Request(0, 0, &req); err != nil {
				t.Fatal(err)
			}
			err := u.Check(0, 0, &load.Response{Status: tt.status, Body: []byte(tt.body)})
			got := ""
			if err != nil {
				var ce *load.CheckError
				if !errors.As(err, &ce) {
					t.Fatalf("err %v is a %T, want *load.CheckError", err, err)
				}
				got = ce.Reason
			}
			if got != tt.want {
				t.Errorf("reason = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJSONPathLookup(t *testing.T) {
	doc := ` { "a" : { "b" : [ 1 , { "c" : "x}]" } , [true] ] , "e\"k" : null } , "n" : -1.5e3 , "s": "\\" }`
	tests := []struct {
		path string
		want string // raw JSON, or "-" when missing
	}{
		{"$", doc[1:]},          // the whole document
		{"$.a.b[0]", "1"},       // first element
		{"$.a.b[1].c", `"x}]"`}, // brackets inside strings are skipped
		{"$.a.b[2][0]", "true"}, // nested arrays
		{"$.a.b[3]", "-"},       // past the end
		{`$.a["e\"k"]`, "null"}, // escaped key
		{"$.n", "-1.5e3"},       // a number ends at the delimiter
		{"$.s", `"\\"`},         // an escaped backslash ends the string
		{"$.a.c", "-"},          // missing key
		{"$.n.x", "-"},          // a key of a number
		{"$.a[0]", "-"},         // an index of an object
	}
	for _, tt := range tests {
		p, err := compilePath(tt.path)
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		raw, ok := p.lookup([]byte(doc))
		got := string(raw)
		if !ok {
			got = "-"
		}
		if got != tt.want {
			t.Errorf("%s = %s, want %s", tt.path, got, tt.want)
		}
	}
}

func TestPause(t *testing.T) {
	sc := mustParse(t, "steps:\n  - url: /a\n    pause: 250ms\n  - url: /b\n", Options{})
	if got := fmt.Sprint(sc.Pause(0), sc.Pause(1), sc.Pause(2)); got != "250ms 0s 0s" {
		t.Errorf("pauses = %s, want 250ms 0s 0s", got)
	}
	if got := fmt.Sprint(sc.Steps()); got != "[GET /a GET /b]" {
		t.Errorf("default labels = %s, want [GET /a GET /b]", got)
	}
}

func TestInternedURLs(t *testing.T) {
	// A URL that varies only with picks is precomputed: every value it can
	// take, shared by all users; the rendered URL is the same as without.
	sc := mustParse(t, "vars:\n  a: {pick: [x, y]}\n  b: k\n  c: {pick: [1, 2]}\nsteps:\n  - url: /{{a}}/{{b}}/{{c}}/{{a}}\n  - url: /{{user}}/{{c}}\n", Options{})
	if got := len(sc.steps[0].urlIntern); got != 4 {
		t.Errorf("step 0 interned %d URLs, want 4", got)
	}
	if sc.steps[1].urlIntern != nil {
		t.Errorf("step 1 (uses {{user}}) interned URLs, want none")
	}
	u := sc.NewUser(1)
	re := regexp.MustCompile(`^http://h/([xy])/k/[12]/([xy])$`)
	for i := 0; i < 20; i++ {
		var req load.Request
		if err := u.Request(i, 0, &req); err != nil {
			t.Fatal(err)
		}
		if m := re.FindStringSubmatch(req.URL); m == nil || m[1] != m[2] {
			t.Errorf("URL %q, want one matching %v with the same pick twice", req.URL, re)
		}
	}
}

// TestRenewUser checks that a renewed user is a fresh one: the same
// requests as NewUser's for its number, none of the old user's captures,
// random values or data rows.
func TestRenewUser(t *testing.T) {
	src := `data:
  - {file: testdata/feed.csv, share: user}
vars:
  k: fixed
  p: {pick: [a, b, c, d]}
  r: {randint: [10, 99]}
steps:
  - url: /{{k}}/{{p}}/{{r}}/{{email}}/{{randint 1 1000000}}
    capture: {id: $.id}
  - method: POST
    url: /b/{{id}}
    body: {id: "{{id}}", p: "{{p}}", amount: "{{amount}}"}
`
	sc := mustParse(t, src, Options{Seed: 3})
	// play runs iters iterations of u, the responses carrying id base+it,
	// and returns its requests; the first is the second step's before any
	// capture, which must fail.
	play := func(u load.User, base, iters int) []string {
		var req load.Request
		out := []string{fmt.Sprint(u.Request(0, 1, &req))}
		for it := 0; it < iters; it++ {
			req.Reset()
			if err := u.Request(it, 0, &req); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmtRequest(&req))
			resp := &load.Response{Status: 200, Body: []byte(fmt.Sprintf(`{"id": %d}`, base+it))}
			if err := u.Check(it, 0, resp); err != nil {
				t.Fatal(err)
			}
			req.Reset()
			if err := u.Request(it, 1, &req); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmtRequest(&req))
		}
		return out
	}
	want := play(sc.NewUser(9), 100, 3)
	old := sc.NewUser(7)
	// Four iterations, so the old user's place in the data file (three
	// rows) is not where a fresh user starts.
	if got := play(old, 500, 4); strings.Join(got, "\n") == strings.Join(want, "\n") {
		t.Fatalf("users 7 and 9 sent the same requests:\n%s", strings.Join(got, "\n"))
	}
	renewed := sc.RenewUser(old, 9)
	if renewed != old {
		t.Errorf("RenewUser made a new user instead of reusing the old one")
	}
	if got := play(renewed, 100, 3); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("renewed user 9:\n%s\nfresh user 9:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A user of another scenario is not reused.
	other := mustParse(t, src, Options{Seed: 3})
	if u := other.RenewUser(old, 9); u == old {
		t.Errorf("RenewUser reused another scenario's user")
	}
}
