package load

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Defaults of Limits: what the engine accepts from a server.
const (
	// DefaultMaxLine is the longest status, header, chunk-size or trailer
	// line of a response, in bytes.
	DefaultMaxLine = 8 << 10
	// DefaultMaxHeaderBytes bounds a response's header block (status line,
	// header fields and, for chunked bodies, trailers), in bytes.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxHeaders bounds the header (and trailer) fields of a
	// response.
	DefaultMaxHeaders = 100
	// DefaultMaxChunk bounds one chunk of a chunked body, in bytes; a larger
	// chunk size is refused at once (so no size can overflow).
	DefaultMaxChunk = 16 << 20
	// DefaultMaxBody bounds a response body, in bytes. A longer body is
	// still read to its end (the connection stays usable) and counted in
	// the received bytes, but not kept, and the response is an error.
	DefaultMaxBody = 8 << 20
	// maxInterim bounds the 1xx responses skipped before a final one.
	maxInterim = 16
)

// Limits bound what the engine accepts in a response, so that no server can
// exhaust the generator's memory or CPU: a response over a limit is an error
// with its reason in the results, and the attack goes on. The zero value of
// a field means its Default* value.
type Limits struct {
	// MaxLine is the longest line of a response head (DefaultMaxLine).
	MaxLine int
	// MaxHeaderBytes bounds the header block (DefaultMaxHeaderBytes).
	MaxHeaderBytes int
	// MaxHeaders bounds the number of header fields (DefaultMaxHeaders).
	MaxHeaders int
	// MaxChunk bounds one chunk of a chunked body (DefaultMaxChunk).
	MaxChunk int64
	// MaxBody bounds a body (DefaultMaxBody); a longer one is read and
	// discarded while counted, and reported as ReasonBodyTooLarge.
	MaxBody int64
}

// Validate returns every problem with l.
func (l Limits) Validate() []error {
	var errs []error
	if l.MaxLine < 0 || l.MaxHeaderBytes < 0 || l.MaxHeaders < 0 || l.MaxChunk < 0 || l.MaxBody < 0 {
		errs = append(errs, errors.New("limits: must not be negative (0 means the default)"))
	}
	if l.MaxLine > 0 && l.MaxLine < 64 {
		errs = append(errs, fmt.Errorf("max-line %d: must be at least 64 bytes", l.MaxLine))
	}
	if l.MaxHeaderBytes > 0 && l.MaxHeaderBytes < 64 {
		errs = append(errs, fmt.Errorf("max-header-bytes %d: must be at least 64 bytes", l.MaxHeaderBytes))
	}
	if l.MaxChunk > 1<<40 || l.MaxBody > 1<<50 {
		errs = append(errs, errors.New("max-chunk must be at most 1 TiB and max-body at most 1 PiB"))
	}
	return errs
}

// withDefaults fills the zero fields of l with the Default* values.
func (l Limits) withDefaults() Limits {
	if l.MaxLine == 0 {
		l.MaxLine = DefaultMaxLine
	}
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxHeaders == 0 {
		l.MaxHeaders = DefaultMaxHeaders
	}
	if l.MaxChunk == 0 {
		l.MaxChunk = DefaultMaxChunk
	}
	if l.MaxBody == 0 {
		l.MaxBody = DefaultMaxBody
	}
	return l
}

// Reasons of responses the engine refuses, as counted in results.
const (
	ReasonMalformed      = "malformed response"
	ReasonStatusLine     = "malformed response: status line"
	ReasonHeaderLine     = "malformed response: header line"
	ReasonContentLength  = "malformed response: Content-Length"
	ReasonChunkSize      = "malformed response: chunk size"
	ReasonChunkEnd       = "malformed response: chunk not ended by CRLF"
	ReasonLineTooLong    = "response line over max-line"
	ReasonHeaderTooLarge = "response header over max-header-bytes"
	ReasonTooManyHeaders = "response header fields over max-headers"
	ReasonChunkTooLarge  = "response chunk over max-chunk"
	ReasonBodyTooLarge   = "response body over max-body"
	ReasonTooManyInterim = "too many 1xx responses"
)

// parseError is a response the parser refuses; Error is its reason.
type parseError struct{ reason string }

