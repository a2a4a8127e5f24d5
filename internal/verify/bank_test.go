package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// bankServer is an in-test, in-memory bank workload whose slice is its
// database: statements counts its reads and writes of it. With broken set
// it has two defects: no overdraft check (no 409) and transfers that read,
// yield and write balances without a lock (lost updates under load). With
// caching set it answers a balance read before from a cache of its own,
// which every transfer clears: always right, but not from the database.
// With leaky set a transfer whose client left while it was "inside its
// transaction" leaves that transaction open (counted in open), as a
// pooled connection handed back between BEGIN and COMMIT would.
type bankServer struct {
	broken     bool
	caching    bool
	leaky      bool
	open       int
	mu         sync.Mutex
	balance    []int64 // index id-1
	txs        int64
	cache      map[int64]int64
	statements int64
	strings    stringServer
}

var (
	newClientPath = regexp.MustCompile(`^/client/new/([^/]*)$`)
	balancePath   = regexp.MustCompile(`^/client/([^/]*)/balance$`)
	digits16      = regexp.MustCompile(`^[0-9]{1,16}$`)
	dotSegment    = regexp.MustCompile(`(^|/)\.\.?(/|$)`)
)

// pathInt parses a path parameter by the contract's rules.
func pathInt(s string, lo, hi int64) (int64, bool) {
	if !digits16.MatchString(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= lo && n <= hi
}

// jsonInt reads a field as I-JSON does: a double, integral, in range.
func jsonInt(m map[string]any, k string, lo, hi int64) (int64, bool) {
	f, ok := m[k].(float64)
	if !ok || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, false
	}
	return int64(f), true
}

func (b *bankServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
		b.strings.mu.Lock()
		b.strings.requests[[2]string{route, "x"}]++
		b.strings.mu.Unlock()
	}
	switch {
	case newClientPath.MatchString(p):
		count("/client/new/{balance}")
		if !allow("POST") {
			return
		}
		v, ok := pathInt(newClientPath.FindStringSubmatch(p)[1], 0, 1e12)
		if !ok {
			fail(w, 400, "balance must be an integer in 0 .. 10^12")
			return
		}
		b.mu.Lock()
		b.statements++
		b.balance = append(b.balance, v)
		id := len(b.balance)
		b.mu.Unlock()
		writeJSON(w, 200, map[string]int64{"id": int64(id), "balance": v})
	case balancePath.MatchString(p):
		count("/client/{id}/balance")
		if !allow("GET") {
			return
		}
		id, ok := pathInt(balancePath.FindStringSubmatch(p)[1], 1, maxID)
		if !ok {
			fail(w, 400, "bad id")
			return
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if v, ok := b.cache[id]; ok && b.caching {
			writeJSON(w, 200, map[string]int64{"balance": v})
			return
		}
		b.statements++
		if id > int64(len(b.balance)) {
			fail(w, 404, "no such client")
			return
		}
		if b.cache == nil {
			b.cache = map[int64]int64{}
		}
		b.cache[id] = b.balance[id-1]
		writeJSON(w, 200, map[string]int64{"balance": b.balance[id-1]})
	case p == "/transaction":
		count("/transaction")
		if !allow("POST") {
			return
		}
		b.transfer(w, r)
	default:
		b.strings.ServeHTTP(w, r)
	}
}

func (b *bankServer) transfer(w http.ResponseWriter, r *http.Request) {
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
	from, ok1 := jsonInt(m, "from_client_id", 1, maxID)
	to, ok2 := jsonInt(m, "to_client_id", 1, maxID)
	amount, ok3 := jsonInt(m, "amount", 1, 1e12)
	if !ok1 || !ok2 || !ok3 || from == to {
		fail(w, 400, "bad transfer")
		return
	}
	b.mu.Lock()
	b.statements++
	clear(b.cache)
	n := int64(len(b.balance))
	if from > n || to > n {
		b.mu.Unlock()
		fail(w, 404, "no such client")
		return
	}
	if b.leaky {
		b.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		b.mu.Lock()
		if r.Context().Err() != nil {
			b.open++
			b.mu.Unlock()
			return
		}
	}
	if b.broken {
		// Read, yield, write: concurrent transfers overwrite each other.
		f, t := b.balance[from-1], b.balance[to-1]
		b.mu.Unlock()
		runtime.Gosched()
		b.mu.Lock()
		b.balance[from-1], b.balance[to-1] = f-amount, t+amount
	} else {
		if b.balance[from-1] < amount {
			b.mu.Unlock()
			fail(w, 409, "insufficient funds")
			return
		}
		b.balance[from-1] -= amount
		b.balance[to-1] += amount
	}
	b.txs++
	id := b.txs
	b.mu.Unlock()
	writeJSON(w, 200, map[string]int64{"id": id, "from_client_id": from, "to_client_id": to, "amount": amount})
}

