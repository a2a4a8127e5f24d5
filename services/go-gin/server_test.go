package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // no debug route listing
	os.Exit(m.Run())
}

// newTestServer serves the real handler with no database configured
// unless pgURL or myURL are given.
func newTestServer(t *testing.T, pgURL, myURL string, logs io.Writer) *httptest.Server {
	t.Helper()
	limits := dbLimits{acquire: 2 * time.Second, query: 5 * time.Second}
	pg, err := openPostgres(pgURL, 4, limits)
	if err != nil {
		t.Fatal(err)
	}
	my, err := openMySQL(myURL, 4, limits)
	if err != nil {
		t.Fatal(err)
	}
	var logger *slog.Logger
	if logs != nil {
		logger = slog.New(slog.NewJSONHandler(logs, nil))
	}
	srv := httptest.NewServer(newHandler(pg, my, prometheus.NewRegistry(), logger, new(atomic.Bool)))
	t.Cleanup(func() {
		srv.Close()
		closePools(pg, my)
	})
	return srv
}

type response struct {
	status int
	header http.Header
	body   string
	close  bool // the server said it closes the connection
}

func do(t *testing.T, method, url string, body io.Reader) response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, string(b), res.Close}
}

func TestContractWithoutDatabase(t *testing.T) {
	srv := newTestServer(t, "", "", nil)
	tests := []struct {
		method, path, body string
		status             int
		want               string // the body, or a substring of it for errors
	}{
		{"POST", "/uppercase", `{"s":"hello"}`, 200, `{"v":"HELLO"}`},                // the happy path
		{"POST", "/uppercase", `{"s":"straße"}`, 200, `{"v":"STRASSE"}`},             // full Unicode mapping
		{"POST", "/uppercase", `{"s":"<a&b>"}`, 200, `{"v":"\u003cA\u0026B\u003e"}`}, // c.JSON escapes HTML, as encoding/json does
		{"POST", "/count", `{"s":"😀a"}`, 200, `{"v":2}`},                             // code points, not bytes
		{"POST", "/count", `{"s":"a","s":"bcd"}`, 200, `{"v":3}`},                    // duplicate key: last wins
		{"POST", "/count", `{"s":"a","x":[1,{}]}`, 200, `{"v":1}`},                   // unknown fields ignored
		{"POST", "/count", `{"S":"a"}`, 400, `is required`},                          // keys are case-sensitive
		{"POST", "/count", `{"s":""}`, 400, `must not be empty`},                     // empty
		{"POST", "/count", `{"s":"a\u0000"}`, 400, `U+0000`},                         // NUL
		{"POST", "/count", `{"s":5}`, 400, `must be a string`},                       // wrong type
		{"POST", "/count", `{"s":null}`, 400, `must be a string`},                    // null
		{"POST", "/count", `"s"`, 400, `JSON object`},                                // not an object
		{"POST", "/count", `null`, 400, `JSON object`},                               // null body
		{"POST", "/count", `{"s":"a"`, 400, `malformed JSON`},                        // truncated
		{"POST", "/count", ``, 400, `malformed JSON`},                                // empty body
		{"POST", "/count", `{"s":"a"} {}`, 400, `malformed JSON`},                    // trailing data
		{"GET", "/count", ``, 405, `not allowed`},                                    // wrong method
		{"GET", "/nowhere", ``, 404, `no route`},                                     // unknown path
		{"GET", "/client/../balance", ``, 404, `no route`},                           // unclean path: 404, not a redirect
		{"GET", "/health/", ``, 404, `no route`},                                     // trailing slash: 404, not gin's redirect
		{"GET", "/HEALTH", ``, 404, `no route`},                                      // case differs: 404, not a fixed-path redirect
		{"GET", "/client/1/balance", ``, 503, `database not configured`},             // bank without DATABASE_URL
		{"POST", "/client/new/5", ``, 503, `database not configured`},                // bank create
		{"POST", "/transaction", `{}`, 503, `database not configured`},               // checked before the body
		{"POST", "/user", `{}`, 503, `database not configured`},                      // users without DATABASE_URL
		{"GET", "/sku/1", ``, 503, `database not configured`},                        // sku without MYSQL_URL
		{"GET", "/health", ``, 200, `{"status":"ok"}`},                               // no database to ping
		{"DELETE", "/client/1/balance", ``, 405, `not allowed`},                      // 405 on a parameterized route
	}
	for _, tt := range tests {
		var body io.Reader
		if tt.body != "" {
			body = strings.NewReader(tt.body)
		}
		res := do(t, tt.method, srv.URL+tt.path, body)
		if res.status != tt.status {
			t.Errorf("%s %s %s: status %d, want %d (body %s)", tt.method, tt.path, tt.body, res.status, tt.status, res.body)
		}
		if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: Content-Type %q, want application/json", tt.method, tt.path, ct)
		}
		if !json.Valid([]byte(res.body)) {
			t.Errorf("%s %s: body is not JSON: %q", tt.method, tt.path, res.body)
		}
		if res.status < 300 && res.body != tt.want || res.status >= 300 && !strings.Contains(res.body, tt.want) {
			t.Errorf("%s %s %s: body %s, want %s", tt.method, tt.path, tt.body, res.body, tt.want)
		}
		if res.status == 405 && res.header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without an Allow header", tt.method, tt.path)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	srv := newTestServer(t, "", "", nil)
	// Exactly 1 MiB is allowed: a valid object padded with spaces.
	exact := `{"s":"x"}` + strings.Repeat(" ", maxBodyBytes-len(`{"s":"x"}`))
	if res := do(t, "POST", srv.URL+"/count", strings.NewReader(exact)); res.status != 200 {
		t.Errorf("1 MiB body: status %d, want 200 (%s)", res.status, res.body)
	}
	over := exact + " "
	if res := do(t, "POST", srv.URL+"/count", strings.NewReader(over)); res.status != 413 {
		t.Errorf("1 MiB + 1 body with Content-Length: status %d, want 413", res.status)
	}
	// Without Content-Length (chunked), the limit applies while reading.
	chunked := io.MultiReader(strings.NewReader(over)) // hides the length from the client
	if res := do(t, "POST", srv.URL+"/count", chunked); res.status != 413 {
		t.Errorf("chunked 1 MiB + 1 body: status %d, want 413", res.status)
	}
}