func (e *parseError) Error() string { return e.reason }

var (
	errMalformed      = &parseError{ReasonMalformed}
	errStatusLine     = &parseError{ReasonStatusLine}
	errHeaderLine     = &parseError{ReasonHeaderLine}
	errContentLength  = &parseError{ReasonContentLength}
	errChunkSize      = &parseError{ReasonChunkSize}
	errChunkEnd       = &parseError{ReasonChunkEnd}
	errLineTooLong    = &parseError{ReasonLineTooLong}
	errHeaderTooLarge = &parseError{ReasonHeaderTooLarge}
	errTooManyHeaders = &parseError{ReasonTooManyHeaders}
	errChunkTooLarge  = &parseError{ReasonChunkTooLarge}
	errBodyTooLarge   = &parseError{ReasonBodyTooLarge}
	errTooManyInterim = &parseError{ReasonTooManyInterim}
)

// Parser states.
const (
	stStatus     = iota // status line
	stHeader            // header fields
	stBody              // Content-Length body: left bytes to go
	stChunkSize         // chunk-size line
	stChunkData         // chunk data: left bytes to go
	stChunkEnd          // CRLF after chunk data
	stTrailer           // trailer fields after the last chunk
	stUntilClose        // body without length: runs until the server closes
	stDone
)

// respParser is the one HTTP/1.1 response parser of both engines. It is
// fed the bytes of a connection as they arrive, in pieces of any size,
// and keeps no more than one partial line of them, plus, when keep is set,
// the header block and a body of at most MaxBody bytes (for Check). It
// never allocates per response once its buffers have grown, and every
// count it keeps is bounded by a limit before it can overflow.
//
// RFC 9112 in short, as implemented: 1xx responses other than 101 are
// skipped; HEAD, 101, 204 and 304 responses have no body; chunked
// transfer coding wins over Content-Length; without either the body runs
// until the server closes; HTTP/1.0 and "Connection: close" end the
// connection after the response.
type respParser struct {
	lim  Limits
	head bool // the request was HEAD
	keep bool // keep the header block and the body

	st         int
	line       []byte // a line split across feeds
	status     int
	closeAfter bool
	chunked    bool
	length     int64 // Content-Length, -1 if none
	left       int64 // bytes left of the body or of the chunk
	bodyN      int64 // body bytes seen
	hdrBytes   int
	fields     int
	interim    int
	te         bool // a Transfer-Encoding other than chunked
	http10     bool

	hdr  []byte // header fields as received ("Name: value\r\n"), if keep
	body []byte // the body, de-chunked, if keep
}

func newRespParser(lim Limits, keep bool) *respParser {
	return &respParser{lim: lim.withDefaults(), keep: keep}
}

// reset prepares p for the response to a new request.
func (p *respParser) reset(head bool) {
	p.head = head
	p.interim = 0
	p.resetResponse()
	p.body = p.body[:0]
}

func (p *respParser) resetResponse() {
	p.st, p.status, p.closeAfter, p.chunked, p.te, p.http10 = stStatus, 0, false, false, false, false
	p.length, p.left, p.bodyN, p.hdrBytes, p.fields = -1, 0, 0, 0, 0
	p.line = p.line[:0]
	p.hdr = p.hdr[:0]
}

// done reports whether a whole response has been parsed.
func (p *respParser) done() bool { return p.st == stDone }

// started reports whether any byte of the response has been seen.
func (p *respParser) started() bool {
	return p.st != stStatus || len(p.line) > 0 || p.interim > 0
}

// feed parses b, the next bytes of the connection. It returns how many it
// consumed: all of b, or fewer when the response ended within b. err is a
// refused response; with done() still true (ReasonBodyTooLarge) the
// response was read to its end and the connection may carry the next one.
func (p *respParser) feed(b []byte) (int, error) {
	used := 0
	for used < len(b) && p.st != stDone {
		switch p.st {
		case stBody, stChunkData, stUntilClose:
			n := len(b) - used
			if p.st != stUntilClose && int64(n) > p.left {
				n = int(p.left)
			}
			p.bodyBytes(b[used : used+n])
			used += n
			if p.st == stUntilClose {
				continue
			}
			p.left -= int64(n)
			if p.left > 0 {
				continue
			}
			if p.st == stChunkData {
				p.st = stChunkEnd
				continue
			}
			p.st = stDone
		default:
			line, n, err := p.nextLine(b[used:])
			used += n
			if err != nil {
				return used, err
			}
			if line == nil {
				continue // the line goes on in the next feed
			}
			if err := p.onLine(line); err != nil {
				return used, err
			}
		}
	}
	if p.st == stDone && p.bodyN > p.lim.MaxBody {
		return used, errBodyTooLarge
	}
	return used, nil
}

