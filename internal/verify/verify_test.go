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
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// stringServer is an in-test implementation of the string workload. With
// broken set it has four defects the suite must catch: a 500 on malformed
// JSON, Content-Type text/plain on /count's answers, a 200 for an empty
// s, and a plain-text 404.
type stringServer struct {
	broken bool

	mu       sync.Mutex
	requests map[[2]string]int // route, status -> count
}

func (ss *stringServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, status := ss.serve(w, r)
	ss.mu.Lock()
	ss.requests[[2]string{route, fmt.Sprint(status)}]++
	ss.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
	return status
}

func fail(w http.ResponseWriter, status int, msg string) int {
	return writeJSON(w, status, map[string]string{"error": msg})
}

func (ss *stringServer) serve(w http.ResponseWriter, r *http.Request) (route string, status int) {
	method := map[string]string{"/health": "GET", "/metrics": "GET", "/uppercase": "POST", "/count": "POST"}[r.URL.Path]
	if method == "" {
		if ss.broken {
			http.Error(w, "404 page not found", 404)
			return "unmatched", 404
		}
		return "unmatched", fail(w, 404, "no such path")
	}
	route = r.URL.Path
	if r.Method != method {
		w.Header().Set("Allow", method)
		return route, fail(w, 405, "method not allowed")
	}
	switch route {
	case "/health":
		return route, writeJSON(w, 200, map[string]string{"status": "ok"})
	case "/metrics":
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		ss.mu.Lock()
		defer ss.mu.Unlock()
		keys := make([][2]string, 0, len(ss.requests))
		for k := range ss.requests {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
		fmt.Fprintln(w, "# TYPE http_requests_total counter")
		perRoute := map[string]int{}
		for _, k := range keys {
			fmt.Fprintf(w, "http_requests_total{route=%q,status=%q} %d\n", k[0], k[1], ss.requests[k])
			perRoute[k[0]] += ss.requests[k]
		}
		fmt.Fprintln(w, "# TYPE http_request_duration_seconds histogram")
		for route, n := range perRoute {
			fmt.Fprintf(w, "http_request_duration_seconds_bucket{route=%q,le=\"+Inf\"} %d\n", route, n)
			fmt.Fprintf(w, "http_request_duration_seconds_sum{route=%q} 0.001\n", route)
			fmt.Fprintf(w, "http_request_duration_seconds_count{route=%q} %d\n", route, n)
		}
		return route, 200
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return route, fail(w, 413, "body over 1 MiB")
	} else if err != nil {
		return route, fail(w, 400, "cannot read the body")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var v any
	err = dec.Decode(&v)
	if err == nil && dec.Decode(new(any)) != io.EOF {
		err = errors.New("trailing data")
	}
	if err != nil {
		if ss.broken {
			return route, fail(w, 500, "internal error")
		}
		return route, fail(w, 400, "malformed JSON")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return route, fail(w, 400, "body must be a JSON object")
	}
	s, ok := m["s"].(string)
	if !ok || (s == "" && !ss.broken) || strings.ContainsRune(s, 0) {
		return route, fail(w, 400, "s must be a non-empty string without U+0000")
	}
	if route == "/uppercase" {
		return route, writeJSON(w, 200, map[string]string{"v": cases.Upper(language.Und).String(s)})
	}
	if ss.broken {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(200)
		fmt.Fprintf(w, `{"v":%d}`, utf8.RuneCountInString(s))
		return route, 200
	}
	return route, writeJSON(w, 200, map[string]int{"v": utf8.RuneCountInString(s)})
}

// start serves ss and returns a Target with working shutdown hooks.
func start(t *testing.T, ss *stringServer) Target {
	t.Helper()
	ss.requests = map[[2]string]int{}
	srv := httptest.NewUnstartedServer(ss)
	srv.Start()
	t.Cleanup(srv.Close)
	done := make(chan error, 1)
	return Target{
		BaseURL:   srv.URL,
		Workloads: []string{"string"},
		Terminate: func() error {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				done <- srv.Config.Shutdown(ctx)
			}()
			return nil
		},
		Exited: func(ctx context.Context) (int, error) {
			select {
			case err := <-done:
				if err != nil {
					return 1, nil
				}
				return 0, nil
			case <-ctx.Done():
				return -1, ctx.Err()
			}
		},
	}
}

// run runs the suite and returns the results by check name.
func run(t *testing.T, target Target) map[string]Result {
	t.Helper()
	got := map[string]Result{}
	failed := Run(context.Background(), target, func(r Result) {
		if _, dup := got[r.Check]; dup {
			t.Errorf("check name %q reported twice", r.Check)
		}
		got[r.Check] = r
		t.Logf("%s %-70s %6s %s", r.Status, r.Check, r.Elapsed.Round(time.Millisecond), firstLine(r.Detail))
	})
	n := 0
	for _, r := range got {
		if r.Status == Fail {
			n++
		}
	}
	if failed != n {
		t.Errorf("Run returned %d failures, reported %d", failed, n)
	}
	return got
}

func TestCorrectServerPasses(t *testing.T) {
	got := run(t, start(t, &stringServer{}))
	if len(got) < 60 {
		t.Errorf("only %d checks ran, want the whole string table", len(got))
	}
	for _, r := range got {
		if r.Status == Fail {
			t.Errorf("%s failed on a correct server: %s\nrequest:\n%s\nresponse:\n%s", r.Check, r.Detail, trunc(r.Request, 600), trunc(r.Response, 600))
		}
		if r.Status == Skip {
			t.Errorf("%s skipped: %s", r.Check, r.Detail)
		}
	}
}

func TestBrokenServerFailsExactly(t *testing.T) {
	want := []string{
		// 500 on malformed JSON.
		"string/empty body -> 400",
		"string/no body -> 400",
		"string/lone brace -> 400",
		"string/truncated JSON -> 400",
		"string/single quotes -> 400",
		"string/trailing comma -> 400",
		"string/trailing garbage -> 400",
		"string/two JSON objects -> 400",
		"string/not JSON at all -> 400",
		"string/100000 nested arrays -> 400",
		"string/body longer than Content-Length -> 400",
		"string/keep-alive: 400s then 200s on one connection",
		// text/plain on /count.
		"string/count hello -> 200 5",
		"string/count emoji counts 1",
		"string/count escaped surrogate pair counts 1",
		"string/count straße -> 6",
		"string/count combining accent -> 2",
		"string/count ZWJ family -> 5",
		"string/count 1000 emoji -> 1000",
		"string/count body of exactly 1 MiB -> 200",
		"string/count escaped backslash then u0000 is text -> 6",
		"string/no Content-Type -> 200",
		"string/chunked body -> 200",
		"string/lone surrogate escape -> 200 or 400",
		// 200 for an empty s.
		"string/s empty -> 400 (uppercase)",
		"string/s empty -> 400 (count)",
		"string/duplicate key, the last one empty -> 400",
		// A plain-text 404.
		"unknown path -> 404",
		"root path -> 404",
		"unknown path POST -> 404",
		"health path case differs -> 404",
		"health trailing slash -> 404",
		"path traversal /../../etc/passwd -> 404 or 400",
		"string/POST /uppercase/ -> 404",
		"string/POST /UPPERCASE -> 404",
		"string/POST /count/../uppercase -> 404",
	}
	got := run(t, start(t, &stringServer{broken: true}))
	var failed []string
	for name, r := range got {
		if r.Status == Fail {
			failed = append(failed, name)
			if r.Request == "" || r.Response == "" {
				t.Errorf("%s failed without its request and response", name)
			}
		}
	}
	slices.Sort(failed)
	slices.Sort(want)
	for _, n := range want {
		if !slices.Contains(failed, n) {
			t.Errorf("%q passed on the broken server, want it to fail", n)
		}
	}
	for _, n := range failed {
		if !slices.Contains(want, n) {
			t.Errorf("%q failed on the broken server, want it to pass: %s", n, got[n].Detail)
		}
	}
}

// TestAbruptShutdownFails proves the shutdown checks can fail: a server
// that drops its connections on SIGTERM and exits 1 loses requests.
func TestAbruptShutdownFails(t *testing.T) {
	ss := &stringServer{requests: map[[2]string]int{}}
	srv := httptest.NewServer(ss)
	t.Cleanup(srv.Close)
	done := make(chan struct{})
	target := Target{
		BaseURL:   srv.URL,
		Workloads: []string{"string"},
		Terminate: func() error {
			go func() { srv.Config.Close(); close(done) }()
			return nil
		},
		Exited: func(ctx context.Context) (int, error) { <-done; return 1, nil },
	}
	got := run(t, target)
	for name, want := range map[string]Status{
		"shutdown/requests in flight at SIGTERM complete": Fail,
		"shutdown/exits 0 within 10 s of SIGTERM":         Fail,
		"shutdown/port closed after exit":                 Pass,
		"string/uppercase hello -> 200 HELLO":             Pass,
	} {
		if got[name].Status != want {
			t.Errorf("%s: got %v, want %v (%s)", name, got[name].Status, want, got[name].Detail)
		}
	}
}

// TestMissingHooksSkip: without hooks the destructive checks are skipped,
// with the reason, not failed.
func TestMissingHooksSkip(t *testing.T) {
	ss := &stringServer{requests: map[[2]string]int{}}
	srv := httptest.NewServer(ss)
	t.Cleanup(srv.Close)
	got := run(t, Target{BaseURL: srv.URL, Workloads: []string{"string"}})
	r, ok := got["shutdown/graceful shutdown under load"]
	if !ok || r.Status != Skip || !strings.Contains(r.Detail, "Terminate") {
		t.Errorf("shutdown check: got %+v, want a Skip naming the Terminate hook", r)
	}
}

// TestBadTarget: a malformed BaseURL or a port nobody listens on is one
// failure, not a crash or 300 alike failures.
func TestBadTarget(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	gone := srv.URL
	srv.Close()
	for _, base := range []string{"localhost:80", gone} {
		var got []Result
		n := Run(context.Background(), Target{BaseURL: base, Workloads: []string{"string"}}, func(r Result) { got = append(got, r) })
		if n != 1 || len(got) != 1 || got[0].Status != Fail {
			t.Errorf("%s: got %d failures, results %+v; want one failure", base, n, got)
		}
	}
}

// TestNonDestructive: the checks `showdown run` makes before load are
// the whole suite but the outage, hung-database and shutdown checks,
// whatever hooks are given; nothing is skipped for a missing hook.
func TestNonDestructive(t *testing.T) {
	hooks := Target{
		Workloads:      []string{"string", "bank", "users", "sku"},
		DatabaseDown:   func(context.Context, string) error { return nil },
		DatabaseUp:     func(context.Context, string) error { return nil },
		DatabaseHang:   func(context.Context, string) error { return nil },
		DatabaseResume: func(context.Context, string) error { return nil },
		Terminate:      func() error { return nil },
		Exited:         func(context.Context) (int, error) { return 0, nil },
	}
	names := func(t Target) []string {
		var out []string
		for _, st := range plan(t) {
			for _, c := range st() {
				out = append(out, c.name)
			}
		}
		return out
	}
	all := names(hooks)
	nd := hooks
	nd.NonDestructive = true
	some := names(nd)
	var left []string
	for _, n := range all {
		if !slices.Contains(some, n) {
			left = append(left, n)
		}
	}
	if len(some)+len(left) != len(all) || len(left) == 0 {
		t.Fatalf("%d checks in all, %d non-destructive, %d left out: the non-destructive ones must be a part of all", len(all), len(some), len(left))
	}
	var want []string
	for _, st := range append(outageStages(hooks), shutdownStages(hooks)...) {
		for _, c := range st() {
			want = append(want, c.name)
		}
	}
	if !slices.Equal(left, want) {
		t.Errorf("left out:\n%s\nwant exactly the outage, hung-database and shutdown checks:\n%s", strings.Join(left, "\n"), strings.Join(want, "\n"))
	}
}
