package load

import (
	"errors"
	"net/url"
	"strings"
	"time"
)

// Target is a one-step Scenario for a plain URL attack: every iteration
// sends the same request, and any non-2xx status is an error.
type Target struct {
	// Method defaults to GET.
	Method string
	// URL is an absolute http:// URL.
	URL string
	// Header fields are sent with every request.
	Header []HeaderField
	// Body is sent with every request.
	Body []byte
	// Label names the step in results; default "METHOD /path".
	Label string
}

var _ Scenario = (*Target)(nil)

// Validate checks the URL.
func (t *Target) Validate() error {
	if _, _, _, err := splitURL(t.URL); err != nil {
		return err
	}
	if _, err := url.Parse(t.URL); err != nil {
		return err
	}
	if strings.ContainsAny(t.Method, " \r\n") {
		return errors.New("method: must be one word")
	}
	return nil
}

// Steps returns the one label.
func (t *Target) Steps() []string {
	if t.Label != "" {
		return []string{t.Label}
	}
	m := t.Method
	if m == "" {
		m = "GET"
	}
	path := "/"
	if _, _, p, err := splitURL(t.URL); err == nil {
		path = p
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
	}
	return []string{m + " " + path}
}

// NewUser returns the target itself: it has no per-user state.
func (t *Target) NewUser(int) User { return targetUser{t} }

type targetUser struct{ t *Target }

func (u targetUser) Request(_, _ int, req *Request) error {
	req.Method, req.URL = u.t.Method, u.t.URL
	req.Header = append(req.Header, u.t.Header...)
	req.Body = append(req.Body, u.t.Body...)
	return nil
}

func (targetUser) Check(int, int, *Response) error { return nil }

// StatusChecked returns sc with every step declared as asserting its own
// status (see StatusChecker), for scenarios whose Check always looks at the
// status, so the engine adds no "2xx" rule of its own. Pauses are kept.
func StatusChecked(sc Scenario) Scenario { return statusChecked{sc} }

type statusChecked struct{ Scenario }

func (s statusChecked) NewUser(n int) User { return &statusCheckedUser{s.Scenario.NewUser(n)} }

// RenewUser renews the wrapped scenario's user where it can be renewed
// (UserRenewer).
func (s statusChecked) RenewUser(old User, n int) User {
	r, ok := s.Scenario.(UserRenewer)
	o, mine := old.(*statusCheckedUser)
	if !ok || !mine {
		return s.NewUser(n)
	}
	o.User = r.RenewUser(o.User, n)
	return o
}

func (s statusChecked) Pause(step int) time.Duration {
	if p, ok := s.Scenario.(Pauser); ok {
		return p.Pause(step)
	}
	return 0
}

// lazyReads reports whether the open model's loops may read sc's
// responses lazily, at their wakes (loop_linux.go): one step, no pause.
func lazyReads(sc Scenario, steps int) bool {
	return steps == 1 && !hasPauses(sc, steps)
}

// hasPauses reports whether sc pauses after any of its steps (steps
// of them): a Pauser whose Pause is above zero for one of them. A
// Pauser's pause is a property of its step, so asking once per step
// says whether any iteration will pause. The scenario language's
// scenarios are all Pausers, with or without think times, so the type
// alone says nothing (it once kept every scenario off the loop's lazy
// reads).
func hasPauses(sc Scenario, steps int) bool {
	p, ok := sc.(Pauser)
	if !ok {
		return false
	}
	for i := range steps {
		if p.Pause(i) > 0 {
			return true
		}
	}
	return false
}

type statusCheckedUser struct{ User }

func (*statusCheckedUser) ChecksStatus(int) bool { return true }

var (
	_ Pauser        = statusChecked{}
	_ StatusChecker = (*statusCheckedUser)(nil)
	_ UserRenewer   = statusChecked{}
)
