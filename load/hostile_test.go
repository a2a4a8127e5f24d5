package load

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// HostileServer starts testdata/hostile-server.py (a copy of the project's
// shared tool) in mode on a free loopback port and returns its URL.
func HostileServer(t testing.TB, script, mode string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the hostile server: ", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(py, script, fmt.Sprint(port), mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "hostile server on") {
		t.Fatalf("hostile server %s did not start: %q, %v", mode, line, err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/", port)
}

// engines are the ways an attack runs: the open model on the tick engine
// (a plain URL), on the loop engine (a scenario) and on the goroutine
// engine; the closed model on the loop engine and on the goroutine engine.
var engines = []string{"tick", "loop", "goroutine", "closed", "closed-goroutine"}

// engineCase returns the scenario, model and options that run target on
// engine: the open model or closed one.
func engineCase(engine string, target *Target, open OpenModel, closed ClosedModel) (Scenario, Model, []Option) {
	var sc Scenario = target
	var m Model = open
	var opts []Option
	switch engine {
	case "loop":
		sc = notTarget{target}
	case "goroutine":
		opts = append(opts, WithoutTickEngine())
	case "closed":
		m = closed
	case "closed-goroutine":
		m = closed
		opts = append(opts, WithoutTickEngine())
	}
	return sc, m, opts
}

// notTarget is a plain URL attack as a scenario that is not a *Target,
// so that it runs on the engine of scenarios (the loop engine on Linux).
type notTarget struct{ *Target }

// TestHostileResponses attacks the hostile server in every mode, on every
// engine: the attack must end with every sample counted and the expected
// reason (or none) in its results.
func TestHostileResponses(t *testing.T) {
	script, _ := filepath.Abs("testdata/hostile-server.py")
	tests := []struct {
		mode, reason string
	}{
		{"chunk-overflow", ReasonChunkTooLarge}, // chunk size 7fffffffffffffff: refused, no panic
		{"huge-length", ReasonTimeout},          // Content-Length 99999999999: read while it comes, never allocated
		{"header-flood", ReasonTooManyHeaders},  // 200,000 header fields
		{"long-line", ReasonLineTooLong},        // a 1 MiB header line
		{"early-hints", ""},                     // 103 then 200: the 200 counts
		{"garbage", ReasonStatusLine},           // not HTTP
		{"close-early", ReasonClosed},           // no answer at all
		{"slow-body", ReasonTimeout},            // one byte a second
		{"bad-chunk", ReasonChunkSize},          // chunk size not hex
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			url := HostileServer(t, script, tt.mode)
			for _, engine := range engines {
				// A short timeout where a timeout is the expected reason; a
				// long one elsewhere, so a busy machine cannot turn a slow
				// Python server's answer into a timeout.
				timeout := 5 * time.Second
				if tt.reason == ReasonTimeout {
					timeout = 400 * time.Millisecond
				}
				sc, m, opts := engineCase(engine, &Target{URL: url}, OpenModel{Rate: 20, Duration: 300 * time.Millisecond}, ClosedModel{Users: 2, Iterations: 3})
				opts = append(opts, Timeout(timeout))
				res, err := NewAttacker(opts...).Attack(context.Background(), sc, m)
				if err != nil {
					t.Fatalf("%s: %v", engine, err)
				}
				tot := res.Summary.Total
				if tot.Samples == 0 {
					t.Fatalf("%s: no samples", engine)
				}
				switch {
				case tt.reason == "" && tot.Errors != 0:
					t.Errorf("%s: errors %+v", engine, tot.Reasons)
				case tt.reason != "" && (len(tot.Reasons) != 1 || tot.Reasons[0].Reason != tt.reason || tot.Errors != tot.Samples):
					t.Errorf("%s: reasons %+v of %d samples, want all %q", engine, tot.Reasons, tot.Samples, tt.reason)
				}
			}
		})
	}
}

