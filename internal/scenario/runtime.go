package scenario

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/showdownlab/showdown/load"
)

// user is one virtual user's state: its random stream, the values of its
// variables and captures, and reusable buffers.
type user struct {
	s     *Scenario
	n     int
	pcg   *rand.PCG // rng's source, reseeded when the user is renewed
	rng   *rand.Rand
	slots []value
	iter  int // the iteration whose variables are in slots; -1 before the first
	buf   []byte
	// urls keeps the last URL string of each step so an unchanged URL is
	// not allocated again.
	urls []string
	hdrs [][]string
	// feedPos is the user's own position in each data file.
	feedPos []int
}

// NewUser returns the state of virtual user number n.
func (s *Scenario) NewUser(n int) load.User {
	return s.newUser(n, s.steps)
}

func (s *Scenario) newUser(n int, steps []*step) *user {
	u := &user{
		s:     s,
		pcg:   new(rand.PCG),
		slots: make([]value, s.nslots),
		urls:  make([]string, len(steps)),
		hdrs:  make([][]string, len(steps)),
	}
	u.rng = rand.New(u.pcg)
	for i, st := range steps {
		u.hdrs[i] = make([]string, len(st.headers))
	}
	u.feedPos = make([]int, len(s.feeds))
	u.renew(n)
	return u
}

// RenewUser returns old, a user of s, in the state NewUser(n) would
// return, reusing its memory: the open model's fresh user per arrival
// then allocates nothing (load.UserRenewer). A user of another scenario
// is not reused.
func (s *Scenario) RenewUser(old load.User, n int) load.User {
	u, ok := old.(*user)
	if !ok || u.s != s || len(u.urls) != len(s.steps) {
		return s.NewUser(n)
	}
	u.renew(n)
	return u
}

// renew sets u's state to a fresh user number n's: its own random
// sequence, no variables but the constants and the setup's captures, and
// its feeds' first rows. The URL and header strings stay cached: they are
// compared before they are used.
func (u *user) renew(n int) {
	s := u.s
	u.n, u.iter = n, -1
	u.pcg.Seed(mix(uint64(s.seed)), mix(uint64(n)^0x6a09e667f3bcc909))
	// Copies: a user writes into its slots' buffers, which must not be
	// shared with other users.
	for i := range u.slots {
		u.slots[i] = value{text: u.slots[i].text[:0]}
	}
	for _, v := range s.vars {
		if v.kind == varConst {
			sl := &u.slots[v.slot]
			*sl = value{text: append(sl.text, v.val.text...), kind: v.val.kind, set: true}
		}
	}
	for slot, v := range s.setupVals {
		sl := &u.slots[slot]
		*sl = value{text: append(sl.text[:0], v.text...), kind: v.kind, set: v.set}
	}
	u.startFeeds()
}

// mix is SplitMix64's finalizer: it spreads nearby seeds (user 1, user 2)
// into unrelated generator states.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Request fills req for step of iteration iter.
func (u *user) Request(iter, step int, req *load.Request) error {
	return u.request(iter, step, u.s.steps[step], req)
}

// Check inspects the response to step and stores its captures.
func (u *user) Check(iter, step int, resp *load.Response) error {
	return u.check(u.s.steps[step], resp)
}

// startIteration evaluates the per-iteration variables.
func (u *user) startIteration(iter int) error {
	u.iter = iter
	u.iterateFeeds()
	for _, v := range u.s.vars {
		sl := &u.slots[v.slot]
		switch v.kind {
		case varConst:
			continue
		case varPick:
			c := &v.choices[u.rng.IntN(len(v.choices))]
			sl.text, sl.kind = append(sl.text[:0], c.text...), c.kind
		case varRandint:
			sl.text, sl.kind = strconv.AppendInt(sl.text[:0], randint(u.rng, v.lo, v.hi), 10), kNumber
		case varTemplate:
			var err error
			if u.buf, err = u.render(u.buf[:0], v.t); err != nil {
				return err
			}
			sl.text = append(sl.text[:0], u.buf...)
			sl.kind = kString
			if sg, ok := v.t.single(); ok {
				sl.kind = u.kindOf(sg)
			}
		}
		sl.set = true
	}
	return nil
}

func (u *user) request(iter, i int, st *step, req *load.Request) error {
	if iter != u.iter {
		if err := u.startIteration(iter); err != nil {
			return err
		}
	}
	req.Method = st.method
	if st.constURL {
		req.URL = st.urlConst
	} else {
		var err error
		if u.buf, err = u.render(u.buf[:0], st.url); err != nil {
			return err
		}
		if s, ok := st.urlIntern[string(u.buf)]; ok {
			req.URL = s
		} else {
			if string(u.buf) != u.urls[i] {
				u.urls[i] = string(u.buf)
			}
			req.URL = u.urls[i]
		}
	}
	for j := range st.headers {
		h := &st.headers[j]
		v := h.constVal
		if !h.isConst {
			var err error
			if u.buf, err = u.render(u.buf[:0], h.val); err != nil {
				return err
			}
			if string(u.buf) != u.hdrs[i][j] {
				u.hdrs[i][j] = string(u.buf)
			}
			v = u.hdrs[i][j]
		}
		req.Header = append(req.Header, load.HeaderField{Name: h.name, Value: v})
	}
	if st.body != nil {
		var err error
		if req.Body, err = u.render(req.Body[:0], st.body); err != nil {
			return err
		}
	}
	return nil
}

