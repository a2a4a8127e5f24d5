package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// usersServer is an in-test, in-memory users workload. With broken set it
// has three defects: it inserts before checking for '@' (a 400 leaves a
// row), counts lengths in UTF-16 units (an email of 255 emoji code points
// is refused), and returns the password of a user whose email holds "ß".
type usersServer struct {
	broken  bool
	mu      sync.Mutex
	users   [][2]string // index id-1: email, password
	strings stringServer
}

var userPath = regexp.MustCompile(`^/user/([^/]*)$`)

func (u *usersServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	if dotSegment.MatchString(p) {
		fail(w, 404, "no such path")
		return
	}
	allow := func(method string) bool {
		if r.Method != method {
			w.Header().Set("Allow", method)
			fail(w, 405, "method not allowed")
			return false
		}
		return true
	}
	count := func(route string) {
		u.strings.mu.Lock()
		u.strings.requests[[2]string{route, "x"}]++
		u.strings.mu.Unlock()
	}
	switch {
	case p == "/user":
		count("/user")
		if allow("POST") {
			u.create(w, r)
		}
	case userPath.MatchString(p):
		count("/user/{id}")
		if !allow("GET") {
			return
		}
		id, ok := pathInt(userPath.FindStringSubmatch(p)[1], 1, maxID)
		if !ok {
			fail(w, 400, "bad id")
			return
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		if id > int64(len(u.users)) || u.users[id-1][0] == "" {
			fail(w, 404, "no such user")
			return
		}
		out := map[string]any{"id": id, "email": u.users[id-1][0]}
		if u.broken && strings.Contains(u.users[id-1][0], "ß") {
			out["password"] = u.users[id-1][1]
		}
		writeJSON(w, 200, out)
	default:
		u.strings.ServeHTTP(w, r)
	}
}

func (u *usersServer) create(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		fail(w, 413, "body over 1 MiB")
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil || dec.Decode(new(any)) != io.EOF {
		fail(w, 400, "malformed JSON")
		return
	}
	length := func(s string) int {
		if u.broken {
			return len(utf16.Encode([]rune(s)))
		}
		return utf8.RuneCountInString(s)
	}
	valid := func(k string) (string, bool) {
		s, ok := m[k].(string)
		return s, ok && s != "" && length(s) <= 255 && !strings.ContainsRune(s, 0)
	}
	email, ok1 := valid("email")
	password, ok2 := valid("password")
	if !ok1 || !ok2 {
		fail(w, 400, "email and password must be non-empty strings of at most 255 code points")
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.broken {
		u.users = append(u.users, [2]string{email, password})
	}
	if !strings.Contains(email, "@") {
		fail(w, 400, "email must hold @")
		return
	}
	if !u.broken {
		u.users = append(u.users, [2]string{email, password})
	}
	id := len(u.users)
	w.Header().Set("Location", fmt.Sprintf("/user/%d", id))
	writeJSON(w, 201, map[string]any{"id": id, "message": "User created"})
}

// usersResults runs the suite's users checks against u.
func usersResults(t *testing.T, u *usersServer) map[string]Result {
	u.strings.requests = map[[2]string]int{}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	got := map[string]Result{}
	Run(context.Background(), Target{BaseURL: srv.URL, Workloads: []string{"users"}}, func(r Result) {
		if r.Workload == "users" {
			got[r.Check] = r
		}
	})
	return got
}

func TestUsersCorrectServerPasses(t *testing.T) {
	got := usersResults(t, &usersServer{})
	if len(got) < 50 {
		t.Errorf("only %d users checks ran", len(got))
	}
	for _, r := range got {
		if r.Status == Fail || (r.Status == Skip && !strings.Contains(r.Detail, "hooks")) {
			t.Errorf("%s: %v on a correct users server: %s\n%s\n%s", r.Check, r.Status, r.Detail, trunc(r.Request, 400), trunc(r.Response, 400))
		}
	}
}

func TestUsersBrokenServerFailsExactly(t *testing.T) {
	want := []string{
		"users/rejected sign-ups leave no row",               // a 400 left a row
		"users/email of 255 code points (1014 bytes) -> 201", // UTF-16 lengths
		"users/unicode email stored verbatim -> 201",         // the password shown
	}
	got := usersResults(t, &usersServer{broken: true})
	var failed []string
	for name, r := range got {
		if r.Status == Fail {
			failed = append(failed, name)
		}
	}
	for _, n := range want {
		if !slices.Contains(failed, n) {
			t.Errorf("%q passed on the broken users server, want it to fail", n)
		}
	}
	for _, n := range failed {
		if !slices.Contains(want, n) {
			t.Errorf("%q failed on the broken users server, want it to pass: %s", n, got[n].Detail)
		}
	}
}