// bankResults runs the suite's bank checks against b.
func bankResults(t *testing.T, b *bankServer) map[string]Result {
	b.strings.requests = map[[2]string]int{}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	got := map[string]Result{}
	statements := func(context.Context, string) (int64, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.statements, nil
	}
	open := func(context.Context, string) (int, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.open, nil
	}
	Run(context.Background(), Target{BaseURL: srv.URL, Workloads: []string{"bank"}, Statements: statements, OpenTransactions: open}, func(r Result) {
		if r.Workload == "bank" {
			got[r.Check] = r
		}
	})
	return got
}

func TestBankCorrectServerPasses(t *testing.T) {
	got := bankResults(t, &bankServer{})
	if len(got) < 80 {
		t.Errorf("only %d bank checks ran", len(got))
	}
	for _, r := range got {
		if r.Status == Fail || (r.Status == Skip && !strings.Contains(r.Detail, "hooks")) {
			t.Errorf("%s: %v on a correct bank: %s\n%s\n%s", r.Check, r.Status, r.Detail, trunc(r.Request, 400), trunc(r.Response, 400))
		}
	}
}

// TestBankCachingServerFails: a bank that answers balances right, but from
// a cache, fails the statement count and nothing else.
func TestBankCachingServerFails(t *testing.T) {
	got := bankResults(t, &bankServer{caching: true})
	for name, r := range got {
		want := Pass
		if strings.Contains(name, "come from the database") {
			want = Fail
			if !strings.Contains(r.Detail, "cache") {
				t.Errorf("%s: the failure does not say why: %s", name, r.Detail)
			}
		}
		if r.Status != want && !(r.Status == Skip && strings.Contains(r.Detail, "hooks")) {
			t.Errorf("%s: %v on a caching bank, want %v: %s", name, r.Status, want, r.Detail)
		}
	}
	if _, ok := got["bank/balances come from the database (5 reads, at least 5 statements)"]; !ok {
		t.Error("the statement-count check did not run")
	}
}

func TestBankBrokenServerFailsExactly(t *testing.T) {
	want := []string{
		// No overdraft check.
		"bank/transfer from an emptied balance -> 409",
		"bank/transfer insufficient funds -> 409",
		"bank/transfer amount 1e12 over the balance -> 409",
		"bank/keep-alive: 400, 404, 409 then 200 on one connection",
		// Lost updates (and no 409s) under concurrency.
		"bank/concurrent transfers keep every invariant",
	}
	got := bankResults(t, &bankServer{broken: true})
	var failed []string
	for name, r := range got {
		// Lost updates may or may not show in the sum of the cut transfers.
		if r.Status == Fail && name != cutCheck {
			failed = append(failed, name)
		}
	}
	for _, n := range want {
		if !slices.Contains(failed, n) {
			t.Errorf("%q passed on the broken bank, want it to fail", n)
		}
	}
	for _, n := range failed {
		if !slices.Contains(want, n) {
			t.Errorf("%q failed on the broken bank, want it to pass: %s", n, got[n].Detail)
		}
	}
	if d := got["bank/concurrent transfers keep every invariant"].Detail; !strings.Contains(d, "want") {
		t.Errorf("the concurrency failure does not say what was wrong: %s", d)
	}
}

const cutCheck = "bank/transfers cut mid-flight leave no transaction open"

// TestBankLeakyServerFails: a bank that leaves the transaction of a
// transfer whose client left open fails the cut-transfers check, which
// says why, and nothing else.
func TestBankLeakyServerFails(t *testing.T) {
	got := bankResults(t, &bankServer{leaky: true})
	r, ok := got[cutCheck]
	if !ok {
		t.Fatalf("%q did not run", cutCheck)
	}
	if r.Status != Fail || !strings.Contains(r.Detail, "inside a transaction") {
		t.Errorf("%s: %v (%s), want a failure naming the open transactions", cutCheck, r.Status, r.Detail)
	}
	for name, r := range got {
		if name != cutCheck && r.Status == Fail {
			t.Errorf("%s failed on the leaky bank, want only %q to: %s", name, cutCheck, r.Detail)
		}
	}
}
