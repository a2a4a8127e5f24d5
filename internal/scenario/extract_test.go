package scenario

import (
	"fmt"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/load"
)

func TestRegexCaptures(t *testing.T) {
	tests := []struct {
		name    string
		capture string // the capture mapping of step 0
		header  string
		body    string
		want    string // step 1's body, or the failure reason
	}{
		// The first group of the first match; a number stays a number in JSON.
		{"first group", `{v: {regex: 'id=(\d+)'}}`, "", "id=12 id=13", `{"v":12}`},
		// match: 2 takes the second match.
		{"second match", `{v: {regex: 'id=(\d+)', match: 2}}`, "", "id=12 id=13", `{"v":13}`},
		// group: 0 is the whole match, a string.
		{"whole match", `{v: {regex: 'id=\d+', group: 0}}`, "", "x id=12", `{"v":"id=12"}`},
		// A regex without groups captures the whole match.
		{"no groups", `{v: {regex: '[a-z]+'}}`, "", "42 abc", `{"v":"abc"}`},
		// from: headers searches the header block.
		{"headers", `{v: {regex: 'Location: /user/(\d+)', from: headers}}`, "Location: /user/7\r\n", "", `{"v":7}`},
		// No match fails the step...
		{"no match", `{v: {regex: 'id=(\d+)'}}`, "", "none", `capture v: no match of "id=(\\d+)"`},
		// ...unless there is a default, as JMeter's extractors have.
		{"default", `{v: {regex: 'id=(\d+)', default: NOTFOUND}}`, "", "none", `{"v":"NOTFOUND"}`},
		// Defaults work for JSON paths and headers too.
		{"json default", `{v: {json: $.id, default: -1}}`, "", "{}", `{"v":-1}`},
		{"header default", `{v: {header: X-Id, default: ""}}`, "", "{}", `{"v":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "steps:\n  - url: /a\n    capture: " + tt.capture + "\n  - method: POST\n    url: /b\n    body: {v: \"{{v}}\"}\n"
			sc := mustParse(t, src, Options{})
			u := sc.NewUser(1)
			var req load.Request
			if err := u.Request(0, 0, &req); err != nil {
				t.Fatal(err)
			}
			err := u.Check(0, 0, &load.Response{Status: 200, RawHeader: []byte(tt.header), Body: []byte(tt.body)})
			got := fmt.Sprint(err)
			if err == nil {
				req.Reset()
				if err := u.Request(0, 1, &req); err != nil {
					t.Fatal(err)
				}
				got = string(req.Body)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestBodyMatches(t *testing.T) {
	sc := mustParse(t, "steps:\n  - url: /a\n    expect:\n      body_matches: '^\\{\"v\":\"[A-Z]+\"\\}$'\n", Options{})
	u := sc.NewUser(1)
	// A body that matches passes.
	if err := u.Check(0, 0, &load.Response{Status: 200, Body: []byte(`{"v":"HELLO"}`)}); err != nil {
		t.Errorf("match: %v", err)
	}
	// Another fails with the expression in the reason.
	err := u.Check(0, 0, &load.Response{Status: 200, Body: []byte(`{"v":"hello"}`)})
	if err == nil || !strings.HasPrefix(err.Error(), "body does not match") {
		t.Errorf("no match: got %v", err)
	}
}

func TestFeeds(t *testing.T) {
	tests := []struct {
		name string
		data string // the data entry
		// want is each user's request URLs in iterations 0..2; users 1 and 2
		// take turns.
		want string
	}{
		// The default: all users share one sequence, a row per iteration,
		// starting over at the end.
		{"shared per iteration", "{file: testdata/feed.csv}",
			"u1: a@x.io/10 c@x.io/x30 b@x.io/20 | u2: b@x.io/20 a@x.io/10 c@x.io/x30"},
		// share: user: every user reads the file from its first row.
		{"own per iteration", "{file: testdata/feed.csv, share: user}",
			"u1: a@x.io/10 b@x.io/20 c@x.io/x30 | u2: a@x.io/10 b@x.io/20 c@x.io/x30"},
		// each: user: a user keeps the row it took when it started.
		{"shared per user", "{file: testdata/feed.csv, each: user}",
			"u1: a@x.io/10 a@x.io/10 a@x.io/10 | u2: b@x.io/20 b@x.io/20 b@x.io/20"},
		// names: name the columns; skip_first_line drops the header line.
		{"names", "{file: testdata/feed.csv, names: [mail, amount], skip_first_line: true, each: user, share: user}",
			"u1: a@x.io/10 a@x.io/10 a@x.io/10 | u2: a@x.io/10 a@x.io/10 a@x.io/10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			email := "email"
			if strings.Contains(tt.data, "mail,") {
				email = "mail"
			}
			src := "data:\n  - " + tt.data + "\nsteps:\n  - url: /{{" + email + "}}/{{amount}}\n"
			sc := mustParse(t, src, Options{})
			users := []load.User{sc.NewUser(1), sc.NewUser(2)}
			urls := [2][]string{}
			for it := 0; it < 3; it++ {
				for i, u := range users {
					var req load.Request
					if err := u.Request(it, 0, &req); err != nil {
						t.Fatal(err)
					}
					urls[i] = append(urls[i], strings.TrimPrefix(req.URL, "http://h/"))
				}
			}
			parts := []string{"u1: " + strings.Join(urls[0], " "), "u2: " + strings.Join(urls[1], " ")}
			if got := strings.Join(parts, " | "); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestFeedTypes(t *testing.T) {
	// A column that reads as a number is a number in a JSON body; others are strings.
	sc := mustParse(t, "data:\n  - file: testdata/feed.csv\nsteps:\n  - method: POST\n    url: /x\n    body: {e: \"{{email}}\", a: \"{{amount}}\"}\n", Options{})
	u := sc.NewUser(1)
	var req load.Request
	if err := u.Request(0, 0, &req); err != nil {
		t.Fatal(err)
	}
	if got, want := string(req.Body), `{"e":"a@x.io","a":10}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestExtensionErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		// A bad regular expression.
		{"bad regex", "steps:\n  - url: /a\n    capture: {v: {regex: 'a(b'}}\n", "steps[0].capture.v.regex: bad regular expression"},
		// A group the expression does not have.
		{"bad group", "steps:\n  - url: /a\n    capture: {v: {regex: 'a(b)', group: 2}}\n", "steps[0].capture.v.group: want an integer in 0..1"},
		// group goes with regex only.
		{"group without regex", "steps:\n  - url: /a\n    capture: {v: {json: $.id, group: 1}}\n", "group is only for a regex capture"},
		// A missing data file.
		{"missing file", "data:\n  - file: testdata/none.csv\nsteps:\n  - url: /a\n", "data[0].file: cannot read testdata/none.csv"},
		// A column with a variable's name.
		{"column is a var", "data:\n  - file: testdata/feed.csv\nvars:\n  email: x\nsteps:\n  - url: /a\n", `column "email" is already a variable`},
		// An unknown sharing mode.
		{"bad share", "data:\n  - {file: testdata/feed.csv, share: group}\nsteps:\n  - url: /a\n", "data[0].share: unknown value"},
		// A bad body_matches.
		{"bad body_matches", "steps:\n  - url: /a\n    expect: {body_matches: '(?<=x)'}\n", "steps[0].expect.body_matches: bad regular expression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tt.src), Options{BaseURL: "http://h"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}