// TestLargeBodyDiscarded checks that a body over MaxBody is read to its
// end without being kept, counted, reported, and that the connection then
// carries the next request.
func TestLargeBodyDiscarded(t *testing.T) {
	const size = 64 << 20
	var conns atomic.Int64
	url := rawServer(t, func(_ int, c net.Conn) {
		conns.Add(1)
		br := bufio.NewReader(c)
		chunk := make([]byte, 1<<20)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if req.URL.Path == "/small" {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				continue
			}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", size)
			for sent := 0; sent < size; sent += len(chunk) {
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}
	})
	for _, engine := range engines {
		conns.Store(0)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		sc, m, opts := engineCase(engine, &Target{URL: url + "/big"}, OpenModel{Rate: 4, Duration: time.Second}, ClosedModel{Users: 1, Iterations: 4})
		opts = append(opts, WithLimits(Limits{MaxBody: 1 << 20}))
		res, err := NewAttacker(opts...).Attack(context.Background(), sc, m)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		tot := res.Summary.Total
		if tot.Samples != 4 || tot.Errors != 4 || tot.Reasons[0].Reason != ReasonBodyTooLarge {
			t.Errorf("%s: %d samples, reasons %+v; want 4 of %q", engine, tot.Samples, tot.Reasons, ReasonBodyTooLarge)
		}
		if tot.ReceivedBytes < 4*size {
			t.Errorf("%s: received %d bytes, want at least %d", engine, tot.ReceivedBytes, 4*size)
		}
		if grown := after.TotalAlloc - before.TotalAlloc; grown > size/2 {
			t.Errorf("%s: allocated %d MiB for 4 bodies of %d MiB", engine, grown>>20, size>>20)
		}
		// (In the open model a slow read may overlap the next send.)
		if n := conns.Load(); strings.HasPrefix(engine, "closed") && n != 1 {
			t.Errorf("%s: %d connections; a refused body read to its end should leave the connection usable", engine, n)
		}
	}
}

// TestRetryOnlyIdempotent has a server that answers the first request of
// each connection and closes the connection on the second without an
// answer, as a keep-alive timeout racing a request does. A GET is sent
// again on a new connection; a POST is not (the server may have done it)
// and fails with ReasonClosedBeforeResponse.
func TestRetryOnlyIdempotent(t *testing.T) {
	var received atomic.Int64
	url := rawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			received.Add(1)
			req.Body.Close()
			if i > 0 {
				return // closed before the response
			}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	for _, tt := range []struct {
		method string
		retry  bool
	}{
		{"GET", true},    // idempotent: sent again
		{"PUT", true},    // idempotent too
		{"POST", false},  // may have been done: an error
		{"PATCH", false}, // the same
	} {
		method := tt.method
		for _, engine := range engines {
			received.Store(0)
			sc, m, opts := engineCase(engine, &Target{Method: method, URL: url + "/", Body: []byte("x")},
				OpenModel{Rate: 20, Duration: 500 * time.Millisecond}, ClosedModel{Users: 1, Iterations: 6})
			res, err := NewAttacker(opts...).Attack(context.Background(), sc, m)
			if err != nil {
				t.Fatal(err)
			}
			tot := res.Summary.Total
			if tt.retry {
				if tot.Errors != 0 || received.Load() <= tot.Samples {
					t.Errorf("%s %s: %d errors %+v, server got %d requests for %d samples; want retries and no errors",
						engine, method, tot.Errors, tot.Reasons, received.Load(), tot.Samples)
				}
				continue
			}
			if received.Load() != tot.Samples || tot.Errors == 0 || len(tot.Reasons) != 1 || tot.Reasons[0].Reason != ReasonClosedBeforeResponse {
				t.Errorf("%s %s: server got %d requests for %d samples, reasons %+v; want each once and %q",
					engine, method, received.Load(), tot.Samples, tot.Reasons, ReasonClosedBeforeResponse)
			}
		}
	}
}
