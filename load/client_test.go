package load

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestClientBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/length":
			w.Header().Set("X-Echo", r.Header.Get("X-Test"))
			w.Write([]byte("method=" + r.Method + " body=" + string(body)))
		case "/chunked":
			f := w.(http.Flusher)
			w.Write([]byte("part1-"))
			f.Flush()
			w.Write([]byte("part2"))
		case "/close":
			w.Header().Set("Connection", "close")
			w.Write([]byte("bye"))
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/missing":
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := newConn(5*time.Second, Limits{})
	defer c.close()
	tests := []struct {
		method, path, body string
		status             int
		wantBody           string
		closed             bool
	}{
		{"GET", "/length", "", 200, "method=GET body=", false},                 // Content-Length body, keep-alive
		{"POST", "/length", `{"a":1}`, 200, `method=POST body={"a":1}`, false}, // request body with Content-Length
		{"GET", "/chunked", "", 200, "part1-part2", false},                     // chunked body is de-chunked
		{"GET", "/close", "", 200, "bye", true},                                // Connection: close drops the connection
		{"GET", "/length", "", 200, "method=GET body=", false},                 // and the next request reconnects
		{"HEAD", "/length", "", 200, "", false},                                // HEAD has no body despite a length
		{"GET", "/empty", "", 204, "", false},                                  // 204 has no body
		{"GET", "/missing", "", 404, "404 page not found\n", false},            // statuses are not transport errors
	}
	for _, tt := range tests {
		req := Request{Method: tt.method, URL: srv.URL + tt.path, Body: []byte(tt.body),
			Header: []HeaderField{{"X-Test", "yes"}}}
		var resp Response
		var x exchange
		if err := c.do(&req, &resp, &x); err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.path, err)
		}
		if resp.Status != tt.status || string(resp.Body) != tt.wantBody {
			t.Errorf("%s %s = %d %q, want %d %q", tt.method, tt.path, resp.Status, resp.Body, tt.status, tt.wantBody)
		}
		if (c.nc == nil) != tt.closed {
			t.Errorf("%s %s: connection closed = %v, want %v", tt.method, tt.path, c.nc == nil, tt.closed)
		}
		if tt.path == "/length" && tt.method == "GET" && resp.Header("x-echo") != "yes" {
			t.Errorf("header not sent or not read back: X-Echo = %q", resp.Header("x-echo"))
		}
		if x.sentN == 0 || x.recvN == 0 {
			t.Errorf("%s %s: bytes sent %d, received %d", tt.method, tt.path, x.sentN, x.recvN)
		}
	}
}

// rawServer answers each connection with fn, over plain TCP.
func rawServer(t *testing.T, fn func(n int, c net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				fn(int(n.Add(1)), c)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

func readRequest(c net.Conn, br *bufio.Reader) error {
	_, err := http.ReadRequest(br)
	return err
}

func TestClientBodyUntilClose(t *testing.T) {
	url := rawServer(t, func(_ int, c net.Conn) {
		readRequest(c, bufio.NewReader(c))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it")
	})
	c := newConn(5*time.Second, Limits{})
	var resp Response
	var x exchange
	if err := c.do(&Request{Method: "GET", URL: url + "/"}, &resp, &x); err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "all of it" || c.nc != nil {
		t.Errorf("body %q, connection kept = %v; want the body up to close, and no connection", resp.Body, c.nc != nil)
	}
}

func TestClientReconnectsAfterServerCloses(t *testing.T) {
	// The server answers one request per connection, then closes it
	// without saying so (as an idle-timeout would), and tells the test
	// it has: the next request is sent after the close, however slowly
	// the server's goroutine runs (a fixed 10 ms sleep was a guess).
	closed := make(chan struct{}, 3)
	url := rawServer(t, func(n int, c net.Conn) {
		readRequest(c, bufio.NewReader(c))
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n%d", n%10)
		c.Close()
		closed <- struct{}{}
	})
	c := newConn(5*time.Second, Limits{})
	defer c.close()
	for i := 1; i <= 3; i++ {
		var resp Response
		var x exchange
		if err := c.do(&Request{Method: "GET", URL: url + "/"}, &resp, &x); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if got, want := string(resp.Body), fmt.Sprint(i); got != want {
			t.Errorf("request %d served by connection %s, want %s", i, got, want)
		}
		<-closed
	}
}

func TestClientErrors(t *testing.T) {
	slow := rawServer(t, func(_ int, c net.Conn) {
		readRequest(c, bufio.NewReader(c))
		time.Sleep(2 * time.Second)
	})
	reset := rawServer(t, func(_ int, c net.Conn) {
		readRequest(c, bufio.NewReader(c))
		c.(*net.TCPConn).SetLinger(0) // close with RST
	})
	garbage := rawServer(t, func(_ int, c net.Conn) {
		readRequest(c, bufio.NewReader(c))
		io.WriteString(c, "SMTP ready\r\n\r\n")
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := "http://" + ln.Addr().String()
	ln.Close()
	tests := []struct {
		url, want string
	}{
		{slow + "/", ReasonTimeout},       // no answer within the timeout
		{refused + "/", ReasonRefused},    // nobody listening
		{reset + "/", ReasonReset},        // the server resets the connection
		{garbage + "/", ReasonStatusLine}, // not HTTP
	}
	for _, tt := range tests {
		c := newConn(200*time.Millisecond, Limits{})
		var resp Response
		var x exchange
		err := c.do(&Request{Method: "GET", URL: tt.url}, &resp, &x)
		if err == nil {
			t.Errorf("%s: no error", tt.url)
			continue
		}
		if got := transportReason(err); got != tt.want && !(tt.want == ReasonReset && got == ReasonClosed) {
			t.Errorf("%s: reason %q (%v), want %q", tt.url, got, err, tt.want)
		}
		c.close()
	}
}

func TestSplitURL(t *testing.T) {
	tests := []struct {
		in, addr, host, path string
		ok                   bool
	}{
		{"http://127.0.0.1:8080/a?b=1", "127.0.0.1:8080", "127.0.0.1:8080", "/a?b=1", true}, // full
		{"http://example.com", "example.com:80", "example.com", "/", true},                  // default port and path
		{"http://h:1?x", "h:1", "h:1", "/?x", true},                                         // query without path
		{"https://h/", "", "", "", false},                                                   // no TLS
		{"h:1/", "", "", "", false},                                                         // not absolute
	}
	for _, tt := range tests {
		addr, host, path, err := splitURL(tt.in)
		if (err == nil) != tt.ok || addr != tt.addr || host != tt.host || path != tt.path {
			t.Errorf("splitURL(%q) = %q %q %q %v", tt.in, addr, host, path, err)
		}
	}
}
