package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// conn is a lean HTTP/1.1 client over one keep-alive TCP connection. It is
// used by one goroutine at a time. It writes each request with a single
// write call and parses responses in place, which is what keeps the
// generator's CPU per request low (see bench/README.md for the numbers that
// chose it over net/http and fasthttp).
type conn struct {
	// mu guards assignments to nc against abort from another goroutine;
	// the owner reads nc without it.
	mu      sync.Mutex
	timeout time.Duration
	dialer  net.Dialer

	addr string // host:port of c
	host string // Host header value
	nc   net.Conn
	br   *bufio.Reader
	wbuf []byte
	p    *respParser
	// reused reports whether nc has already carried a request, so a failure
	// before any response byte may be retried once on a fresh connection.
	reused bool
	// deadline is the read/write deadline currently set on nc.
	deadline time.Time
	// The last URL split, as most requests repeat it.
	lastURL, lastAddr, lastHost, lastPath string
}

func newConn(timeout time.Duration, lim Limits) *conn {
	return &conn{timeout: timeout, dialer: net.Dialer{Timeout: timeout, KeepAlive: -1}, p: newRespParser(lim, true)}
}

// exchange is the outcome of one request on the wire.
type exchange struct {
	sent     time.Time // when the request was written
	sentN    int       // request bytes written
	recvN    int       // response bytes read
	status   int
	dialFail bool // the connection could not be established
}

// splitURL returns the host:port to dial, the Host header, and the
// request target of an absolute http URL.
func splitURL(u string) (addr, host, path string, err error) {
	rest, ok := strings.CutPrefix(u, "http://")
	if !ok {
		if strings.HasPrefix(u, "https://") {
			return "", "", "", errors.New("https is not supported by the load engine; use http://")
		}
		return "", "", "", fmt.Errorf("URL %q: want an absolute http:// URL", u)
	}
	host, path = rest, "/"
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		host, path = rest[:i], rest[i:]
		if path[0] == '?' {
			path = "/" + path
		}
	}
	if host == "" {
		return "", "", "", fmt.Errorf("URL %q has no host", u)
	}
	addr = host
	if _, _, e := net.SplitHostPort(host); e != nil {
		addr = net.JoinHostPort(strings.Trim(host, "[]"), "80")
	}
	return addr, host, path, nil
}

func (c *conn) close() {
	if c.nc != nil {
		c.nc.Close()
		c.mu.Lock()
		c.nc = nil
		c.mu.Unlock()
	}
	c.reused = false
}

// abort makes the request in flight on c fail at once; safe to call from
// any goroutine.
func (c *conn) abort() {
	c.mu.Lock()
	if c.nc != nil {
		c.nc.SetDeadline(time.Unix(1, 0))
	}
	c.mu.Unlock()
}

func (c *conn) dial(addr, host string) error {
	c.close()
	nc, err := c.dialer.Dial("tcp", addr)
	if err != nil {
		return err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c.mu.Lock()
	c.nc, c.addr, c.host = nc, addr, host
	c.mu.Unlock()
	c.deadline = time.Time{}
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, 4<<10)
	} else {
		c.br.Reset(nc)
	}
	return nil
}

// do sends req and reads the response into resp. Its error is a transport
// error (the caller classifies it); HTTP statuses are not errors here.
func (c *conn) do(req *Request, resp *Response, x *exchange) error {
	if req.URL != c.lastURL {
		addr, host, path, err := splitURL(req.URL)
		if err != nil {
			return err
		}
		c.lastURL, c.lastAddr, c.lastHost, c.lastPath = req.URL, addr, host, path
	}
	addr, host, path := c.lastAddr, c.lastHost, c.lastPath
	c.wbuf = appendRequest(c.wbuf[:0], req, host, path)
	for attempt := 0; ; attempt++ {
		if c.nc == nil || c.addr != addr {
			if err := c.dial(addr, host); err != nil {
				x.dialFail = true
				x.sent = time.Now()
				return err
			}
		}
		reused := c.reused
		x.sent = time.Now()
		c.setDeadline(x.sent)
		n, err := c.nc.Write(c.wbuf)
		x.sentN = n
		got := 0
		if err == nil {
			var done bool
			got, done, err = c.readResponse(req.Method, resp, x)
			if done {
				c.reused = c.nc != nil
				return err
			}
		}
		c.close()
		// The server may close an idle keep-alive connection at any time;
		// a request that saw no byte of response on a reused connection is
		// sent again once on a fresh one, as net/http does, if it is
		// idempotent: a POST may have been carried out already.
		if !reused || got > 0 || isTimeout(err) {
			return err
		}
		if !idempotent(req.Method) {
			return fmt.Errorf("%w (%v)", errClosedBefore, err)
		}
		if attempt > 0 {
			return err
		}
	}
}

