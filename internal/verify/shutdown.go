package verify

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bounds of the graceful shutdown check.
const (
	shutLoopers   = 16                     // connections sending requests back to back
	shutSlow      = 4                      // requests held open across the signal
	shutWarmup    = 500 * time.Millisecond // load before the signal, at least
	shutHold      = 300 * time.Millisecond // how long after the signal a held request's body is sent
	shutContinue  = 3 * time.Second        // wait for a held request's 100 Continue, at most
	shutAfter     = 5 * time.Second        // how long load continues after the signal, at most
	shutExitLimit = 10 * time.Second       // the contract: exit within 10 s of SIGTERM
	shutExitWait  = 20 * time.Second       // how long we wait for the exit at all
)

// Subtleness ahead. "Every request in flight at SIGTERM completes" needs
// requests the server surely holds when the signal comes; timing cannot
// tell (on a loaded 2-core machine a server may not read a request for a
// second). So the held requests send their headers with Expect:
// 100-continue and wait for the server's 100 Continue, which proves a
// request in progress (Go sends it when the handler reads the body, Node
// and Tomcat once the headers are in); only then comes the signal, and the
// body 300 ms after it. Each must get a complete 2xx.
//
// The loop requests, back to back on kept-alive connections, carry the
// rest: no answer during shutdown may be anything but a complete 2xx, and
// a response cut short is a failure. A loop request closed before any
// byte of its answer is the keep-alive race of HTTP/1.1 (the server closed
// a connection it saw idle while our request sat unread in the socket):
// it is counted, not failed, as is a dial refused after the signal.

// shutdownLoad is what the shutdown check sends: loop requests back to
// back, and held requests whose body is sent after the signal.
type shutdownLoad struct {
	loop request
	slow *request // the held request; nil: the workloads have no POST to hold open
}

// pickLoad chooses requests that need no state, or creates the state they need.
func pickLoad(ctx context.Context, s *session) (shutdownLoad, error) {
	has := func(w string) bool { return slices.Contains(s.t.Workloads, w) }
	switch {
	case has("string"):
		r := post("/uppercase", `{"s":"`+strings.Repeat("graceful shutdown ", 2000)+`"}`)
		return shutdownLoad{loop: r, slow: &r}, nil
	case has("bank"):
		a, err := s.newClient(ctx, 1000000000000)
		if err != nil {
			return shutdownLoad{}, fmt.Errorf("creating a client: %v", err)
		}
		b, err := s.newClient(ctx, 0)
		if err != nil {
			return shutdownLoad{}, fmt.Errorf("creating a client: %v", err)
		}
		slow := post("/transaction", fmt.Sprintf(`{"from_client_id":%d,"to_client_id":%d,"amount":1}`, a, b))
		return shutdownLoad{loop: get(fmt.Sprintf("/client/%d/balance", a)), slow: &slow}, nil
	case has("users"):
		id, err := s.createUser(ctx, `{"email":"shutdown@example.com","password":"p"}`)
		if err != nil {
			return shutdownLoad{}, fmt.Errorf("creating a user: %v", err)
		}
		slow := post("/user", `{"email":"shutdown-slow@example.com","password":"p"}`)
		return shutdownLoad{loop: get(fmt.Sprintf("/user/%d", id)), slow: &slow}, nil
	case has("sku") && len(s.t.KnownSKUs) > 0:
		return shutdownLoad{loop: get(fmt.Sprintf("/sku/%d", s.t.KnownSKUs[0]))}, nil
	}
	return shutdownLoad{loop: get("/health")}, nil
}

