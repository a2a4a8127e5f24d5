package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/showdownlab/showdown/load"
)

// fakeBank is this test's in-memory bank: the three endpoints of
// workloads/bank/README.md, enough to run the default scenarios. skim,
// when set, makes every transfer take that much more from the payer (a
// broken bank).
type fakeBank struct {
	mu       sync.Mutex
	balances []int64 // balances[id-1]
	log      []string
	skim     int64
}

func (b *fakeBank) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, `{"error":"read"}`, 400)
		return
	}
	b.log = append(b.log, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+string(body)))
	w.Header().Set("Content-Type", "application/json")
	reply := func(status int, v any) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "client" && parts[1] == "new":
		bal, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil {
			reply(400, map[string]string{"error": "bad balance"})
			return
		}
		b.balances = append(b.balances, bal)
		reply(200, map[string]int64{"id": int64(len(b.balances)), "balance": bal})
	case r.Method == "GET" && len(parts) == 3 && parts[0] == "client" && parts[2] == "balance":
		id, _ := strconv.Atoi(parts[1])
		if id < 1 || id > len(b.balances) {
			reply(404, map[string]string{"error": "no such client"})
			return
		}
		reply(200, map[string]int64{"balance": b.balances[id-1]})
	case r.Method == "POST" && r.URL.Path == "/transaction":
		var t struct{ FromClientID, ToClientID, Amount int64 }
		dec := map[string]*int64{"from_client_id": &t.FromClientID, "to_client_id": &t.ToClientID, "amount": &t.Amount}
		var m map[string]json.Number
		d := json.NewDecoder(strings.NewReader(string(body)))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			reply(400, map[string]string{"error": "malformed JSON"})
			return
		}
		for k, p := range dec {
			n, err := m[k].Int64()
			if err != nil {
				reply(400, map[string]string{"error": k + " must be an integer"})
				return
			}
			*p = n
		}
		n := int64(len(b.balances))
		if t.FromClientID < 1 || t.FromClientID > n || t.ToClientID < 1 || t.ToClientID > n {
			reply(404, map[string]string{"error": "no such client"})
			return
		}
		if b.balances[t.FromClientID-1] < t.Amount {
			reply(409, map[string]string{"error": "insufficient funds"})
			return
		}
		b.balances[t.FromClientID-1] -= t.Amount + b.skim
		b.balances[t.ToClientID-1] += t.Amount
		reply(200, map[string]int64{"id": 1, "from_client_id": t.FromClientID, "to_client_id": t.ToClientID, "amount": t.Amount})
	default:
		reply(404, map[string]string{"error": "not found"})
	}
}

// runIteration runs one iteration of u over HTTP and returns the index of
// the step that failed (or -1) and its error.
func runIteration(t *testing.T, sc load.Scenario, u load.User, iter int) (int, error) {
	var req load.Request
	for i := range sc.Steps() {
		req.Reset()
		if err := u.Request(iter, i, &req); err != nil {
			return i, err
		}
		resp, err := send(context.Background(), http.DefaultClient, &req)
		if err != nil {
			return i, fmt.Errorf("transport: %w", err)
		}
		if err := u.Check(iter, i, resp); err != nil {
			return i, err
		}
	}
	return -1, nil
}

func loadBank(t *testing.T, name, base string) *Scenario {
	t.Helper()
	sc, err := Load(filepath.Join("..", "..", "workloads", "bank", name), Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestBankRematchAgainstFakeBank(t *testing.T) {
	bank := &fakeBank{}
	srv := httptest.NewServer(bank)
	defer srv.Close()
	sc := loadBank(t, "scenario.yaml", srv.URL)
	u := sc.NewUser(1)
	for iter := 0; iter < 2; iter++ {
		if step, err := runIteration(t, sc, u, iter); err != nil {
			t.Fatalf("iteration %d, step %d (%s): %v", iter, step, sc.Steps()[step], err)
		}
	}
	want := []string{
		"POST /client/new/400",
		"POST /client/new/300",
		"GET /client/1/balance",
		"GET /client/2/balance",
		`POST /transaction {"from_client_id":1,"to_client_id":2,"amount":10}`,
		"GET /client/1/balance",
		"GET /client/2/balance",
		"POST /client/new/400",
		"POST /client/new/300",
		"GET /client/3/balance",
		"GET /client/4/balance",
		`POST /transaction {"from_client_id":3,"to_client_id":4,"amount":10}`,
		"GET /client/3/balance",
		"GET /client/4/balance",
	}
	if got := strings.Join(bank.log, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if got, want := fmt.Sprint(bank.balances), "[390 310 390 310]"; got != want {
		t.Errorf("balances = %s, want %s", got, want)
	}
}

func TestBankRematchBrokenBank(t *testing.T) {
	bank := &fakeBank{skim: 10}
	srv := httptest.NewServer(bank)
	defer srv.Close()
	sc := loadBank(t, "scenario.yaml", srv.URL)
	step, err := runIteration(t, sc, sc.NewUser(1), 0)
	var ce *load.CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *load.CheckError", err)
	}
	if got, want := sc.Steps()[step], "balance of client 1 after"; got != want {
		t.Errorf("failed step = %q, want %q", got, want)
	}
	if got, want := ce.Reason, "$.balance: got 380, want 390"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
}

func TestBankOverdraftReason(t *testing.T) {
	// A payer with nothing left: the transfer step fails with the status and
	// the contract's error message.
	bank := &fakeBank{balances: []int64{0, 0}}
	srv := httptest.NewServer(bank)
	defer srv.Close()
	sc := loadBank(t, "scenario-2018.yaml", srv.URL)
	step, err := runIteration(t, sc, sc.NewUser(1), 0)
	if got, want := fmt.Sprint(step, " ", err), "1 status 409 (insufficient funds), want 2xx"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBank2018Setup(t *testing.T) {
	bank := &fakeBank{}
	srv := httptest.NewServer(bank)
	defer srv.Close()
	sc := loadBank(t, "scenario-2018.yaml", srv.URL)
	if !sc.HasSetup() {
		t.Fatal("HasSetup() = false, want true")
	}
	if err := sc.RunSetup(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		if step, err := runIteration(t, sc, sc.NewUser(n), 0); err != nil {
			t.Fatalf("user %d, step %d: %v", n, step, err)
		}
	}
	if got, want := fmt.Sprint(bank.balances), "[999999999998 2 100 100]"; got != want {
		t.Errorf("balances = %s, want %s", got, want)
	}
	// A second setup on the same database gets ids 5 and 6, not 1 and 2.
	if err := sc.RunSetup(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "$.id: got 5, want 1") {
		t.Errorf("second RunSetup error = %v, want $.id: got 5, want 1", err)
	}
}

func TestBankConcurrentUsers(t *testing.T) {
	// Users share the parsed scenario and nothing else (run with -race).
	bank := &fakeBank{}
	srv := httptest.NewServer(bank)
	defer srv.Close()
	sc := loadBank(t, "scenario.yaml", srv.URL)
	const users, iters = 4, 3
	errs := make(chan error, users)
	for n := 1; n <= users; n++ {
		go func() {
			u := sc.NewUser(n)
			for i := 0; i < iters; i++ {
				if step, err := runIteration(t, sc, u, i); err != nil {
					errs <- fmt.Errorf("user %d iteration %d step %d: %w", n, i, step, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for n := 0; n < users; n++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	count := map[int64]int{}
	for _, b := range bank.balances {
		count[b]++
	}
	if count[390] != users*iters || count[310] != users*iters || len(count) != 2 {
		t.Errorf("balances %v, want %d of 390 and of 310", count, users*iters)
	}
}
