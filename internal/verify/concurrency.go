package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"
)

// The bounds of the bank concurrency check.
const (
	concClients  = 10              // clients transferring between each other
	concDeposit  = 1000            // each client's initial deposit
	concWorkers  = 50              // concurrent transfer loops
	concDuration = 3 * time.Second // how long they run
	concMaxReqs  = 6000            // and at most this many transfers in all
	concMaxAmt   = 300             // amounts are drawn from 1 .. concMaxAmt
)

// checkBankConcurrency runs random transfers between fresh clients from
// many workers at once, then proves that no money was created or lost, no
// balance went negative, every balance is explained by the transfers the
// service accepted, and no transfer failed except by 409.
func checkBankConcurrency(ctx context.Context, s *session) error {
	ids := make([]int64, concClients)
	for i := range ids {
		id, err := s.newClient(ctx, concDeposit)
		if err != nil {
			return fmt.Errorf("creating client %d of %d: %v", i+1, concClients, err)
		}
		ids[i] = id
	}
	var (
		mu       sync.Mutex
		delta    = map[int64]int64{}
		accepted int
		refused  int // 409s
		failures int
		sent     int
		first    error
		firstEx  exchange
	)
	fail := func(err error, ex exchange) {
		mu.Lock()
		defer mu.Unlock()
		failures++
		if first == nil {
			first, firstEx = err, ex
		}
	}
	// Requests are never cut at the deadline: one cut after the service
	// moved the money would make the books look wrong. The loop stops
	// starting new ones instead.
	deadline := time.Now().Add(concDuration)
	var wg sync.WaitGroup
	for range concWorkers {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				mu.Lock()
				if sent >= concMaxReqs || first != nil {
					mu.Unlock()
					return
				}
				sent++
				mu.Unlock()
				i := rand.IntN(concClients)
				j := (i + 1 + rand.IntN(concClients-1)) % concClients
				from, to, amount := ids[i], ids[j], rand.Int64N(concMaxAmt)+1
				status, body, ex, err := s.transfer(ctx, from, to, amount)
				if err != nil {
					fail(err, ex)
					return
				}
				switch status {
				case 200:
					var got struct {
						ID     int64 `json:"id"`
						From   int64 `json:"from_client_id"`
						To     int64 `json:"to_client_id"`
						Amount int64 `json:"amount"`
					}
					if err := json.Unmarshal(body, &got); err != nil || got.From != from || got.To != to || got.Amount != amount || got.ID < 1 {
						fail(fmt.Errorf("a 200 whose body does not echo the transfer %d -> %d of %d", from, to, amount), ex)
						// The money moved anyway: count it.
					}
					mu.Lock()
					accepted++
					delta[from] -= amount
					delta[to] += amount
					mu.Unlock()
				case 409:
					mu.Lock()
					refused++
					mu.Unlock()
				default:
					fail(fmt.Errorf("transfer %d -> %d of %d: status %d, want 200 or 409 (deadlock? lost update?)", from, to, amount, status), ex)
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		s.last = firstEx
		return fmt.Errorf("%v (%d of %d transfers failed)", first, failures, sent)
	}
	var sum int64
	var problems []string
	for _, id := range ids {
		got, err := s.balance(ctx, id)
		if err != nil {
			return err
		}
		want := concDeposit + delta[id]
		sum += got
		if got < 0 {
			problems = append(problems, fmt.Sprintf("client %d has a negative balance %d", id, got))
		}
		if got != want {
			problems = append(problems, fmt.Sprintf("client %d has %d, want %d (1000 + in - out over the transfers answered 200)", id, got, want))
		}
	}
	if sum != concClients*concDeposit {
		problems = append(problems, fmt.Sprintf("the clients hold %d in all, want %d: money was created or lost", sum, concClients*concDeposit))
	}
	if accepted == 0 {
		problems = append(problems, "no transfer succeeded")
	}
	if len(problems) > 0 {
		return fmt.Errorf("after %d transfers (%d answered 200, %d 409): %s", sent, accepted, refused, strings.Join(problems, "; "))
	}
	return passNote(fmt.Sprintf("%d transfers from %d workers: %d answered 200, %d 409; books balance", sent, concWorkers, accepted, refused))
}

// transfer posts one transfer over a kept-alive connection. The exchange
// is rendered only when the caller needs it, on failure.
func (s *session) transfer(ctx context.Context, from, to, amount int64) (int, []byte, exchange, error) {
	body := fmt.Sprintf(`{"from_client_id":%d,"to_client_id":%d,"amount":%d}`, from, to, amount)
	req, err := http.NewRequestWithContext(ctx, "POST", s.base+"/transaction", strings.NewReader(body))
	if err != nil {
		return 0, nil, exchange{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	ex := exchange{request: fmt.Sprintf("POST /transaction HTTP/1.1\nContent-Type: application/json\n\n%s", body)}
	resp, err := s.client.Do(req)
	if err != nil {
		ex.response = fmt.Sprintf("(no response: %v)", err)
		return 0, nil, ex, fmt.Errorf("transfer %d -> %d of %d: %v", from, to, amount, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if d, derr := httputil.DumpResponse(&http.Response{StatusCode: resp.StatusCode, Proto: resp.Proto, ProtoMajor: 1, ProtoMinor: 1, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(b))}, true); derr == nil {
		ex.response = dump(d)
	}
	if err != nil {
		return 0, nil, ex, fmt.Errorf("transfer %d -> %d of %d: reading the response: %v", from, to, amount, err)
	}
	return resp.StatusCode, b, ex, nil
}

// Bounds of the users concurrency check.
const (
	signupWorkers = 20
	signupMax     = 200
	signupTime    = 2 * time.Second
)

// checkUsersConcurrency creates users from many workers at once and
// proves each 201 got its own id and its own row: reading every id back
// gives the email that created it.
func checkUsersConcurrency(ctx context.Context, s *session) error {
	prefix := fmt.Sprintf("conc-%d-", time.Now().UnixNano())
	var (
		mu    sync.Mutex
		byID  = map[int64]string{}
		n     int
		first error
		ex    exchange
	)
	deadline := time.Now().Add(signupTime)
	var wg sync.WaitGroup
	for range signupWorkers {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				mu.Lock()
				if n >= signupMax || first != nil {
					mu.Unlock()
					return
				}
				n++
				email := fmt.Sprintf("%s%d@example.com", prefix, n)
				mu.Unlock()
				id, e, err := s.postUser(ctx, email)
				mu.Lock()
				if err != nil && first == nil {
					first, ex = err, e
				}
				if err == nil {
					if other, dup := byID[id]; dup && first == nil {
						first, ex = fmt.Errorf("%s and %s both got id %d", other, email, id), e
					}
					byID[id] = email
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first != nil {
		s.last = ex
		return first
	}
	if len(byID) == 0 {
		return errors.New("no user was created")
	}
	for id, email := range byID {
		if err := s.readUser(ctx, id, email); err != nil {
			return fmt.Errorf("after %d concurrent sign-ups: %v", len(byID), err)
		}
	}
	return passNote(fmt.Sprintf("%d users created by %d workers, each read back", len(byID), signupWorkers))
}

// postUser creates a user over a kept-alive connection.
func (s *session) postUser(ctx context.Context, email string) (int64, exchange, error) {
	body := fmt.Sprintf(`{"email":%q,"password":"p"}`, email)
	ex := exchange{request: "POST /user HTTP/1.1\nContent-Type: application/json\n\n" + body}
	req, err := http.NewRequestWithContext(ctx, "POST", s.base+"/user", strings.NewReader(body))
	if err != nil {
		return 0, ex, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		ex.response = fmt.Sprintf("(no response: %v)", err)
		return 0, ex, fmt.Errorf("POST /user: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	r := &response{status: resp.StatusCode, header: resp.Header, body: b}
	ex.response = r.dump()
	if err := (row{status: []int{201}, body: fields(map[string]any{"id": anyID})}).expect(r); err != nil {
		return 0, ex, fmt.Errorf("POST /user under concurrency: %v", err)
	}
	m, _ := r.object()
	id, _ := integer(m["id"])
	return id, ex, nil
}