// shutdownStages sends SIGTERM under load and checks that no request in
// flight is lost and that the process exits 0 in time. It runs last: it
// leaves the service stopped.
func shutdownStages(t Target) []stage {
	names := []string{
		"shutdown/requests in flight at SIGTERM complete",
		"shutdown/exits 0 within 10 s of SIGTERM",
		"shutdown/port closed after exit",
	}
	if t.Terminate == nil || t.Exited == nil {
		return []stage{fixed(check{name: "shutdown/graceful shutdown under load", run: func(context.Context, *session) error {
			return skipError("needs the Terminate and Exited hooks")
		}})}
	}
	var (
		signalled time.Time
		sigErr    error
		exited    bool
	)
	load := check{name: names[0], run: func(ctx context.Context, s *session) error {
		l, err := pickLoad(ctx, s)
		if err != nil {
			sigErr = err
			return err
		}
		var rep shutdownReport
		signalled, sigErr = rep.run(ctx, s, l, t.Terminate)
		if sigErr != nil {
			return sigErr
		}
		err = rep.verdict()
		if l.slow == nil {
			if _, ok := err.(passNote); ok {
				err = passNote(fmt.Sprintf("%v; no held requests: the workloads have no POST endpoint", err))
			}
		}
		var se *shutdownError
		if errors.As(err, &se) {
			s.last = se.ex
		}
		return err
	}}
	exit := check{name: names[1], run: func(ctx context.Context, s *session) error {
		if sigErr != nil {
			return skipf("no SIGTERM was sent: %v", sigErr)
		}
		ctx, cancel := context.WithTimeout(ctx, shutExitWait)
		defer cancel()
		code, err := t.Exited(ctx)
		took := time.Since(signalled)
		if err != nil {
			return fmt.Errorf("waiting for the exit: %v (%v after SIGTERM)", err, took.Round(time.Millisecond))
		}
		exited = true
		if code != 0 {
			return fmt.Errorf("exit code %d, want 0", code)
		}
		if took > shutExitLimit {
			return fmt.Errorf("exited %v after SIGTERM, want within 10 s", took.Round(time.Millisecond))
		}
		return nil
	}}
	closed := check{name: names[2], run: func(ctx context.Context, s *session) error {
		if !exited {
			return skipError("the process did not exit")
		}
		c, err := net.DialTimeout("tcp", s.addr, 2*time.Second)
		if err == nil {
			c.Close()
			return fmt.Errorf("%s still accepts connections after the service exited (another process on the port?)", s.addr)
		}
		return nil
	}}
	return []stage{fixed(load, exit, closed)}
}

// outcome is how one request of the shutdown check ended.
type outcome struct {
	started, wrote time.Time // before its first byte, after its last
	status         int       // 0: no complete response
	got            int       // response bytes read
	err            error
	ex             exchange
	proven         bool // a held request the server answered 100 Continue to before the signal
}

// shutdownReport collects every outcome of the shutdown check.
type shutdownReport struct {
	mu       sync.Mutex
	signal   time.Time
	outcomes []outcome
	refused  int // dials refused after the signal: the listener was closed
}

func (r *shutdownReport) add(o outcome) {
	r.mu.Lock()
	r.outcomes = append(r.outcomes, o)
	r.mu.Unlock()
}

// run sends the load, signals, and waits for every request to end.
func (r *shutdownReport) run(ctx context.Context, s *session, l shutdownLoad, terminate func() error) (time.Time, error) {
	stop := make(chan struct{}) // closed when the loop workers must stop
	start := time.Now()
	var wg sync.WaitGroup
	for range shutLoopers {
		wg.Go(func() { r.looper(ctx, s, l.loop, stop) })
	}
	held := make(chan struct{}, shutSlow) // a token per held request once it is held (or given up)
	rest := make(chan struct{})           // closed when held requests send their body
	if l.slow != nil {
		for range shutSlow {
			wg.Go(func() { r.heldRequest(ctx, s, *l.slow, held, rest) })
		}
		for range shutSlow {
			<-held
		}
	}
	// Warm up for shutWarmup, and on a starved machine until every loop
	// connection has had an answer (at most shutAfter).
	time.Sleep(shutWarmup - time.Since(start))
	for time.Since(start) < shutAfter && r.answered() < shutLoopers {
		time.Sleep(20 * time.Millisecond)
	}
	r.mu.Lock()
	r.signal = time.Now()
	r.mu.Unlock()
	if err := terminate(); err != nil {
		close(rest)
		close(stop)
		wg.Wait()
		return time.Time{}, fmt.Errorf("the Terminate hook failed: %v", err)
	}
	signalled := time.Now()
	time.Sleep(shutHold)
	close(rest)
	timer := time.AfterFunc(shutAfter, func() { close(stop) })
	wg.Wait()
	if timer.Stop() {
		close(stop)
	}
	return signalled, nil
}

