package verify

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// row is one table-driven check: a request and what the contract expects.
type row struct {
	name   string
	req    request
	status []int // accepted statuses; the first is the one the contract names
	// protocol marks a request malformed at the HTTP level (bad framing,
	// duplicate Content-Length): the answer may come from the server
	// library before any handler, so only "no 5xx" is required, and a
	// closed connection is accepted too.
	protocol bool
	allow    string                // for a 405: the method the Allow header must list
	body     func(*response) error // further checks of a 2xx body (JSON shape, values)
	errBody  func(*response) error // further checks of a 4xx body
	needs    func() error          // if it returns an error, the row is skipped with it
	after    func(*response)       // called with every response before it is judged, to track state
	metrics  bool                  // the response is /metrics text, not JSON
}

// checkOf turns a row into a check of workload w.
func checkOf(w string, r row) check {
	name := r.name
	if w != "" {
		name = w + "/" + name
	}
	return check{workload: w, name: name, run: func(ctx context.Context, s *session) error {
		if r.needs != nil {
			if err := r.needs(); err != nil {
				return skipError(err.Error())
			}
		}
		resp := s.do(ctx, r.req)
		if r.after != nil && !resp.none {
			r.after(resp)
		}
		return r.expect(resp)
	}}
}

// rows turns a table into checks of workload w.
func rows(w string, rs []row) []check {
	cs := make([]check, len(rs))
	for i, r := range rs {
		cs[i] = checkOf(w, r)
	}
	return cs
}

// expect checks resp against the row and the contract's common rules.
func (r row) expect(resp *response) error {
	if resp.none {
		if r.protocol {
			return nil
		}
		return fmt.Errorf("no response: %v", resp.err)
	}
	if resp.err != nil {
		return resp.err
	}
	if resp.status >= 500 && !slices.Contains(r.status, resp.status) {
		return fmt.Errorf("got %d, want %s: a 5xx is never an answer to an input", resp.status, want(r.status))
	}
	if r.protocol {
		return nil
	}
	if !slices.Contains(r.status, resp.status) {
		return fmt.Errorf("got status %d, want %s", resp.status, want(r.status))
	}
	if r.metrics {
		return r.checkBody(resp)
	}
	if err := commonRules(resp); err != nil {
		return err
	}
	if resp.status == 405 && r.allow != "" && !allows(resp, r.allow) {
		return fmt.Errorf("405 without %s in its Allow header (got Allow: %q)", r.allow, resp.header.Get("Allow"))
	}
	return r.checkBody(resp)
}

func (r row) checkBody(resp *response) error {
	if r.body != nil && resp.status/100 == 2 {
		return r.body(resp)
	}
	if r.errBody != nil && resp.status/100 == 4 {
		return r.errBody(resp)
	}
	return nil
}

// commonRules checks what every JSON answer of the contract shares:
// the Content-Type, a JSON body, and {"error":"..."} on errors.
func commonRules(resp *response) error {
	if !resp.isJSON() {
		return fmt.Errorf("Content-Type %q, want application/json", resp.header.Get("Content-Type"))
	}
	m, err := resp.object()
	if err != nil {
		return err
	}
	if resp.status >= 400 {
		msg, ok := m["error"].(string)
		if !ok || msg == "" {
			return fmt.Errorf(`a %d body must be {"error":"<message>"}, got %s`, resp.status, trunc(string(resp.body), 200))
		}
	}
	return nil
}

// allows reports whether the Allow header lists method.
func allows(resp *response, method string) bool {
	for _, v := range resp.header.Values("Allow") {
		for _, m := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(m), method) {
				return true
			}
		}
	}
	return false
}

func want(st []int) string {
	if len(st) == 1 {
		return strconv.Itoa(st[0])
	}
	s := make([]string, len(st))
	for i, v := range st {
		s[i] = strconv.Itoa(v)
	}
	return "one of " + strings.Join(s, ", ")
}

// fields returns a body check: the object has at least these keys, with
// these values. A string must match exactly, an int or int64 must be an
// integral JSON number equal to it, a kind checks only the JSON type.
func fields(want map[string]any) func(*response) error {
	return func(resp *response) error {
		m, err := resp.object()
		if err != nil {
			return err
		}
		return matchFields(m, want)
	}
}

// kind is a JSON type a field must have, whatever its value.
type kind int

const (
	anyString kind = iota // any JSON string
	anyID                 // a JSON integer in 1 .. 2^53-1
	anyInt                // any integral JSON number
)

func matchFields(m map[string]any, want map[string]any) error {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w := want[k]
		got, ok := m[k]
		if !ok {
			return fmt.Errorf("body lacks field %q", k)
		}
		switch w := w.(type) {
		case string:
			if s, ok := got.(string); !ok || s != w {
				return fmt.Errorf("field %q = %s, want %q", k, show(got), w)
			}
		case int64:
			if n, ok := integer(got); !ok || n != w {
				return fmt.Errorf("field %q = %s, want the JSON number %d", k, show(got), w)
			}
		case int:
			if n, ok := integer(got); !ok || n != int64(w) {
				return fmt.Errorf("field %q = %s, want the JSON number %d", k, show(got), w)
			}
		case kind:
			switch w {
			case anyString:
				if _, ok := got.(string); !ok {
					return fmt.Errorf("field %q = %s, want a JSON string", k, show(got))
				}
			case anyID:
				if n, ok := integer(got); !ok || n < 1 || n > maxID {
					return fmt.Errorf("field %q = %s, want an id (a JSON integer in 1 .. 2^53-1)", k, show(got))
				}
			case anyInt:
				if _, ok := integer(got); !ok {
					return fmt.Errorf("field %q = %s, want a JSON integer", k, show(got))
				}
			}
		default:
			panic(fmt.Sprintf("matchFields: unsupported want %T", w))
		}
	}
	return nil
}

// show renders a decoded JSON value for a message.
func show(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(trunc(v, 80))
	case nil:
		return "null"
	default:
		return trunc(fmt.Sprint(v), 80)
	}
}

// maxID is the largest id the contract allows: 2^53-1.
const maxID = 1<<53 - 1
