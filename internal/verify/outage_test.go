package verify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// skuServer is an in-test sku workload whose "database" is a flag the
// outage hooks flip. slow503 makes its 503s take 4 s; stuck makes it
// stay down after the database is back.
type skuServer struct {
	down    atomic.Bool
	slow503 bool
	stuck   bool
	strings stringServer // serves /health, /metrics and the rest
}

var skuPath = regexp.MustCompile(`^/sku/([^/]*)$`)

func (k *skuServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	unavailable := func() {
		if k.slow503 {
			time.Sleep(4 * time.Second)
		}
		fail(w, 503, "database unreachable")
	}
	if r.URL.Path == "/health" && r.Method == "GET" && k.down.Load() {
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
	if k.down.Load() {
		unavailable()
		return
	}
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
	}
}

func TestOutage(t *testing.T) {
	// Restored after the parallel subtests end; no other test runs in
	// parallel with this one.
	saved := recoveryWait
	t.Cleanup(func() { recoveryWait = saved })
	recoveryWait = 2 * time.Second
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