// looper sends requests back to back on one kept-alive connection,
// reconnecting when the server closes it, until a dial is refused or stop.
func (r *shutdownReport) looper(ctx context.Context, s *session, req request, stop <-chan struct{}) {
	wire := keepAlive(req.bytes(s.addr))
	for n := 0; n < 100000; n++ {
		select {
		case <-stop:
			return
		default:
		}
		started := time.Now()
		conn, err := (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, "tcp", s.addr)
		if err != nil {
			if r.afterSignal(started) {
				if refused(err) {
					r.mu.Lock()
					r.refused++
					r.mu.Unlock()
				}
				return
			}
			r.add(outcome{started: started, err: fmt.Errorf("dial before SIGTERM: %w", err), ex: exchange{request: dump(wire)}})
			return
		}
		br := bufio.NewReader(conn)
		for {
			select {
			case <-stop:
				conn.Close()
				return
			default:
			}
			o, closing := roundTrip(conn, br, req.method, wire)
			r.add(o)
			if o.status == 0 || o.err != nil || closing {
				break
			}
		}
		conn.Close()
	}
}

// heldRequest sends its headers with Expect: 100-continue, reports on
// held once the server answered 100 Continue (or after shutContinue),
// and sends its body when rest is closed.
func (r *shutdownReport) heldRequest(ctx context.Context, s *session, req request, held chan<- struct{}, rest <-chan struct{}) {
	once := sync.OnceFunc(func() { held <- struct{}{} })
	defer once()
	req.header = append(req.header, [2]string{"Expect", "100-continue"})
	wire := req.bytes(s.addr)
	head := len(wire) - len(req.body)
	o := outcome{started: time.Now(), ex: exchange{request: dump(wire)}}
	conn, err := (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, "tcp", s.addr)
	if err != nil {
		o.err = fmt.Errorf("dial before SIGTERM: %w", err)
		r.add(o)
		return
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	conn.SetDeadline(time.Now().Add(shutContinue))
	if _, err := conn.Write(wire[:head]); err != nil {
		o.err = fmt.Errorf("writing the headers before SIGTERM: %w", err)
		r.add(o)
		return
	}
	interim, err := http.ReadResponse(br, &http.Request{Method: req.method})
	switch {
	case err == nil && interim.StatusCode == http.StatusContinue:
		o.proven = true
	case err == nil:
		// A final answer before the body: judged like any other.
		io.Copy(io.Discard, interim.Body)
		interim.Body.Close()
		o.status, o.got = interim.StatusCode, 1
		o.ex.response = (&response{status: interim.StatusCode, header: interim.Header}).dump()
		r.add(o)
		return
	default:
		// No 100 Continue in time: send the body anyway (RFC 9110 allows
		// it); the request is then not proven in flight.
		br = bufio.NewReader(conn)
	}
	once()
	<-rest
	conn.SetDeadline(time.Now().Add(shutAfter + shutExitWait))
	if _, err := conn.Write(wire[head:]); err != nil {
		o.err = fmt.Errorf("writing the body after SIGTERM: %w", err)
		r.add(o)
		return
	}
	o.wrote = time.Now()
	res := readOne(br, req.method)
	o.status, o.got, o.err, o.ex.response = res.status, res.got, res.err, res.text
	r.add(o)
}

// roundTrip writes one request and reads its whole response; closing
// reports that the server announced it closes the connection.
func roundTrip(conn net.Conn, br *bufio.Reader, method string, wire []byte) (o outcome, closing bool) {
	o = outcome{started: time.Now(), ex: exchange{request: dump(wire)}}
	conn.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := conn.Write(wire); err != nil {
		o.err = fmt.Errorf("write: %w", err)
		return o, true
	}
	o.wrote = time.Now()
	res := readOne(br, method)
	o.status, o.got, o.err, o.ex.response = res.status, res.got, res.err, res.text
	return o, res.closing
}

type readResult struct {
	status  int  // 0 unless the response was read completely
	closing bool // the server said it closes the connection
	got     int  // bytes of the response seen
	err     error
	text    string
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// readOne reads one whole response, telling "closed before any byte"
// from "cut short".
func readOne(br *bufio.Reader, method string) readResult {
	if _, err := br.Peek(1); err != nil {
		return readResult{err: fmt.Errorf("connection closed before any response byte: %w", err), text: "(no response)"}
	}
	hr, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		return readResult{got: 1, err: fmt.Errorf("response cut short: %w", err), text: "(a partial response)"}
	}
	cr := &countingReader{r: hr.Body}
	body, err := io.ReadAll(cr)
	hr.Body.Close()
	text := (&response{status: hr.StatusCode, header: hr.Header, body: body}).dump()
	if err != nil {
		return readResult{got: 1 + cr.n, err: fmt.Errorf("response body cut short after %d bytes: %w", cr.n, err), text: text}
	}
	return readResult{status: hr.StatusCode, got: 1 + cr.n, text: text, closing: hr.Close}
}

// keepAlive drops the Connection: close our requests carry by default.
func keepAlive(wire []byte) []byte {
	return []byte(strings.Replace(string(wire), "Connection: close\r\n", "", 1))
}

// answered counts the requests answered so far.
func (r *shutdownReport) answered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, o := range r.outcomes {
		if o.status != 0 {
			n++
		}
	}
	return n
}