// setDeadline arms the timeout. Moving a deadline costs a timer update, so
// it is only moved when it would fall short of now+timeout; the effective
// timeout is therefore between timeout and 1.25*timeout.
func (c *conn) setDeadline(now time.Time) {
	if c.timeout <= 0 {
		return
	}
	if c.deadline.Sub(now) >= c.timeout {
		return
	}
	c.deadline = now.Add(c.timeout + c.timeout/4)
	c.nc.SetDeadline(c.deadline)
}

func appendRequest(b []byte, req *Request, host, path string) []byte {
	method := req.Method
	if method == "" {
		method = "GET"
	}
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\n"...)
	var hasHost, hasUA, hasCL bool
	for _, h := range req.Header {
		switch {
		case strings.EqualFold(h.Name, "Host"):
			hasHost = true
		case strings.EqualFold(h.Name, "User-Agent"):
			hasUA = true
		case strings.EqualFold(h.Name, "Content-Length"):
			hasCL = true
		}
	}
	if !hasHost {
		b = append(b, "Host: "...)
		b = append(b, host...)
		b = append(b, "\r\n"...)
	}
	if !hasUA {
		b = append(b, "User-Agent: showdown\r\n"...)
	}
	for _, h := range req.Header {
		b = append(b, h.Name...)
		b = append(b, ": "...)
		b = append(b, h.Value...)
		b = append(b, "\r\n"...)
	}
	if !hasCL && (len(req.Body) > 0 || method == "POST" || method == "PUT" || method == "PATCH") {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(req.Body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, req.Body...)
}

// readResponse reads one response with the package's one parser. It
// returns how many bytes it consumed, so do can tell whether a failure
// happened before the response began, and whether the response was read
// to its end (then the connection may carry the next request, even if the
// response was refused, as one over MaxBody is).
func (c *conn) readResponse(method string, resp *Response, x *exchange) (n int, done bool, err error) {
	p := c.p
	p.reset(method == "HEAD")
	for !p.done() {
		if c.br.Buffered() == 0 {
			if _, rerr := c.br.Peek(1); rerr != nil {
				if rerr == io.EOF {
					if done, perr := p.eof(); done {
						err = perr
						break // a body without a length ends at close
					}
					if p.started() {
						rerr = io.ErrUnexpectedEOF
					}
				}
				x.recvN += n
				return n, false, rerr
			}
		}
		buf, _ := c.br.Peek(c.br.Buffered())
		m, perr := p.feed(buf)
		c.br.Discard(m)
		n += m
		if perr != nil {
			err = perr
			if !p.done() {
				x.recvN += n
				return n, false, err
			}
		}
	}
	x.recvN += n
	x.status = p.status
	resp.Status = p.status
	resp.RawHeader = p.hdr
	resp.Body = p.body
	// Bytes after the response were not asked for: whatever they are, the
	// connection can no longer be trusted to match responses to requests.
	if p.closeAfter || c.br.Buffered() > 0 {
		c.close()
	}
	return n, true, err
}

// idempotent reports whether a request with method may be sent again when
// a reused connection died before any byte of its response (RFC 9110,
// 9.2.2, as net/http does): the server may have acted on it already.
func idempotent(method string) bool {
	switch method {
	case "", "GET", "HEAD", "OPTIONS", "PUT", "DELETE":
		return true
	}
	return false
}

// errClosedBefore is a non-idempotent request on a reused connection that
// the server closed before answering: it is not sent again.
var errClosedBefore = errors.New(ReasonClosedBeforeResponse)

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Transport error reasons, as counted in results.
const (
	ReasonTimeout = "timeout"
	ReasonRefused = "connection refused"
	ReasonReset   = "connection reset"
	ReasonClosed  = "connection closed by server"
	// ReasonClosedBeforeResponse is a request that is not idempotent
	// (POST, PATCH) on a reused connection the server closed before any
	// byte of the response: it is not retried, as it may have been done.
	ReasonClosedBeforeResponse = "connection closed before the response"
)

// transportReason maps a transport error to a low-cardinality reason.
func transportReason(err error) string {
	switch {
	case isTimeout(err):
		return ReasonTimeout
	case errors.Is(err, errClosedBefore):
		return ReasonClosedBeforeResponse
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return ReasonReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ReasonClosed
	}
	var pe *parseError
	if errors.As(err, &pe) {
		return pe.reason
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Op + ": " + oe.Err.Error()
	}
	return err.Error()
}
