package verify

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Timeouts and limits of the suite's own requests.
const (
	requestTimeout = 10 * time.Second // one request, start to end of the response
	maxResponse    = 4 << 20          // bytes of a response body read at most
	dumpLimit      = 3 << 10          // bytes of a request or response shown in a Result
)

// session sends requests to the target and remembers the last exchange, so
// a failing check can show it.
type session struct {
	t      Target
	base   string // "http://127.0.0.1:PORT", no trailing slash
	addr   string // "127.0.0.1:PORT"
	client *http.Client
	last   exchange
}

// exchange is a request and its response as text, for a failure report.
type exchange struct{ request, response string }

func newSession(t Target) (*session, error) {
	u, err := url.Parse(strings.TrimRight(t.BaseURL, "/"))
	if err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("verify: BaseURL %q is not of the form http://HOST:PORT", t.BaseURL)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		MaxIdleConns:        100,
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     30 * time.Second,
	}
	return &session{
		t:    t,
		base: "http://" + u.Host,
		addr: addr,
		client: &http.Client{
			Transport: tr,
			Timeout:   requestTimeout,
			// The contract has no redirects: a 301 is an answer to check, not to follow.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

// request is one HTTP request of a check. Requests go over a fresh TCP
// connection, written byte for byte, so a check can send what net/http
// would refuse to (truncated bodies, duplicate headers, raw paths).
type request struct {
	method  string
	path    string        // sent verbatim in the request line
	header  [][2]string   // extra headers, in order, duplicates allowed
	body    []byte        // nil: no body and no Content-Length
	chunked bool          // send body with Transfer-Encoding: chunked
	raw     string        // if set, the whole request as sent; "{host}" is replaced by the target's host
	half    bool          // close our write side after sending (the server sees EOF)
	timeout time.Duration // 0: requestTimeout
	noCT    bool          // do not add Content-Type: application/json to a body
}

// response is what came back.
type response struct {
	status int
	header http.Header
	body   []byte
	none   bool          // the connection closed without a response
	err    error         // transport error, if none
	took   time.Duration // from the first byte written to the end of the body
}

func get(path string) request { return request{method: "GET", path: path} }

func post(path, body string) request { return request{method: "POST", path: path, body: []byte(body)} }

// bytes renders r as it goes on the wire.
func (r request) bytes(host string) []byte {
	if r.raw != "" {
		return []byte(strings.ReplaceAll(r.raw, "{host}", host))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: showdown-verify\r\nAccept: */*\r\nConnection: close\r\n", r.method, r.path, host)
	hasCT := r.noCT
	for _, h := range r.header {
		if strings.EqualFold(h[0], "Content-Type") {
			hasCT = true
		}
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	if r.body != nil {
		if !hasCT {
			b.WriteString("Content-Type: application/json\r\n")
		}
		if r.chunked {
			b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
			for rest := r.body; len(rest) > 0; {
				n := min(len(rest), 64<<10)
				fmt.Fprintf(&b, "%x\r\n", n)
				b.Write(rest[:n])
				b.WriteString("\r\n")
				rest = rest[n:]
			}
			b.WriteString("0\r\n\r\n")
			return b.Bytes()
		}
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.body))
	} else if r.method == "POST" || r.method == "PUT" {
		b.WriteString("Content-Length: 0\r\n")
	}
	b.WriteString("\r\n")
	b.Write(r.body)
	return b.Bytes()
}

// do sends r on a new connection and reads one response. It records the
// exchange in s.last. A transport failure is reported in response.err with
// response.none set, not as an error: for some checks it is an answer.
func (s *session) do(ctx context.Context, r request) *response {
	wire := r.bytes(s.addr)
	resp := s.send(ctx, r, wire)
	s.last = exchange{request: dump(wire), response: resp.dump()}
	return resp
}

func (s *session) send(ctx context.Context, r request, wire []byte) *response {
	timeout := r.timeout
	if timeout == 0 {
		timeout = requestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := net.Dialer{Timeout: 3 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return &response{none: true, err: err}
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	start := time.Now()
	// Write in the background: a server may answer (413) before reading
	// the whole body, and that answer is what we want.
	wrote := make(chan error, 1)
	go func() {
		_, err := conn.Write(wire)
		if err == nil && r.half {
			if tc, ok := conn.(*net.TCPConn); ok {
				err = tc.CloseWrite()
			}
		}
		wrote <- err
	}()
	method := r.method
	if method == "" {
		method = strings.SplitN(string(wire), " ", 2)[0]
	}
	br := bufio.NewReader(conn)
	hr, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		conn.Close()
		werr := <-wrote
		if werr != nil && !errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w (while writing: %v)", err, werr)
		}
		return &response{none: true, err: err, took: time.Since(start)}
	}
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxResponse))
	hr.Body.Close()
	out := &response{status: hr.StatusCode, header: hr.Header, body: body, took: time.Since(start)}
	if err != nil {
		out.err = fmt.Errorf("reading the response body: %w", err)
	}
	return out
}

// refused reports whether err says nothing listens on the port.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// dump renders wire bytes for a report, truncated.
func dump(b []byte) string {
	if len(b) <= dumpLimit {
		return printable(b)
	}
	return printable(b[:dumpLimit]) + fmt.Sprintf("\n... (%d bytes in all)", len(b))
}

// printable keeps text readable and escapes what a terminal would eat.
func printable(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c == '\r':
		case c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f) || c >= 0x80:
			sb.WriteByte(c)
		default:
			fmt.Fprintf(&sb, "\\x%02x", c)
		}
	}
	return strings.ToValidUTF8(sb.String(), "\uFFFD")
}

func (r *response) dump() string {
	if r.none {
		return fmt.Sprintf("(no response: %v)", r.err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\n", r.status, http.StatusText(r.status))
	keys := make([]string, 0, len(r.header))
	for k := range r.header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range r.header[k] {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	b.WriteString("\n")
	b.Write(r.body)
	if r.err != nil {
		fmt.Fprintf(&b, "\n(%v)", r.err)
	}
	return dump(b.Bytes())
}

// isJSON reports whether the response's media type is application/json.
func (r *response) isJSON() bool {
	mt, _, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// object decodes the body as one JSON object, numbers kept as text.
func (r *response) object() (map[string]any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("body is not JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("body holds more than one JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("body is JSON but not an object: %s", trunc(string(r.body), 80))
	}
	return m, nil
}

// integer reads a JSON number that must be an exact integer.
func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