// eof tells p that the server closed the connection. It reports whether
// that completes the response (a body without a length), and, as feed, a
// refusal of the completed response.
func (p *respParser) eof() (bool, error) {
	if p.st == stUntilClose {
		p.st = stDone
		if p.bodyN > p.lim.MaxBody {
			return true, errBodyTooLarge
		}
	}
	return p.st == stDone, nil
}

// nextLine returns the next whole line (with its line ending) from b and
// how many bytes of b it took; a nil line means b ended first, and the
// partial line was saved.
func (p *respParser) nextLine(b []byte) ([]byte, int, error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if len(p.line)+len(b) > p.lim.MaxLine {
			return nil, len(b), p.lineTooLong()
		}
		p.line = append(p.line, b...)
		return nil, len(b), nil
	}
	if len(p.line)+i+1 > p.lim.MaxLine {
		return nil, i + 1, p.lineTooLong()
	}
	if len(p.line) == 0 {
		return b[:i+1], i + 1, nil
	}
	p.line = append(p.line, b[:i+1]...)
	line := p.line
	p.line = p.line[:0]
	return line, i + 1, nil
}

// lineTooLong is the error of a line over MaxLine; a header block made of
// one huge line is also over MaxHeaderBytes, and says so.
func (p *respParser) lineTooLong() error {
	if p.st == stStatus || p.st == stHeader || p.st == stTrailer {
		if p.hdrBytes+p.lim.MaxLine > p.lim.MaxHeaderBytes {
			return errHeaderTooLarge
		}
	}
	return errLineTooLong
}

// onLine handles one line of the head, a chunk size or a chunk end.
func (p *respParser) onLine(line []byte) error {
	switch p.st {
	case stStatus:
		p.hdrBytes = len(line)
		return p.statusLine(line)
	case stHeader, stTrailer:
		p.hdrBytes += len(line)
		if p.hdrBytes > p.lim.MaxHeaderBytes {
			return errHeaderTooLarge
		}
		if len(trimEOL(line)) == 0 {
			if p.st == stTrailer {
				p.st = stDone
				return nil
			}
			return p.endOfHeader()
		}
		p.fields++
		if p.fields > p.lim.MaxHeaders {
			return errTooManyHeaders
		}
		name, value, ok := headerName(line)
		if !ok {
			return errHeaderLine
		}
		if p.st == stTrailer {
			return nil
		}
		if p.keep {
			p.hdr = append(p.hdr, line...)
		}
		return p.field(name, value)
	case stChunkSize:
		size, err := chunkSize(trimEOL(line), p.lim.MaxChunk)
		if err != nil {
			return err
		}
		if size == 0 {
			p.st = stTrailer
			return nil
		}
		p.st, p.left = stChunkData, size
		return nil
	case stChunkEnd:
		if len(trimEOL(line)) != 0 {
			return errChunkEnd
		}
		p.st = stChunkSize
	}
	return nil
}

// statusLine parses "HTTP/1.x NNN reason".
func (p *respParser) statusLine(line []byte) error {
	line = trimEOL(line)
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		(line[7] != '0' && line[7] != '1') || (len(line) > 12 && line[12] != ' ') {
		return errStatusLine
	}
	status := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return errStatusLine
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 {
		return errStatusLine
	}
	p.status, p.http10, p.st = status, line[7] == '0', stHeader
	p.closeAfter = p.http10
	return nil
}