func TestMetricsAndLogs(t *testing.T) {
	var logs bytes.Buffer
	srv := newTestServer(t, "", "", &logs)
	do(t, "POST", srv.URL+"/uppercase", strings.NewReader(`{"s":"a"}`))
	do(t, "GET", srv.URL+"/client/7/balance", nil)
	do(t, "GET", srv.URL+"/missing", nil)
	res := do(t, "GET", srv.URL+"/metrics", nil)
	for _, want := range []string{
		`http_requests_total{route="/uppercase",status="200"} 1`,
		`http_requests_total{route="/client/{id}/balance",status="503"} 1`,
		`http_requests_total{route="unmatched",status="404"} 1`,
		`http_request_duration_seconds_bucket{route="/uppercase",le="+Inf"} 1`,
	} {
		if !strings.Contains(res.body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// One JSON line per request (the /metrics one is logged after it answers).
	sc := bufio.NewScanner(&logs)
	n := 0
	for sc.Scan() {
		n++
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %d is not JSON: %s", n, sc.Text())
		}
		for _, k := range []string{"time", "level", "method", "path", "status", "duration_ms"} {
			if _, ok := line[k]; !ok {
				t.Errorf("log line %d lacks %q: %s", n, k, sc.Text())
			}
		}
	}
	if n != 4 {
		t.Errorf("%d log lines, want 4", n)
	}
}

// TestDatabaseDown points both pools at a port nobody listens on: every
// database request is a quick 503, /health too, and the string workload
// keeps working.
func TestDatabaseDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // now refused
	srv := newTestServer(t, "postgres://u@"+addr+"/db?sslmode=disable", "mysql://u@"+addr+"/db", nil)
	for _, tt := range []struct{ method, path, body string }{
		{"GET", "/client/1/balance", ""},
		{"POST", "/client/new/10", ""},
		{"POST", "/transaction", `{"from_client_id":1,"to_client_id":2,"amount":3}`},
		{"POST", "/user", `{"email":"a@b","password":"p"}`},
		{"GET", "/user/1", ""},
		{"GET", "/sku/1", ""},
		{"GET", "/health", ""},
	} {
		res := do(t, tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		if res.status != 503 || !json.Valid([]byte(res.body)) {
			t.Errorf("%s %s with the database down: %d %s, want 503 with a JSON body", tt.method, tt.path, res.status, res.body)
		}
	}
	// Validation still comes first.
	if res := do(t, "GET", srv.URL+"/user/abc", nil); res.status != 400 {
		t.Errorf("GET /user/abc: %d, want 400", res.status)
	}
	// Encoded dots reach the handler (gin routes the escaped path): 400.
	if res := do(t, "GET", srv.URL+"/client/%2e%2e/balance", nil); res.status != 400 {
		t.Errorf("GET /client/%%2e%%2e/balance: %d, want 400", res.status)
	}
	if res := do(t, "POST", srv.URL+"/uppercase", strings.NewReader(`{"s":"ok"}`)); res.status != 200 {
		t.Errorf("/uppercase with the database down: %d, want 200", res.status)
	}
}

func TestDrainingClosesConnections(t *testing.T) {
	draining := new(atomic.Bool)
	srv := httptest.NewServer(newHandler(nil, nil, prometheus.NewRegistry(), nil, draining))
	defer srv.Close()
	res := do(t, "GET", srv.URL+"/health", nil)
	if res.close {
		t.Fatal("Connection: close before draining")
	}
	draining.Store(true)
	res = do(t, "GET", srv.URL+"/health", nil)
	if res.status != 200 || !res.close {
		t.Errorf("while draining: status %d, closing %v; want 200 and Connection: close", res.status, res.close)
	}
}
