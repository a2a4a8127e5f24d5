package load

import (
	"bytes"
	"time"
)

// Request is one HTTP request a virtual user is about to send. The engine
// owns it and reuses it from request to request; a User fills it in.
type Request struct {
	// Method is the HTTP method, e.g. "GET".
	Method string
	// URL is absolute: http://host:port/path?query.
	URL string
	// Header holds extra header fields. The engine writes Host,
	// Content-Length and User-Agent itself unless given here.
	Header []HeaderField
	// Body is the request body; nil or empty sends none.
	Body []byte
}

// HeaderField is one request header line.
type HeaderField struct{ Name, Value string }

// Reset empties r for reuse, keeping the capacity of its slices.
func (r *Request) Reset() {
	r.Method, r.URL = "", ""
	r.Header = r.Header[:0]
	r.Body = r.Body[:0]
}

// Response is what the engine read back for a Request. Its slices are only
// valid during the Check call that receives it.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// RawHeader is the header block as received, one "Name: value\r\n"
	// line per field, without the status line.
	RawHeader []byte
	// Body is the response body, de-chunked.
	Body []byte
}

// Header returns the value of the first header field called name (ASCII
// case-insensitive), or "" when there is none.
func (r *Response) Header(name string) string {
	v, _ := r.HeaderValue(name)
	return string(v)
}

// HeaderValue is Header without a copy: the value of the first header
// field called name, white space trimmed, and whether there is one (an
// empty value is one). Like the Response's slices, the value is valid
// only during the Check call; a scenario's header captures and checks
// read it so.
func (r *Response) HeaderValue(name string) ([]byte, bool) {
	h := r.RawHeader
	for len(h) > 0 {
		line := h
		if i := bytes.IndexByte(h, '\n'); i >= 0 {
			line, h = h[:i], h[i+1:]
		} else {
			h = nil
		}
		if n, value, ok := headerField(line); ok && asciiEqualFold(n, name) {
			return value, true
		}
	}
	return nil, false
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Scenario is what virtual users run: a fixed, ordered list of steps, one
// request each. One pass over the steps is an iteration.
type Scenario interface {
	// Steps returns the label of each step, in order. Results are kept per
	// label as well as in total.
	Steps() []string
	// NewUser returns the private state of virtual user number user (1 for
	// the first; unique across shards).
	NewUser(user int) User
}

// UserRenewer is an optional interface of a Scenario whose users can be
// renewed in place. RenewUser returns old, a User the Scenario made whose
// last iteration has ended, in the state NewUser(user) would return,
// reusing its memory; it may return a new User instead. The loop engine's
// open model gives every arrival a fresh user, and renewing the last one
// of the connection keeps that from allocating: at tens of thousands of
// arrivals a second the garbage collector's cycles otherwise make the
// pacer late.
type UserRenewer interface {
	RenewUser(old User, user int) User
}

// User is one virtual user's state: its variables and captures. The engine
// uses a User from one goroutine at a time.
type User interface {
	// Request fills req (already Reset) for step of iteration iter (0 for
	// the first). An error, such as a capture an earlier step failed to
	// provide, is recorded as a failure of that step and ends the
	// iteration.
	Request(iter, step int, req *Request) error
	// Check inspects the response to step. It returns nil, or a
	// *CheckError naming the assertion that failed; it also stores the
	// step's captures for later steps. A failed check ends the iteration.
	Check(iter, step int, resp *Response) error
}

// CheckError is a failed assertion on a response. Reason should be short
// and of low cardinality ("status 409, want 200", "$.balance: got 380, want
// 390"), because results are counted by reason.
type CheckError struct {
	Reason string
}

func (e *CheckError) Error() string { return e.Reason }

// Pauser is an optional interface of a Scenario with a pause (think time)
// after some steps; the engine waits Pause(step) after the step completes,
// in addition to any global think time.
type Pauser interface {
	Pause(step int) time.Duration
}
