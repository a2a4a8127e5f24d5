package load

import (
	"strings"
	"testing"
)

// parsed is what feeding one input to a respParser gave.
type parsed struct {
	used   int  // bytes consumed
	done   bool // a whole response was read (also when refused)
	status int
	close  bool
	body   string
	reason string // the refusal, or ""
}

// parseAll feeds in to a fresh parser in pieces of size step (0: all at
// once), then tells it about EOF if atEOF.
func parseAll(lim Limits, in string, step int, atEOF, head bool) parsed {
	p := newRespParser(lim, true)
	p.reset(head)
	var out parsed
	b := []byte(in)
	for len(b) > 0 && !p.done() {
		n := len(b)
		if step > 0 && step < n {
			n = step
		}
		used, err := p.feed(b[:n])
		out.used += used
		b = b[used:]
		if err != nil {
			out.reason = err.Error()
			break
		}
		if used < n {
			break
		}
	}
	if atEOF && out.reason == "" && !p.done() {
		if done, err := p.eof(); err != nil {
			out.reason = err.Error()
		} else if !done {
			out.reason = "unexpected EOF"
		}
	}
	out.done = p.done()
	if out.done {
		out.status, out.close, out.body = p.status, p.closeAfter, string(p.body)
	}
	return out
}

func TestRespParser(t *testing.T) {
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
	const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
	small := Limits{MaxLine: 64, MaxHeaderBytes: 128, MaxHeaders: 3, MaxChunk: 16, MaxBody: 8}
	many := "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-A: b\r\n", 4) + "Content-Length: 0\r\n\r\n"
	tests := []struct {
		name  string
		lim   Limits
		in    string
		atEOF bool
		head  bool
		want  parsed
	}{
		{"length", Limits{}, ok + "NEXT", false, false, parsed{len(ok), true, 200, false, "hello", ""}},                                                                                                     // stops at the response's end
		{"body arriving", Limits{}, ok[:len(ok)-1], false, false, parsed{len(ok) - 1, false, 0, false, "", ""}},                                                                                             // not done yet
		{"chunked", Limits{}, chunked, false, false, parsed{len(chunked), true, 200, false, "hello world", ""}},                                                                                             // de-chunked, extensions and trailers skipped
		{"chunked wins", Limits{}, "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", false, false, parsed{78, true, 200, false, "", ""}},                        // over Content-Length
		{"no content", Limits{}, "HTTP/1.1 204 No Content\r\n\r\n", false, false, parsed{27, true, 204, false, "", ""}},                                                                                     // 204 has no body
		{"not modified", Limits{}, "HTTP/1.1 304 NM\r\nContent-Length: 7\r\n\r\n", false, false, parsed{38, true, 304, false, "", ""}},                                                                      // 304 neither
		{"head", Limits{}, ok[:len(ok)-5], false, true, parsed{len(ok) - 5, true, 200, false, "", ""}},                                                                                                      // HEAD: length announced, no body
		{"close", Limits{}, "HTTP/1.1 503 X\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false, false, parsed{56, true, 503, true, "", ""}},                                                          // close announced
		{"http10", Limits{}, "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", false, false, parsed{39, true, 200, true, "x", ""}},                                                                           // HTTP/1.0 closes
		{"http10 keep-alive", Limits{}, "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx", false, false, parsed{63, true, 200, false, "x", ""}},                                     // unless kept alive
		{"until close", Limits{}, "HTTP/1.1 200 OK\r\n\r\nall of it", false, false, parsed{28, false, 0, false, "", ""}},                                                                                    // no length: waits for EOF
		{"until close, EOF", Limits{}, "HTTP/1.1 200 OK\r\n\r\nall of it", true, false, parsed{28, true, 200, true, "all of it", ""}},                                                                       // and ends there
		{"bare LF", Limits{}, "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", false, false, parsed{37, true, 200, false, "ok", ""}},                                                                             // lenient line ends
		{"early hints", Limits{}, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + ok, false, false, parsed{40 + len(ok), true, 200, false, "hello", ""}},                                                 // 1xx skipped
		{"continue", Limits{}, "HTTP/1.1 100 Continue\r\n\r\n" + ok, false, false, parsed{25 + len(ok), true, 200, false, "hello", ""}},                                                                     // 100 too
		{"switching", Limits{}, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\nbinary", false, false, parsed{48, true, 101, true, "", ""}},                                                          // 101 is final, and ends HTTP
		{"endless 1xx", Limits{}, strings.Repeat("HTTP/1.1 103 EH\r\n\r\n", maxInterim+1), false, false, parsed{19 * (maxInterim + 1), false, 0, false, "", ReasonTooManyInterim}},                          // bounded
		{"not http", Limits{}, "\x00\x01\x02 not http at all\r\n\r\n", false, false, parsed{21, false, 0, false, "", ReasonStatusLine}},                                                                     // garbage
		{"bad status", Limits{}, "HTTP/1.1 2x0 OK\r\n\r\n", false, false, parsed{17, false, 0, false, "", ReasonStatusLine}},                                                                                // status not digits
		{"status 099", Limits{}, "HTTP/1.1 099 OK\r\n\r\n", false, false, parsed{17, false, 0, false, "", ReasonStatusLine}},                                                                                // below 100
		{"no colon", Limits{}, "HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", false, false, parsed{26, false, 0, false, "", ReasonHeaderLine}},                                                                       // header without colon
		{"folded", Limits{}, "HTTP/1.1 200 OK\r\nX-A: b\r\n c\r\n\r\n", false, false, parsed{29, false, 0, false, "", ReasonHeaderLine}},                                                                    // obsolete line folding
		{"bad length", Limits{}, "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false, false, parsed{37, false, 0, false, "", ReasonContentLength}},                                                       // negative
		{"huge length", Limits{}, "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", false, false, parsed{55, false, 0, false, "", ReasonContentLength}},                                    // would overflow
		{"two lengths", Limits{}, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", false, false, parsed{55, false, 0, false, "", ReasonContentLength}},                                  // disagree
		{"bad chunk", Limits{}, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", false, false, parsed{51, false, 0, false, "", ReasonChunkSize}},                              // not hex
		{"chunk overflow", Limits{}, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nabc", false, false, parsed{65, false, 0, false, "", ReasonChunkTooLarge}},                    // no overflow, no wait
		{"chunk not ended", Limits{}, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", false, false, parsed{54, false, 0, false, "", ReasonChunkEnd}},                                    // data longer than its size
		{"long line", small, "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("a", 100) + "\r\n\r\n", false, false, parsed{0, false, 0, false, "", ReasonLineTooLong}},                                        // line cap
		{"many headers", small, many, false, false, parsed{0, false, 0, false, "", ReasonTooManyHeaders}},                                                                                                   // count cap
		{"big header", small, "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Aaaaaaaaaaaa: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\r\n", 3) + "\r\n", false, false, parsed{0, false, 0, false, "", ReasonHeaderTooLarge}}, // block cap
		{"big chunk", small, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n", false, false, parsed{51, false, 0, false, "", ReasonChunkTooLarge}},                                             // 17 > 16
		{"big body", small, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n123456789", false, false, parsed{47, true, 200, false, "", ReasonBodyTooLarge}},                                                    // read to its end, refused
		{"big body until close", small, "HTTP/1.1 200 OK\r\n\r\n123456789", true, false, parsed{28, true, 200, true, "", ReasonBodyTooLarge}},                                                               // refused at EOF
		{"big chunked body", small, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n5\r\n67890\r\n0\r\n\r\n", false, false, parsed{72, true, 200, false, "", ReasonBodyTooLarge}},       // over several chunks
	}
	for _, tt := range tests {
		for _, step := range []int{0, 1, 7} {
			got := parseAll(tt.lim, tt.in, step, tt.atEOF, tt.head)
			want := tt.want
			if want.used == 0 && want.reason != "" {
				want.used = got.used // where a cap trips depends on the pieces
			}
			if want.reason == ReasonBodyTooLarge {
				got.body = "" // a refused body's kept bytes are unspecified
			}
			if got != want {
				t.Errorf("%s, pieces of %d: got %+v, want %+v", tt.name, step, got, want)
			}
		}
	}
}

func TestResponseHeader(t *testing.T) {
	r := Response{RawHeader: []byte("Content-Type: text/plain\r\nX-Id:  42 \r\nBad Name: x\r\nX-Empty:\r\nx-id: 43\r\n")}
	tests := []struct {
		name, want string
		found      bool
	}{
		{"content-type", "text/plain", true}, // case-insensitive
		{"X-Id", "42", true},                 // white space trimmed, the first of two
		{"Bad Name", "", false},              // not a valid field name
		{"X-Empty", "", true},                // present, empty
		{"Missing", "", false},               // absent
	}
	for _, tt := range tests {
		if got := r.Header(tt.name); got != tt.want {
			t.Errorf("Header(%q) = %q, want %q", tt.name, got, tt.want)
		}
		if got, found := r.HeaderValue(tt.name); string(got) != tt.want || found != tt.found {
			t.Errorf("HeaderValue(%q) = %q, %v; want %q, %v", tt.name, got, found, tt.want, tt.found)
		}
	}
}

func TestLimitsValidate(t *testing.T) {
	tests := []struct {
		lim  Limits
		errs int
	}{
		{Limits{}, 0},                        // all defaults
		{Limits{MaxBody: 1 << 30}, 0},        // a larger body
		{Limits{MaxHeaders: -1}, 1},          // negative
		{Limits{MaxLine: 10}, 1},             // too small to hold a status line
		{Limits{MaxChunk: 1 << 41}, 1},       // beyond what the parser may count
		{Limits{MaxLine: 1, MaxBody: -1}, 2}, // every problem at once
	}
	for _, tt := range tests {
		if got := tt.lim.Validate(); len(got) != tt.errs {
			t.Errorf("%+v.Validate() = %v, want %d errors", tt.lim, got, tt.errs)
		}
	}
}

// BenchmarkRespParser parses a typical small keep-alive response, whole
// and in two pieces, on the goroutine engine's parser (which keeps the
// header and body): no allocation per response.
func BenchmarkRespParser(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Mon, 23 Nov 2026 07:00:00 GMT\r\nContent-Length: 13\r\n\r\nHello, World!")
	p := newRespParser(Limits{}, true)
	b.ReportAllocs()
	b.SetBytes(int64(len(resp)))
	for i := 0; i < b.N; i++ {
		p.reset(false)
		half := len(resp) / 2
		if i%2 == 0 {
			half = len(resp)
		}
		n, err := p.feed(resp[:half])
		if err == nil && half < len(resp) {
			_, err = p.feed(resp[n:])
		}
		if err != nil || !p.done() {
			b.Fatal(err)
		}
	}
}
