package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/results"
)

// run is one test in progress.
type run struct {
	t     Target
	o     Options
	start time.Time
	hc    *http.Client

	mu       sync.Mutex
	attempts []*Attempt
	snaps    []Snapshot
	probeSeq int
}

func (r *run) since() time.Duration { return time.Since(r.start) }

func (r *run) say(format string, args ...any) {
	fmt.Fprintf(r.o.Progress, "%s: %7.1fs "+format+"\n", append([]any{r.t.Stack, r.since().Seconds()}, args...)...)
}

// Run creates the accounts through the service, runs workers and readers
// while each fault of o.Faults is injected in turn, then reads the ledger
// and judges. An error means the test could not be run (the accounts could
// not be created, the ledger not read); what the service did wrong is in
// the verdict.
func Run(ctx context.Context, t Target, o Options) (*results.FaultTest, error) {
	o = o.withDefaults()
	r := &run{t: t, o: o, hc: newClient(o)}
	defer r.hc.CloseIdleConnections()

	ids, err := r.createAccounts(ctx)
	if err != nil {
		return nil, err
	}
	// The first two accounts are the held transfer's (service-term); the
	// workers use the others, so only that transfer waits on the locks.
	probe, accounts := ids[:2], ids[2:]

	before, err := r.total(ctx)
	if err != nil {
		return nil, fmt.Errorf("sum the balances before the test: %w", err)
	}

	r.start = time.Now()
	wctx, stopWorkers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := 0; w < o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(wctx, w, accounts)
		}()
	}
	rctx, stopReaders := context.WithCancel(ctx)
	var rg sync.WaitGroup
	for i := 0; i < DefaultReaders; i++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			r.read(rctx)
		}()
	}

	var phases []*Phase
	for _, f := range o.Faults {
		if ctx.Err() != nil {
			break
		}
		p := &Phase{Fault: f, Start: r.since()}
		phases = append(phases, p)
		sleep(ctx, o.PerFault/5)
		p.At = r.since()
		r.say("%s", f)
		p.Problems = append(p.Problems, r.inject(ctx, f, probe)...)
		r.say("%s done", f)
		sleep(ctx, p.Start+o.PerFault-r.since())
		// A window too short for the recovery waits for its first 2xx.
		for deadline := r.since() + DefaultRecoveryLimit; ctx.Err() == nil && !r.answeredAfter(p.At) && r.since() < deadline; {
			sleep(ctx, 100*time.Millisecond)
		}
	}
	stopWorkers()
	wg.Wait()
	end := r.since()
	for i, p := range phases {
		if i+1 < len(phases) {
			p.End = phases[i+1].Start
		} else {
			p.End = end
		}
	}
	stopReaders()
	rg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	after, err := r.total(ctx)
	if err != nil {
		return nil, fmt.Errorf("sum the balances after the test: %w", err)
	}
	ledger, err := db.BankTransfers(ctx, t.Bank)
	if err != nil {
		return nil, err
	}
	ft := Judge(Evidence{Stack: t.Stack, Phases: phases, Attempts: r.attempts, Ledger: ledger,
		Snapshots: r.snaps, TotalBefore: before, TotalAfter: after})
	ft.Durability, ft.Workers, ft.PerFault = t.Durability, o.Workers, o.PerFault
	return ft, nil
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// answeredAfter reports whether a transfer sent at or after at has been
// answered 2xx.
func (r *run) answeredAfter(at time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.attempts) - 1; i >= 0; i-- {
		a := r.attempts[i]
		if a.Sent >= at && a.Status >= 200 && a.Status < 300 {
			return true
		}
	}
	return false
}

// newClient is the test's own HTTP client: bounded dial and answer
// times, keep-alive, and never a second try of a POST.
func newClient(o Options) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConns:        o.Workers + 4,
		MaxIdleConnsPerHost: o.Workers + 4,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: o.Timeout}
}

