package scenario

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// kind is the JSON type of a value.
type kind uint8

const (
	kString kind = iota
	kNumber
	kBool
	kNull
	kRaw // an object or array, kept as raw JSON
)

// value is a variable's or capture's current value: its text form (a
// string's characters, a number's digits, raw JSON for the rest) and its
// JSON type.
type value struct {
	text []byte
	kind kind
	set  bool
}

// appendJSON appends v's JSON form.
func appendJSON(dst []byte, text []byte, k kind) []byte {
	if k != kString {
		return append(dst, text...)
	}
	dst = append(dst, '"')
	dst = appendJSONString(dst, text)
	return append(dst, '"')
}

// segKind says what a template segment produces.
type segKind uint8

const (
	segLit     segKind = iota // literal bytes
	segSlot                   // a variable or capture
	segUser                   // the user number
	segIter                   // the iteration number
	segUUID                   // a fresh random UUID
	segRandint                // a fresh random integer in [lo, hi]
)

// mode says how a segment's value is written.
type mode uint8

const (
	modeText       mode = iota // the text form, as is
	modeJSONString             // the text form escaped for the inside of a JSON string
	modeJSONValue              // the JSON form: strings quoted, numbers bare
)

// seg is one piece of a compiled template.
type seg struct {
	kind   segKind
	mode   mode
	lit    []byte
	slot   int
	name   string
	lo, hi int64
}

// tmpl is a compiled template: rendering appends its segments in order.
type tmpl []seg

// constant returns the template's text when it has no variable part.
func (t tmpl) constant() ([]byte, bool) {
	var b []byte
	for _, s := range t {
		if s.kind != segLit {
			return nil, false
		}
		b = append(b, s.lit...)
	}
	return b, true
}

// single returns the one non-literal segment of a template that is exactly
// "{{name}}", if it is one.
func (t tmpl) single() (seg, bool) {
	if len(t) == 1 && t[0].kind != segLit {
		return t[0], true
	}
	return seg{}, false
}

// resolver maps a name in a template to a slot, or explains why it cannot.
type resolver func(name string) (slot int, err error)

// builtinNames are the names a template knows without a definition.
var builtinNames = []string{"user", "iter", "uuid", "randint"}

// compileTemplate parses s, whose {{...}} references are resolved by
// resolve and written in mode m.
func compileTemplate(s string, m mode, resolve resolver) (tmpl, []error) {
	var t tmpl
	var errs []error
	lit := func(b string) {
		if b == "" {
			return
		}
		if n := len(t); n > 0 && t[n-1].kind == segLit {
			t[n-1].lit = append(t[n-1].lit, b...)
			return
		}
		t = append(t, seg{kind: segLit, lit: []byte(b)})
	}
	for {
		open := strings.Index(s, "{{")
		if open < 0 {
			lit(s)
			break
		}
		lit(s[:open])
		end := strings.Index(s[open:], "}}")
		if end < 0 {
			errs = append(errs, fmt.Errorf("unclosed '{{' in %q", s[open:]))
			break
		}
		expr := strings.Fields(s[open+2 : open+end])
		s = s[open+end+2:]
		if len(expr) == 0 {
			errs = append(errs, errors.New("empty '{{}}'"))
			continue
		}
		name, args := expr[0], expr[1:]
		sg := seg{mode: m, name: name}
		switch name {
		case "user", "iter", "uuid":
			sg.kind = map[string]segKind{"user": segUser, "iter": segIter, "uuid": segUUID}[name]
			if len(args) > 0 {
				errs = append(errs, fmt.Errorf("{{%s}} takes no arguments", name))
			}
		case "randint":
			sg.kind = segRandint
			var err error
			sg.lo, sg.hi, err = parseRange(args)
			if err != nil {
				errs = append(errs, fmt.Errorf("{{randint LO HI}}: %v", err))
			}
		default:
			if len(args) > 0 {
				errs = append(errs, fmt.Errorf("{{%s}}: a variable takes no arguments (got %q)", name, strings.Join(args, " ")))
			}
			slot, err := resolve(name)
			if err != nil {
				errs = append(errs, err)
			}
			sg.kind, sg.slot = segSlot, slot
		}
		t = append(t, sg)
	}
	return t, errs
}

// parseRange parses the two integer bounds of randint.
func parseRange(args []string) (lo, hi int64, err error) {
	if len(args) != 2 {
		return 0, 0, fmt.Errorf("want two integers, got %d arguments", len(args))
	}
	lo, err1 := strconv.ParseInt(args[0], 10, 64)
	hi, err2 := strconv.ParseInt(args[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("want two integers, got %q %q", args[0], args[1])
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("low bound %d is above high bound %d", lo, hi)
	}
	return lo, hi, nil
}

// randint returns a uniform integer in [lo, hi].
func randint(r *rand.Rand, lo, hi int64) int64 {
	span := uint64(hi - lo)
	if span == ^uint64(0) {
		return int64(r.Uint64())
	}
	return lo + int64(r.Uint64N(span+1))
}

// appendUUID appends a random (version 4) UUID drawn from r.
func appendUUID(dst []byte, r *rand.Rand) []byte {
	const hex = "0123456789abcdef"
	var b [16]byte
	a, c := r.Uint64(), r.Uint64()
	for i := 0; i < 8; i++ {
		b[i], b[8+i] = byte(a>>(8*i)), byte(c>>(8*i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	for i, x := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hex[x>>4], hex[x&15])
	}
	return dst
}
