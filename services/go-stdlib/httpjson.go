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

// apiHandler is an http.Handler that returns its failure instead of
// writing it, so every error path ends in the one place that maps it to a
// status and a JSON body.
type apiHandler func(w http.ResponseWriter, r *http.Request) error

func (h apiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h(w, r); err != nil {
		writeFailure(w, r, err)
	}
}

// writeFailure maps err to its status: an apiError says its own, a
// database connection failure is 503, anything else is a bug (500, logged).
func writeFailure(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		writeError(w, ae.status, ae.msg)
	case dbUnavailable(err):
		// The driver's text (addresses, user and database names) stays out of the answer.
		writeError(w, http.StatusServiceUnavailable, "database unavailable")
	default:
		errorLog.Error("internal error", "method", r.Method, "path", r.URL.Path, "error", err.Error())
		writeError(w, http.StatusInternalServerError, "internal error (a bug in the service; see its log)")
	}
}

// errorBody is the JSON shape of every error.
type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{msg})
}

// jsonBuffer pairs a buffer with an encoder that writes into it, so a
// response costs neither a buffer nor an encoder allocation.
type jsonBuffer struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonBuffers = sync.Pool{New: func() any {
	jb := new(jsonBuffer)
	jb.enc = json.NewEncoder(&jb.buf)
	jb.enc.SetEscapeHTML(false) // "<" is fine in an API body; keep it readable
	return jb
}}

// writeJSON writes v as the whole body, with its Content-Length.
func writeJSON(w http.ResponseWriter, status int, v any) {
	jb := jsonBuffers.Get().(*jsonBuffer)
	defer func() {
		if jb.buf.Cap() <= 64<<10 { // do not keep a huge buffer alive
			jb.buf.Reset()
			jsonBuffers.Put(jb)
		}
	}()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if err := jb.enc.Encode(v); err != nil {
		// Only our own types are encoded here: this is a bug.
		errorLog.Error("encode response", "error", err.Error())
		jb.buf.Reset()
		jb.buf.WriteString(`{"error":"internal error: cannot encode the response"}`)
		status = http.StatusInternalServerError
	}
	body := bytes.TrimSuffix(jb.buf.Bytes(), []byte{'\n'})
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// object is a decoded JSON object. Keys are matched exactly (encoding/json
// matches struct fields case-insensitively, which would accept "S" for
// "s"); a duplicate key keeps its last value.
type object map[string]json.RawMessage

// readObject reads the request body (at most 1 MiB) as a JSON object.
func readObject(w http.ResponseWriter, r *http.Request) (object, error) {
	if r.ContentLength > maxBodyBytes {
		return nil, errTooLarge
	}
	jb := jsonBuffers.Get().(*jsonBuffer)
	defer func() {
		if jb.buf.Cap() <= 64<<10 {
			jb.buf.Reset()
			jsonBuffers.Put(jb)
		}
	}()
	if _, err := jb.buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBodyBytes)); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errTooLarge
		}
		return nil, badRequest("cannot read the request body: %v", err)
	}
	var obj object
	if err := json.Unmarshal(jb.buf.Bytes(), &obj); err != nil {
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
func pathInt(r *http.Request, name string, lo, hi int64) (int64, error) {
	v, ok := parseDigits(r.PathValue(name))
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
