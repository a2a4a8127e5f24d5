package load

import (
	"bufio"
	"bytes"
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
	body []byte
	hdr  []byte
	// reused reports whether nc has already carried a request, so a failure
	// before any response byte may be retried once on a fresh connection.
	reused bool
	// deadline is the read/write deadline currently set on nc.
	deadline time.Time
	// The last URL split, as most requests repeat it.
	lastURL, lastAddr, lastHost, lastPath string
}

func newConn(timeout time.Duration) *conn {
	return &conn{timeout: timeout, dialer: net.Dialer{Timeout: timeout, KeepAlive: -1}}
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
		retryable := c.reused
		x.sent = time.Now()
		c.setDeadline(x.sent)
		n, err := c.nc.Write(c.wbuf)
		x.sentN = n
		if err == nil {
			var got int
			got, err = c.readResponse(req.Method, resp, x)
			if got > 0 {
				retryable = false
			}
		}
		if err == nil {
			c.reused = true
			return nil
		}
		c.close()
		// The server may close an idle keep-alive connection at any time;
		// a request that saw no byte of response on a reused connection is
		// sent again once on a fresh one, as net/http does.
		if !retryable || attempt > 0 || isTimeout(err) {
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

var errMalformed = errors.New("malformed HTTP response")

// readResponse reads one response. It returns how many bytes it consumed,
// so do can tell whether a failure happened before the response began.
func (c *conn) readResponse(method string, resp *Response, x *exchange) (int, error) {
	n := 0
	line, err := c.readLine()
	n += len(line)
	if err != nil {
		return n, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return n, errMalformed
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return n, errMalformed
	}
	http10 := line[7] == '0'
	c.hdr = c.hdr[:0]
	contentLength := int64(-1)
	chunked, closeAfter := false, http10
	for {
		line, err = c.readLine()
		n += len(line)
		if err != nil {
			return n, err
		}
		if len(line) <= 2 { // "\r\n"
			break
		}
		c.hdr = append(c.hdr, line...)
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case asciiEqualFold(name, "Content-Length"):
			contentLength, err = strconv.ParseInt(string(value), 10, 64)
			if err != nil || contentLength < 0 {
				return n, errMalformed
			}
		case asciiEqualFold(name, "Transfer-Encoding"):
			chunked = bytes.Contains(bytes.ToLower(value), []byte("chunked"))
		case asciiEqualFold(name, "Connection"):
			v := bytes.ToLower(value)
			if bytes.Contains(v, []byte("close")) {
				closeAfter = true
			} else if bytes.Contains(v, []byte("keep-alive")) {
				closeAfter = false
			}
		}
	}
	if status/100 == 1 && status != 101 {
		// Interim response (100 Continue): the real one follows.
		m, err := c.readResponse(method, resp, x)
		return n + m, err
	}
	c.body = c.body[:0]
	noBody := method == "HEAD" || status == 204 || status == 304
	switch {
	case noBody:
	case chunked:
		m, err := c.readChunked()
		n += m
		if err != nil {
			return n, err
		}
	case contentLength >= 0:
		if int64(cap(c.body)) < contentLength {
			c.body = make([]byte, 0, contentLength)
		}
		c.body = c.body[:contentLength]
		m, err := io.ReadFull(c.br, c.body)
		n += m
		if err != nil {
			return n, err
		}
	default:
		// No length: the body runs until the server closes.
		buf := bytes.NewBuffer(c.body)
		m, err := buf.ReadFrom(c.br)
		n += int(m)
		c.body = buf.Bytes()
		if err != nil {
			return n, err
		}
		closeAfter = true
	}
	x.recvN += n
	x.status = status
	resp.Status = status
	resp.RawHeader = c.hdr
	resp.Body = c.body
	if closeAfter {
		c.close()
	}
	return n, nil
}

func (c *conn) readLine() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return line, errors.New("HTTP response header line too long")
	}
	if err == io.EOF && len(line) == 0 {
		return nil, io.EOF
	}
	if err == io.EOF {
		return line, io.ErrUnexpectedEOF
	}
	return line, err
}

func (c *conn) readChunked() (int, error) {
	n := 0
	for {
		line, err := c.readLine()
		n += len(line)
		if err != nil {
			return n, err
		}
		sz := bytes.TrimSpace(line)
		if i := bytes.IndexByte(sz, ';'); i >= 0 {
			sz = sz[:i]
		}
		size, err := strconv.ParseInt(string(sz), 16, 64)
		if err != nil || size < 0 {
			return n, errMalformed
		}
		if size == 0 {
			// Trailers, then an empty line.
			for {
				line, err = c.readLine()
				n += len(line)
				if err != nil {
					return n, err
				}
				if len(line) <= 2 {
					return n, nil
				}
			}
		}
		start := len(c.body)
		c.body = append(c.body, make([]byte, size)...)
		m, err := io.ReadFull(c.br, c.body[start:])
		n += m
		if err != nil {
			return n, err
		}
		line, err = c.readLine()
		n += len(line)
		if err != nil {
			return n, err
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Transport error reasons, as counted in results.
const (
	ReasonTimeout   = "timeout"
	ReasonRefused   = "connection refused"
	ReasonReset     = "connection reset"
	ReasonClosed    = "connection closed by server"
	ReasonMalformed = "malformed response"
)

// transportReason maps a transport error to a low-cardinality reason.
func transportReason(err error) string {
	switch {
	case isTimeout(err):
		return ReasonTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return ReasonReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ReasonClosed
	case errors.Is(err, errMalformed):
		return ReasonMalformed
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Op + ": " + oe.Err.Error()
	}
	return err.Error()
}