func (r *shutdownReport) afterSignal(t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.signal.IsZero() && t.After(r.signal)
}

// verdict judges the outcomes (see the note at the top of the file).
func (r *shutdownReport) verdict() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var before, after, raced, held int
	var problems []string
	var firstBad *outcome
	bad := func(o outcome, why string) {
		problems = append(problems, why)
		if firstBad == nil {
			firstBad = &o
		}
	}
	for _, o := range r.outcomes {
		pre := o.started.Before(r.signal)
		switch {
		case o.status >= 200 && o.status < 300:
			switch {
			case o.proven:
				held++
			case pre:
				before++
			default:
				after++
			}
		case o.status != 0:
			bad(o, fmt.Sprintf("a request answered %d during shutdown, want 2xx", o.status))
		case o.got > 0:
			bad(o, "a response cut short by the shutdown: "+o.err.Error())
		case o.proven:
			bad(o, "a request in flight at SIGTERM (the server had answered 100 Continue) got no response: "+o.err.Error())
		case strings.HasPrefix(o.err.Error(), "dial before SIGTERM"):
			bad(o, o.err.Error())
		default:
			raced++
		}
	}
	counts := fmt.Sprintf("%d held requests answered; loop requests: %d answered 2xx before SIGTERM, %d after, %d closed unread (keep-alive race); %d dials refused after the signal", held, before, after, raced, r.refused)
	if firstBad != nil {
		return &shutdownError{summary: fmt.Sprintf("%d problem(s), first: %s (%s)", len(problems), problems[0], counts), ex: firstBad.ex}
	}
	if before == 0 {
		return errors.New("no request completed before SIGTERM: the load never ran (" + counts + ")")
	}
	return passNote(counts)
}

// shutdownError carries the exchange of the first lost request.
type shutdownError struct {
	summary string
	ex      exchange
}

func (e *shutdownError) Error() string { return e.summary }
