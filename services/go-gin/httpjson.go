package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// Limits from the contract (workloads/README.md).
const (
	maxBodyBytes   = 1 << 20           // 1 MiB: a larger body is 413
	maxID          = 1<<53 - 1         // ids are in 1 .. 2^53-1
	maxAmount      = 1_000_000_000_000 // balances and amounts are at most 10^12
	maxPathDigits  = 16                // path parameters have at most 16 digits
	maxStringRunes = 255               // users: email and password length in code points
)

// apiError is a failure with the status and message the client gets.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func notFound(msg string) error { return &apiError{http.StatusNotFound, msg} }

// errNotConfigured answers every request of a workload whose database URL is unset.
var errNotConfigured = &apiError{http.StatusServiceUnavailable, "database not configured"}

// fail records err on the request and aborts it; the errors middleware
// (observe.go) answers it, so every error path ends in one place that maps
// it to a status and a JSON body.
func fail(c *gin.Context, err error) {
	_ = c.Error(err)
	c.Abort()
}

// writeFailure maps err to its status: an apiError says its own, a
// database connection failure is 503, anything else is a bug (500, logged).
func writeFailure(c *gin.Context, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		writeError(c, ae.status, ae.msg)
	case dbUnavailable(err):
		// The driver's text (addresses, user and database names) stays out of the answer.
		writeError(c, http.StatusServiceUnavailable, "database unavailable")
	default:
		errorLog.Error("internal error", "method", c.Request.Method, "path", c.Request.URL.Path, "error", err.Error())
		writeError(c, http.StatusInternalServerError, "internal error (a bug in the service; see its log)")
	}
}

// errorBody is the JSON shape of every error.
type errorBody struct {
	Error string `json:"error"`
}

func writeError(c *gin.Context, status int, msg string) {
	c.JSON(status, errorBody{msg})
}

// object is a decoded JSON object. Keys are matched exactly (encoding/json
// matches struct fields case-insensitively, which would accept "S" for
// "s"); a duplicate key keeps its last value.
type object map[string]json.RawMessage

// bodyBuffers recycles the buffers request bodies are read into.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readObject reads the request body (at most 1 MiB) as a JSON object.
func readObject(c *gin.Context) (object, error) {
	r := c.Request
	if r.ContentLength > maxBodyBytes {
		return nil, errTooLarge
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 64<<10 { // do not keep a huge buffer alive
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}()
	if _, err := buf.ReadFrom(http.MaxBytesReader(c.Writer, r.Body, maxBodyBytes)); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errTooLarge
		}
		return nil, badRequest("cannot read the request body: %v", err)
	}
	var obj object
	if err := json.Unmarshal(buf.Bytes(), &obj); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, errNotObject
		}
		return nil, badRequest("malformed JSON: %v", err)
	}
	if obj == nil { // the body was `null`
		return nil, errNotObject
	}
	return obj, nil
}

var (
	errTooLarge  = &apiError{http.StatusRequestEntityTooLarge, "request body over 1 MiB (1048576 bytes)"}
	errNotObject = &apiError{http.StatusBadRequest, "the request body must be a JSON object"}
)

// kind names the JSON type of a raw value for error messages.
func kind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// int reads the integer field name, following I-JSON (RFC 7493): the
// number is read as an IEEE-754 double, as JavaScript does, and must be
// integral and within [lo, hi]. So 10, 10.0 and 1e1 are the same value.
func (o object) int(name string, lo, hi int64) (int64, error) {
	raw, ok := o[name]
	if !ok {
		return 0, badRequest("field %q is required", name)
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, badRequest("field %q must be an integer, not %s", name, kind(raw))
	}
	return checkInt(name, string(raw), lo, hi)
}

// checkInt applies the I-JSON integer rules to the JSON number text.
func checkInt(name, text string, lo, hi int64) (int64, error) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil { // only ErrRange: the syntax was checked by the decoder
		return 0, badRequest("field %q is out of range %d .. %d", name, lo, hi)
	}
	if f != math.Trunc(f) {
		return 0, badRequest("field %q must be an integer, not %s", name, text)
	}
	// lo and hi are at most 2^53 in magnitude, so they are exact doubles.
	if f < float64(lo) || f > float64(hi) {
		return 0, badRequest("field %q is out of range %d .. %d", name, lo, hi)
	}
	return int64(f), nil
}

// string reads the non-empty string field name, free of U+0000.
func (o object) string(name string) (string, error) {
	raw, ok := o[name]
	if !ok {
		return "", badRequest("field %q is required", name)
	}
	if raw[0] != '"' {
		return "", badRequest("field %q must be a string, not %s", name, kind(raw))
	}
	s, err := unquote(raw)
	if err != nil {
		return "", badRequest("field %q: %v", name, err)
	}
	if s == "" {
		return "", badRequest("field %q must not be empty", name)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", badRequest("field %q must not contain U+0000", name)
	}
	return s, nil
}

// unquote decodes a JSON string literal already validated by the decoder.
// The common case, no escape and valid UTF-8, is a plain copy; otherwise
// encoding/json does it (and replaces invalid UTF-8 with U+FFFD).
func unquote(raw json.RawMessage) (string, error) {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// pathInt reads the path parameter name: decimal digits only, at most 16,
// within [lo, hi].
func pathInt(c *gin.Context, name string, lo, hi int64) (int64, error) {
	v, ok := parseDigits(c.Param(name))
	if !ok {
		return 0, badRequest("path parameter %q must be 1 to %d decimal digits", name, maxPathDigits)
	}
	if v < uint64(lo) || v > uint64(hi) {
		return 0, badRequest("path parameter %q is out of range %d .. %d", name, lo, hi)
	}
	return int64(v), nil
}

// parseDigits parses s if it matches ^[0-9]{1,16}$ (which always fits in
// a uint64).
func parseDigits(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > maxPathDigits {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}
