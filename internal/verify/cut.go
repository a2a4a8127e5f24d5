package verify

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// The bounds of the cut-transfers check.
const (
	cutWorkers   = 10                     // connections cut at once
	cutTransfers = 60                     // transfers cut in all
	cutMaxDelay  = 4 * time.Millisecond   // a transfer is cut 0 .. cutMaxDelay after it was sent
	cutSettle    = 5 * time.Second        // how long the transactions in flight may take to end
	cutAnswer    = 5 * time.Second        // how long the transfer after them may take
	cutDeposit   = 1000                   // each of the two clients' deposit
	cutPoll      = 100 * time.Millisecond // how often the open transactions are counted
)

// checkCutTransfers resets the connections of transfers while they are
// in flight (0 to a few milliseconds after each was sent, so that some
// are cut inside the service's BEGIN .. COMMIT), then wants: no session
// of the service's login left waiting inside a transaction (a pooled
// connection handed back between BEGIN and COMMIT keeps its row locks
// until the pool closes it, and every later transfer of those clients,
// and the lab's reset between levels, waits on them), a transfer between
// the same two clients answered within a few seconds, and their money
// intact (each cut transfer either happened or did not).
func checkCutTransfers(ctx context.Context, s *session) error {
	if s.t.OpenTransactions == nil {
		return skipError("needs the harness's OpenTransactions hook, which reads its database (showdown verify --service, or the lab)")
	}
	a, err := s.newClient(ctx, cutDeposit)
	if err != nil {
		return fmt.Errorf("creating the first client: %v", err)
	}
	b, err := s.newClient(ctx, cutDeposit)
	if err != nil {
		return fmt.Errorf("creating the second client: %v", err)
	}
	var (
		mu      sync.Mutex
		sent    int
		dialErr error
	)
	var wg sync.WaitGroup
	for w := range cutWorkers {
		wg.Go(func() {
			for i := w; i < cutTransfers && ctx.Err() == nil; i += cutWorkers {
				from, to := a, b
				if i%2 == 1 {
					from, to = b, a
				}
				if err := s.cutTransfer(ctx, from, to, time.Duration(rand.Int64N(int64(cutMaxDelay)))); err != nil {
					mu.Lock()
					dialErr = err
					mu.Unlock()
					return
				}
				mu.Lock()
				sent++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if dialErr != nil {
		return fmt.Errorf("sending the transfers to cut: %v", dialErr)
	}
	// The transfers in flight finish (or roll back) by themselves; a
	// transaction still open after cutSettle waits for a client that left.
	open := 0
	for deadline := time.Now().Add(cutSettle); ; {
		if open, err = s.t.OpenTransactions(ctx, "bank"); err != nil {
			return fmt.Errorf("counting the service's open transactions: %v", err)
		}
		if open == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(cutPoll)
	}
	if open > 0 {
		return fmt.Errorf("%d of the service's database sessions still inside a transaction %s after %d transfers were cut mid-flight: "+
			"a request dropped between BEGIN and COMMIT gave its connection back to the pool inside the transaction "+
			"(it keeps the clients' row locks; roll back, or close the connection, when a request is dropped)", open, cutSettle, sent)
	}
	tctx, cancel := context.WithTimeout(ctx, cutAnswer)
	status, _, ex, err := s.transfer(tctx, a, b, 1)
	cancel()
	if err != nil {
		s.last = ex
		return fmt.Errorf("a transfer between the two clients after %d cut ones: %v (are their rows still locked?)", sent, err)
	}
	if status != 200 {
		s.last = ex
		return fmt.Errorf("a transfer of 1 between the two clients after %d cut ones: status %d, want 200", sent, status)
	}
	// Cut transfers the service had queued may still run: the sum of two
	// balances read one after the other is right once they are done.
	var ba, bb int64
	for deadline := time.Now().Add(cutSettle); ; {
		if ba, err = s.balance(ctx, a); err != nil {
			return err
		}
		if bb, err = s.balance(ctx, b); err != nil {
			return err
		}
		if ba+bb == 2*cutDeposit || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(cutPoll)
	}
	if ba+bb != 2*cutDeposit || ba < 0 || bb < 0 {
		return fmt.Errorf("%s after %d cut transfers the two clients hold %d and %d, want %d in all and neither negative", cutSettle, sent, ba, bb, 2*cutDeposit)
	}
	return nil
}

// cutTransfer sends a transfer of 1 on a new connection and resets the
// connection (RST, not FIN) after delay, without reading the answer.
func (s *session) cutTransfer(ctx context.Context, from, to int64, delay time.Duration) error {
	d := net.Dialer{Timeout: 3 * time.Second}
	c, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	body := fmt.Sprintf(`{"from_client_id":%d,"to_client_id":%d,"amount":1}`, from, to)
	req := fmt.Sprintf("POST /transaction HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", s.addr, len(body), body)
	_ = c.SetWriteDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		c.Close()
		return err
	}
	time.Sleep(delay)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	return c.Close()
}
