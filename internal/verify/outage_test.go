package verify

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// skuServer is an in-test sku workload whose "database" is two flags the
// outage hooks flip (down, hung) and a statement counter. slow503 makes
// its 503s take 4 s; stuck makes it stay down after the database is back;
// hangs makes it wait 4 s on a hung database; caching answers a sku read
// before without a statement; leaky echoes the driver in its 503s;
// hangFails makes the DatabaseHang hook fail.
type skuServer struct {
	down, hung atomic.Bool
	statements atomic.Int64
	hangCalls  atomic.Int64 // DatabaseHang calls
	resumes    atomic.Int64 // DatabaseResume calls
	cached     atomic.Bool
	slow503    bool
	stuck      bool
	hangs      bool
	caching    bool
	leaky      bool
	hangFails  bool
	strings    stringServer // serves /health, /metrics and the rest
}

var skuPath = regexp.MustCompile(`^/sku/([^/]*)$`)

func (k *skuServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	unavailable := func() {
		if k.slow503 || (k.hangs && k.hung.Load()) {
			time.Sleep(4 * time.Second)
		}
		if k.leaky {
			fail(w, 503, `database unavailable: dial tcp 127.0.0.1:5432: password authentication failed for user "showdown"`)
			return
		}
		fail(w, 503, "database unreachable")
	}
	out := func() bool { return k.down.Load() || k.hung.Load() }
	if r.URL.Path == "/health" && r.Method == "GET" && out() {
		unavailable()
		return
	}
	m := skuPath.FindStringSubmatch(r.URL.EscapedPath())
	if m == nil {
		k.strings.ServeHTTP(w, r)
		return
	}
	k.strings.mu.Lock()
	k.strings.requests[[2]string{"/sku/{sku_id}", "x"}]++
	k.strings.mu.Unlock()
	if r.Method != "GET" {
		w.Header().Set("Allow", "GET")
		fail(w, 405, "method not allowed")
		return
	}
	id, err := strconv.ParseInt(m[1], 10, 64)
	if !regexp.MustCompile(`^[0-9]{1,16}$`).MatchString(m[1]) || err != nil || id < 1 || id > maxID {
		fail(w, 400, "sku_id must be an integer in 1 .. 2^53-1")
		return
	}
	if out() {
		unavailable()
		return
	}
	if k.caching && id == 42 && k.cached.Load() {
		writeJSON(w, 200, map[string]any{"id": 7, "mem_id": 1, "mem_code": "M1", "sku_id": 42, "sku_code": "S42", "item": "i", "sku_name": "n", "sku_abbr": "a"})
		return
	}
	k.statements.Add(1)
	k.cached.Store(id == 42)
	if id != 42 {
		fail(w, 404, "no such sku")
		return
	}
	writeJSON(w, 200, map[string]any{"id": 7, "mem_id": 1, "mem_code": "M1", "sku_id": 42, "sku_code": "S42", "item": "i", "sku_name": "n", "sku_abbr": "a"})
}

// startSKU serves k with working outage hooks and no shutdown hooks.
func startSKU(t *testing.T, k *skuServer) Target {
	k.strings.requests = map[[2]string]int{}
	srv := httptest.NewServer(k)
	t.Cleanup(srv.Close)
	return Target{
		BaseURL:      srv.URL,
		Workloads:    []string{"sku", "string"},
		KnownSKUs:    []int64{42},
		DatabaseDown: func(context.Context, string) error { k.down.Store(true); return nil },
		DatabaseUp: func(context.Context, string) error {
			if !k.stuck {
				k.down.Store(false)
			}
			return nil
		},
		DatabaseHang: func(context.Context, string) error {
			k.hangCalls.Add(1)
			if k.hangFails {
				return errors.New("cannot signal the server")
			}
			k.hung.Store(true)
			return nil
		},
		DatabaseResume: func(context.Context, string) error {
			k.resumes.Add(1)
			k.hung.Store(false)
			return nil
		},
		Statements: func(context.Context, string) (int64, error) { return k.statements.Load(), nil },
	}
}

func TestOutage(t *testing.T) {
	// Restored after the parallel subtests end; no other test runs in
	// parallel with this one.
	saved, savedSettle := recoveryWait, hangSettle
	t.Cleanup(func() { recoveryWait, hangSettle = saved, savedSettle })
	recoveryWait, hangSettle = 2*time.Second, 100*time.Millisecond
	const (
		hung    = "sku/database hung (SIGSTOP) -> 503 within 3 s, then recovery"
		queried = "sku/SKU lookups come from the database (5 reads, at least 5 statements)"
	)
	for _, c := range []struct {
		name string
		k    *skuServer
		want map[string]Status
	}{
		// A correct service: fast 503s, then back.
		{"correct", &skuServer{}, map[string]Status{
			"sku/GET known sku #1 -> 200 with every field": Pass,
			"sku/database down -> 503 within 3 s":          Pass,
			"sku/health 503 while database down":           Pass,
			"sku/string keeps working while database down": Pass,
			"sku/recovers after database up":               Pass,
			hung:                                           Pass,
			queried:                                        Pass,
		}},
		// 503s that take 4 s: the bounded timeouts are missing.
		{"slow 503", &skuServer{slow503: true}, map[string]Status{
			"sku/database down -> 503 within 3 s": Fail,
			"sku/health 503 while database down":  Fail,
			"sku/recovers after database up":      Pass,
		}},
		// Never reconnects by itself.
		{"stuck", &skuServer{stuck: true}, map[string]Status{
			"sku/database down -> 503 within 3 s": Pass,
			"sku/recovers after database up":      Fail,
		}},
		// Waits 4 s on a hung database (no query or acquire timeout).
		{"hangs", &skuServer{hangs: true}, map[string]Status{
			"sku/database down -> 503 within 3 s": Pass,
			hung:                                  Fail,
		}},
		// Answers a sku it read before from a cache.
		{"caching", &skuServer{caching: true}, map[string]Status{
			"sku/GET known sku #1 -> 200 with every field": Pass,
			queried: Fail,
		}},
		// Echoes the driver's message (address, user) in its 503s.
		{"leaky", &skuServer{leaky: true}, map[string]Status{
			"sku/database down -> 503 within 3 s": Fail,
			hung:                                  Fail,
		}},
		// The DatabaseHang hook fails: the check fails, the database is
		// still resumed.
		{"hang hook fails", &skuServer{hangFails: true}, map[string]Status{
			hung: Fail,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := map[string]Result{}
			Run(context.Background(), startSKU(t, c.k), func(r Result) { got[r.Check] = r })
			for name, want := range c.want {
				if r, ok := got[name]; !ok || r.Status != want {
					t.Errorf("%s: got %v (%s), want %v", name, r.Status, r.Detail, want)
				}
			}
			if h, r := c.k.hangCalls.Load(), c.k.resumes.Load(); h != 1 || r != h {
				t.Errorf("DatabaseHang called %d times, DatabaseResume %d times; want once each", h, r)
			}
			if c.name == "correct" {
				for _, r := range got {
					if r.Status == Fail {
						t.Errorf("%s failed on a correct sku server: %s\n%s\n%s", r.Check, r.Detail, trunc(r.Request, 400), trunc(r.Response, 400))
					}
				}
			}
		})
	}
}
