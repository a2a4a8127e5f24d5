package load

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"testing"
)

// The seed corpora of these fuzzers are checked in under
// testdata/fuzz/FuzzRespParser*; `make test` runs each for a bounded time
// (see the Makefile), and a longer run is
//
//	go test -run '^$' -fuzz '^FuzzRespParser$' -fuzztime 10m -parallel 1 ./load

// fuzzLimits are small, so that the fuzzer reaches every cap.
var fuzzLimits = Limits{MaxLine: 200, MaxHeaderBytes: 1000, MaxHeaders: 12, MaxChunk: 300, MaxBody: 400}

// FuzzRespParser feeds arbitrary bytes to the parser, whole and in pieces
// of every size from 1 to 16: it must never panic, never consume more than
// it was given, never keep more than MaxBody, and give the same verdict
// however the bytes arrive.
func FuzzRespParser(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), uint8(3), false)
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nabc"), uint8(1), false)
	f.Add([]byte("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), uint8(5), false)
	f.Fuzz(func(t *testing.T, in []byte, step uint8, head bool) {
		whole := parseAll(fuzzLimits, string(in), 0, true, head)
		pieces := parseAll(fuzzLimits, string(in), 1+int(step%16), true, head)
		for _, p := range []parsed{whole, pieces} {
			if p.used > len(in) || len(p.body) > int(fuzzLimits.MaxBody) {
				t.Fatalf("used %d of %d bytes, kept a body of %d: %+v", p.used, len(in), len(p.body), p)
			}
			if p.done && p.reason == "" && (p.status < 100 || p.status > 999) {
				t.Fatalf("status %d accepted", p.status)
			}
		}
		// Where a size cap trips depends on the pieces; the verdict does
		// not.
		if whole.reason == "" && pieces.reason == "" && whole != pieces {
			t.Fatalf("whole %+v, in pieces of %d %+v", whole, 1+step%16, pieces)
		}
		if whole.reason != pieces.reason || whole.done != pieces.done || whole.status != pieces.status {
			t.Fatalf("whole %+v, in pieces of %d %+v", whole, 1+step%16, pieces)
		}
	})
}

// FuzzRespParserNetHTTP compares the parser with net/http's on what both
// accept: the same final status and the same body.
func FuzzRespParserNetHTTP(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), false)
	f.Add([]byte("HTTP/1.0 200 OK\r\n\r\nuntil close"), false)
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabc"), true)
	f.Fuzz(func(t *testing.T, in []byte, head bool) {
		ours := parseAll(fuzzLimits, string(in), 0, true, head)
		if !ours.done || ours.reason != "" {
			return
		}
		method := "GET"
		if head {
			method = "HEAD"
		}
		br := bufio.NewReader(bytes.NewReader(in))
		var resp *http.Response
		for range maxInterim + 1 {
			r, err := http.ReadResponse(br, &http.Request{Method: method})
			if err != nil {
				return
			}
			if r.StatusCode/100 != 1 || r.StatusCode == 101 {
				resp = r
				break
			}
		}
		if resp == nil {
			return
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return
		}
		if resp.StatusCode != ours.status || string(body) != ours.body {
			t.Fatalf("net/http: %d %q; ours: %d %q", resp.StatusCode, body, ours.status, ours.body)
		}
	})
}