// field takes note of the header fields that frame the message; value
// is the rest of the line after the colon, trimmed here, for these only.
func (p *respParser) field(name, value []byte) error {
	switch {
	case asciiEqualFold(name, "Content-Length"):
		n, ok := parseLength(bytes.TrimSpace(value))
		if !ok || (p.length >= 0 && n != p.length) {
			return errContentLength
		}
		p.length = n
	case asciiEqualFold(name, "Transfer-Encoding"):
		// RFC 9112, 6.1: in HTTP/1.0 the field cannot be trusted to frame
		// the body (net/http ignores it too); 1.0 closes after anyway.
		if p.http10 {
			return nil
		}
		if hasToken(value, "chunked") { // hasToken trims each token
			p.chunked = true
		} else {
			p.te = true
		}
	case asciiEqualFold(name, "Connection"):
		if hasToken(value, "close") {
			p.closeAfter = true
		} else if hasToken(value, "keep-alive") {
			p.closeAfter = false
		}
	}
	return nil
}

// endOfHeader decides how the body is framed.
func (p *respParser) endOfHeader() error {
	switch {
	case p.status/100 == 1 && p.status != 101:
		// An interim response (100 Continue, 103 Early Hints): the final
		// one follows on the same connection.
		p.interim++
		if p.interim > maxInterim {
			return errTooManyInterim
		}
		interim := p.interim
		p.resetResponse()
		p.interim = interim
		return nil
	case p.status == 101:
		// Switching Protocols: what follows is not HTTP/1.1 any more.
		p.closeAfter = true
		p.st = stDone
	case p.head || p.status == 204 || p.status == 304:
		p.st = stDone
	case p.chunked:
		p.st = stChunkSize
	case p.te:
		p.st, p.closeAfter = stUntilClose, true
	case p.length == 0:
		p.st = stDone
	case p.length > 0:
		p.st, p.left = stBody, p.length
	default:
		p.st, p.closeAfter = stUntilClose, true
	}
	return nil
}

// bodyBytes counts b and keeps it while the body is within MaxBody.
func (p *respParser) bodyBytes(b []byte) {
	if p.keep && p.bodyN+int64(len(b)) <= p.lim.MaxBody {
		p.body = append(p.body, b...)
	}
	p.bodyN += int64(len(b))
}

// headerField splits a header line "Name: value\r\n" into its name and its
// value without surrounding white space. It is the one header-line reader
// of the package (the parser and Response.Header use it). ok is false for
// a line without a colon, with an empty name, or with white space in the
// name (RFC 9112, 5.1: such lines must be refused).
func headerField(line []byte) (name, value []byte, ok bool) {
	name, rest, ok := headerName(line)
	return name, bytes.TrimSpace(rest), ok
}

// headerName is headerField without the trimming: the value is the rest
// of the line after the colon (the parser trims only the fields it reads).
func headerName(line []byte) (name, rest []byte, ok bool) {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return nil, nil, false
	}
	name = line[:colon]
	for _, c := range name {
		if c <= ' ' || c == 0x7f {
			return nil, nil, false
		}
	}
	return name, line[colon+1:], true
}

// trimEOL removes a trailing "\n" or "\r\n".
func trimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line
}

// parseLength parses a Content-Length: decimal digits only, at most 18 of
// them (so it cannot overflow).
func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	n := int64(0)
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// chunkSize parses a chunk-size line (hex digits, optionally followed by
// ";extensions"), refusing sizes over max before they can overflow.
func chunkSize(line []byte, max int64) (int64, error) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, " \t")
	if len(line) == 0 {
		return 0, errChunkSize
	}
	n := int64(0)
	for _, c := range line {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, errChunkSize
		}
		n = n<<4 | int64(d)
		if n > max {
			return 0, errChunkTooLarge
		}
	}
	return n, nil
}

// hasToken reports whether the comma-separated list v holds token (ASCII
// case-insensitive).
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var t []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			t, v = v, nil
		}
		if asciiEqualFold(bytes.TrimSpace(t), token) {
			return true
		}
	}
	return false
}

// ParseSize parses a size in bytes: "65536", "64KiB", "8MiB", "1GiB" (also
// "k", "KB", "M", "MB", "G", "GB", all powers of 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30},
		{"k", 1 << 10}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if v, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(v), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q: want a number of bytes, optionally with a unit, e.g. 65536, 64KiB, 8MiB", s)
	}
	return n * mult, nil
}

// FormatSize renders n as ParseSize reads it, in the largest exact unit.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