// render appends t's output to dst.
func (u *user) render(dst []byte, t tmpl) ([]byte, error) {
	for i := range t {
		sg := &t[i]
		switch sg.kind {
		case segLit:
			dst = append(dst, sg.lit...)
		case segSlot:
			v := &u.slots[sg.slot]
			if !v.set {
				return dst, fmt.Errorf("%s is not set (a setup capture: run the scenario's setup section first)", sg.name)
			}
			switch sg.mode {
			case modeText:
				dst = append(dst, v.text...)
			case modeJSONString:
				dst = appendJSONString(dst, v.text)
			default:
				dst = appendJSON(dst, v.text, v.kind)
			}
		case segUser:
			dst = strconv.AppendInt(dst, int64(u.n), 10)
		case segIter:
			dst = strconv.AppendInt(dst, int64(u.iter), 10)
		case segRandint:
			dst = strconv.AppendInt(dst, randint(u.rng, sg.lo, sg.hi), 10)
		case segUUID:
			if sg.mode == modeJSONValue {
				dst = append(dst, '"')
			}
			dst = appendUUID(dst, u.rng)
			if sg.mode == modeJSONValue {
				dst = append(dst, '"')
			}
		}
	}
	return dst, nil
}

// kindOf returns the JSON type of what a single-reference segment yields.
func (u *user) kindOf(sg seg) kind {
	switch sg.kind {
	case segSlot:
		return u.slots[sg.slot].kind
	case segUUID:
		return kString
	case segLit:
		return kString
	}
	return kNumber
}

func (u *user) check(st *step, resp *load.Response) error {
	if !statusOK(st.status, resp.Status) {
		return statusError(st.status, resp)
	}
	for i := range st.json {
		if err := u.checkJSON(&st.json[i], resp.Body); err != nil {
			return err
		}
	}
	if st.contains != nil {
		var err error
		if u.buf, err = u.render(u.buf[:0], st.contains); err != nil {
			return err
		}
		if !bytes.Contains(resp.Body, u.buf) {
			return &load.CheckError{Reason: "body does not contain " + strconv.Quote(clip(u.buf))}
		}
	}
	if st.matches != nil && !st.matches.Match(resp.Body) {
		return &load.CheckError{Reason: "body does not match " + strconv.Quote(clip([]byte(st.matches.String())))}
	}
	for i := range st.captures {
		c := &st.captures[i]
		sl := &u.slots[c.slot]
		if c.re != nil {
			if err := c.captureRegex(sl, resp); err != nil {
				return err
			}
			continue
		}
		if c.header != "" {
			v, ok := resp.HeaderValue(c.header)
			if !ok {
				if c.setDefault(sl) {
					continue
				}
				return &load.CheckError{Reason: "capture " + c.name + ": no " + c.header + " header"}
			}
			sl.text, sl.kind, sl.set = append(sl.text[:0], v...), kString, true
			continue
		}
		raw, ok := c.path.lookup(resp.Body)
		if !ok {
			if c.setDefault(sl) {
				continue
			}
			return &load.CheckError{Reason: "capture " + c.name + ": " + c.path.text + " missing"}
		}
		sl.text, sl.kind, sl.set = textOf(sl.text[:0], raw), rawKind(raw), true
	}
	return nil
}

func (u *user) checkJSON(jc *jsonCheck, body []byte) error {
	raw, ok := jc.path.lookup(body)
	switch {
	case jc.exists > 0 && ok, jc.exists < 0 && !ok:
		return nil
	case jc.exists < 0:
		return &load.CheckError{Reason: jc.path.text + ": present, want absent"}
	case !ok:
		return &load.CheckError{Reason: jc.path.text + ": missing"}
	}
	k := jc.wantKind
	want := jc.want
	if sg, single := want.single(); single {
		k = u.kindOf(sg)
	}
	var err error
	if u.buf, err = u.render(u.buf[:0], want); err != nil {
		return err
	}
	if equalJSON(raw, k, u.buf) {
		return nil
	}
	w := appendJSON(nil, u.buf, k)
	return &load.CheckError{Reason: jc.path.text + ": got " + clip(raw) + ", want " + clip(w)}
}

// clip shortens b for a failure reason.
func clip(b []byte) string {
	const n = 64
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

func statusOK(want []int, got int) bool {
	if want == nil {
		return got >= 200 && got <= 299
	}
	for _, w := range want {
		if w == got {
			return true
		}
	}
	return false
}

// statusError explains an unexpected status, with the body's short "error"
// message when it has one (the contract's error shape).
func statusError(want []int, resp *load.Response) error {
	var b strings.Builder
	b.WriteString("status " + strconv.Itoa(resp.Status))
	p := jsonPath{elems: []pathElem{{key: "error", index: -1}}}
	if raw, ok := p.lookup(resp.Body); ok && rawKind(raw) == kString && len(raw) <= 80 {
		b.WriteString(" (" + string(textOf(nil, raw)) + ")")
	}
	b.WriteString(", want ")
	if want == nil {
		b.WriteString("2xx")
	}
	for i, w := range want {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString(strconv.Itoa(w))
	}
	return &load.CheckError{Reason: b.String()}
}