// createAccounts creates o.Accounts+2 accounts through the service.
func (r *run) createAccounts(ctx context.Context) ([]int64, error) {
	var ids []int64
	for i := 0; i < r.o.Accounts+2; i++ {
		var id int64
		var last error
		// A service just started may still refuse for a moment.
		for try := 0; try < 20; try++ {
			id, last = r.createAccount(ctx)
			if last == nil || ctx.Err() != nil {
				break
			}
			sleep(ctx, 250*time.Millisecond)
		}
		if last != nil {
			return nil, fmt.Errorf("create account %d: %w", i+1, last)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (r *run) createAccount(ctx context.Context) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/client/new/%d", r.t.BaseURL, startBalance), nil)
	if err != nil {
		return 0, err
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("POST /client/new/%d: status %d: %s", int64(startBalance), resp.StatusCode, body)
	}
	var c struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(body, &c); err != nil || c.ID <= 0 {
		return 0, fmt.Errorf("POST /client/new/%d: no id in %s", int64(startBalance), body)
	}
	return c.ID, nil
}

// total sums the balances, trying for a few seconds (the database may be
// recovering).
func (r *run) total(ctx context.Context) (int64, error) {
	var last error
	for try := 0; try < 20; try++ {
		br, err := db.OpenBankReader(ctx, r.t.Bank)
		if err == nil {
			total, _, err := br.Total(ctx)
			br.Close()
			if err == nil {
				return total, nil
			}
		}
		last = err
		sleep(ctx, 250*time.Millisecond)
	}
	return 0, last
}

// work sends transfers back to back between random accounts until ctx
// ends.
func (r *run) work(ctx context.Context, w int, accounts []int64) {
	rng := rand.New(rand.NewPCG(uint64(w), 13))
	for seq := 0; ctx.Err() == nil; seq++ {
		i := rng.IntN(len(accounts))
		j := rng.IntN(len(accounts) - 1)
		if j >= i {
			j++
		}
		a := r.send(ctx, w, seq, accounts[i], accounts[j])
		if a.Status < 200 || a.Status >= 300 {
			// Not a flood of refusals while the service is down.
			sleep(ctx, 20*time.Millisecond)
		}
	}
}

// amount encodes worker and sequence: unique across the run.
func (r *run) amount(w, seq int) int64 {
	return 1 + int64(w) + int64(r.o.Workers+1)*int64(seq)
}

// send sends one transfer and records it, whatever happens. ctx ending
// does not cut a request already sent: only the client's timeout does.
func (r *run) send(ctx context.Context, w, seq int, from, to int64) *Attempt {
	a := &Attempt{Worker: w, Seq: seq, From: from, To: to, Amount: r.amount(w, seq)}
	body := fmt.Sprintf(`{"from_client_id":%d,"to_client_id":%d,"amount":%d}`, from, to, a.Amount)
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, r.t.BaseURL+"/transaction", bytes.NewReader([]byte(body)))
	if err != nil {
		panic(err) // a malformed URL of our own
	}
	req.GetBody = nil // never resent, even when nothing was written
	req.Header.Set("Content-Type", "application/json")
	a.Sent = r.since()
	resp, err := r.hc.Do(req)
	if err == nil {
		// An answer counts once whole: a body cut short is no answer.
		var head strings.Builder
		_, rerr := io.Copy(io.Discard, io.TeeReader(io.LimitReader(resp.Body, 1<<16), &prefix{&head, answerExcerpt}))
		resp.Body.Close()
		if rerr == nil {
			a.Status = resp.StatusCode
			if a.Status/100 != 2 {
				a.Answer = head.String()
			}
		}
	} else if errors.Is(err, syscall.ECONNREFUSED) {
		a.Refused = true
	}
	a.Done = r.since()
	r.mu.Lock()
	r.attempts = append(r.attempts, a)
	r.mu.Unlock()
	return a
}

// read sums the balances in one transaction, again and again, until ctx
// ends; a failed read (the database down) is retried on a new connection.
func (r *run) read(ctx context.Context) {
	var br *db.BankReader
	defer func() {
		if br != nil {
			br.Close()
		}
	}()
	for ctx.Err() == nil {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if br == nil {
			var err error
			if br, err = db.OpenBankReader(qctx, r.t.Bank); err != nil {
				cancel()
				br = nil
				sleep(ctx, 100*time.Millisecond)
				continue
			}
		}
		total, _, err := br.Total(qctx)
		cancel()
		if err != nil {
			br.Close()
			br = nil
			sleep(ctx, 100*time.Millisecond)
			continue
		}
		r.mu.Lock()
		r.snaps = append(r.snaps, Snapshot{At: r.since(), Total: total})
		r.mu.Unlock()
		sleep(ctx, 50*time.Millisecond)
	}
}

// inject injects fault f and brings the stack back; it returns what went
// wrong on the way.
func (r *run) inject(ctx context.Context, f Fault, probe []int64) []string {
	var problems []string
	fail := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	switch f {
	case ServiceKill:
		if err := r.t.Service.Kill(); err != nil {
			fail("kill -9: %v", err)
		}
		if err := r.t.Service.Restart(ctx); err != nil {
			fail("restart after kill -9: %v", err)
		}
	case DatabasePause:
		if err := r.t.Database.Pause(); err != nil {
			fail("SIGSTOP of the database: %v", err)
		}
		sleep(ctx, r.o.Pause)
		if err := r.t.Database.Resume(); err != nil {
			fail("SIGCONT of the database: %v", err)
		}
	case DatabaseRestart:
		if err := r.t.Database.Restart(ctx); err != nil {
			fail("restart of the database: %v", err)
		}
	case DatabaseCrash:
		if err := r.t.Database.Crash(); err != nil {
			fail("kill -9 of the database: %v", err)
		}
		if err := r.t.Database.Up(ctx); err != nil {
			fail("start of the database after kill -9: %v", err)
		}
	case ServiceTerm:
		problems = r.terminate(ctx, probe)
	default:
		fail("unknown fault %q", f)
	}
	return problems
}

// terminate sends SIGTERM while a transfer waits, inside its transaction,
// for row locks the test holds: the transfer must still be answered 200,
// and the service exit 0 within 10 s; then it is started again.
func (r *run) terminate(ctx context.Context, probe []int64) []string {
	var problems []string
	fail := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	restart := func() {
		if err := r.t.Service.Restart(ctx); err != nil {
			fail("restart after SIGTERM: %v", err)
		}
	}
	lock, err := db.LockClients(ctx, r.t.Bank, probe...)
	if err != nil {
		fail("hold the accounts' rows: %v", err)
		return problems
	}
	released := false
	release := func() {
		if !released {
			released = true
			if err := lock.Release(context.WithoutCancel(ctx)); err != nil {
				fail("%v", err)
			}
		}
	}
	defer release()

	r.mu.Lock()
	seq := r.probeSeq
	r.probeSeq++
	r.mu.Unlock()
	answer := make(chan *Attempt, 1)
	go func() { answer <- r.send(ctx, r.o.Workers, seq, probe[0], probe[1]) }()
	waiting := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; {
		if n, err := lock.Waiters(ctx); err == nil && n > 0 {
			waiting = true
			break
		}
		sleep(ctx, 20*time.Millisecond)
	}
	if !waiting {
		fail("the held transfer never waited for the accounts' row locks")
	}
	signalled := time.Now()
	if err := r.t.Service.Terminate(); err != nil {
		fail("SIGTERM: %v", err)
		release()
		restart()
		return problems
	}
	sleep(ctx, termHold)
	release()
	a := <-answer
	if a.Status != http.StatusOK {
		if a.Status == 0 {
			fail("the transfer open at SIGTERM got no answer (refused %v)", a.Refused)
		} else {
			fail("the transfer open at SIGTERM was answered %d %s, want 200", a.Status, strconv.Quote(a.Answer))
		}
	}
	wctx, cancel := context.WithTimeout(ctx, termExitLimit+5*time.Second)
	code, err := r.t.Service.Wait(wctx)
	cancel()
	took := time.Since(signalled)
	switch {
	case err != nil:
		fail("no exit within %v of SIGTERM; killed", took.Round(time.Second))
		if err := r.t.Service.Kill(); err != nil {
			fail("kill -9: %v", err)
		}
	case code != 0:
		fail("exit code %d after SIGTERM, want 0", code)
	case took > termExitLimit:
		fail("exit %v after SIGTERM, the contract allows %v", took.Round(100*time.Millisecond), termExitLimit)
	}
	restart()
	return problems
}

// prefix keeps the first n bytes written to it in b and drops the rest.
type prefix struct {
	b *strings.Builder
	n int
}

func (p *prefix) Write(data []byte) (int, error) {
	if room := p.n - p.b.Len(); room > 0 {
		p.b.Write(data[:min(room, len(data))])
	}
	return len(data), nil
}
