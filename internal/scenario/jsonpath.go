package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unsafe"
)

// pathElem is one step of a JSON path: an object key, or an array index
// when index >= 0.
type pathElem struct {
	key   string
	index int
}

// jsonPath is a compiled JSON path such as $.items[0].id.
type jsonPath struct {
	text  string
	elems []pathElem
}

// errPathHint tells what a JSON path looks like.
const errPathHint = `paths look like $.id, $.client.balance, $.items[0].id or $["odd key"]`

// compilePath parses the path subset: $ then any of .name, [N], ["name"].
func compilePath(s string) (jsonPath, error) {
	p := jsonPath{text: s}
	if s == "" || s[0] != '$' {
		return p, errors.New("a JSON path must start with $")
	}
	i := 1
	for i < len(s) {
		switch s[i] {
		case '.':
			j := i + 1
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			if j == i+1 {
				return p, errors.New("empty key after '.' at offset " + strconv.Itoa(i))
			}
			p.elems = append(p.elems, pathElem{key: s[i+1 : j], index: -1})
			i = j
		case '[':
			end := bytes.IndexByte([]byte(s[i:]), ']')
			if end < 0 {
				return p, errors.New("unclosed '[' at offset " + strconv.Itoa(i))
			}
			inner := s[i+1 : i+end]
			if len(inner) >= 2 && inner[0] == '"' && inner[len(inner)-1] == '"' {
				k, err := strconv.Unquote(inner)
				if err != nil {
					return p, errors.New("bad quoted key " + inner)
				}
				p.elems = append(p.elems, pathElem{key: k, index: -1})
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 || inner[0] == '+' {
					return p, errors.New("array index must be a number >= 0, got [" + inner + "]")
				}
				p.elems = append(p.elems, pathElem{index: n})
			}
			i += end + 1
		default:
			return p, errors.New("unexpected " + strconv.QuoteRune(rune(s[i])) + " at offset " + strconv.Itoa(i))
		}
	}
	return p, nil
}

// lookup returns the raw JSON value at p in data, or false when the path
// does not exist (or data is not JSON of the right shape). It does not
// validate the parts of data it skips.
func (p *jsonPath) lookup(data []byte) ([]byte, bool) {
	i := skipWS(data, 0)
	for _, el := range p.elems {
		if i >= len(data) {
			return nil, false
		}
		if el.index < 0 {
			if data[i] != '{' {
				return nil, false
			}
			i = skipWS(data, i+1)
			for {
				if i >= len(data) || data[i] != '"' {
					return nil, false
				}
				end, esc := scanString(data, i)
				if end < 0 {
					return nil, false
				}
				key := data[i+1 : end-1]
				i = skipWS(data, end)
				if i >= len(data) || data[i] != ':' {
					return nil, false
				}
				i = skipWS(data, i+1)
				if keyEqual(key, esc, el.key) {
					break
				}
				if i = skipValue(data, i); i < 0 {
					return nil, false
				}
				i = skipWS(data, i)
				if i >= len(data) || data[i] != ',' {
					return nil, false
				}
				i = skipWS(data, i+1)
			}
		} else {
			if data[i] != '[' {
				return nil, false
			}
			i = skipWS(data, i+1)
			if i < len(data) && data[i] == ']' {
				return nil, false
			}
			for n := 0; n < el.index; n++ {
				if i = skipValue(data, i); i < 0 {
					return nil, false
				}
				i = skipWS(data, i)
				if i >= len(data) || data[i] != ',' {
					return nil, false
				}
				i = skipWS(data, i+1)
			}
		}
	}
	end := skipValue(data, i)
	if end < 0 || end == i {
		return nil, false
	}
	return data[i:end], true
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString returns the index after the string starting at data[i] (a
// quote) and whether it holds escapes, or -1.
func scanString(data []byte, i int) (int, bool) {
	esc := false
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j + 1, esc
		}
	}
	return -1, esc
}

// skipValue returns the index after the JSON value starting at data[i], or
// -1 when it is cut short.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		end, _ := scanString(data, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, _ := scanString(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
			j++
		}
		return j
	}
}

// keyEqual reports whether the raw key bytes (escaped when esc) equal k.
func keyEqual(raw []byte, esc bool, k string) bool {
	if !esc {
		return string(raw) == k
	}
	s, ok := unquoteJSON(raw)
	return ok && s == k
}

// unquoteJSON decodes the inside of a JSON string (without its quotes).
func unquoteJSON(inner []byte) (string, bool) {
	quoted := make([]byte, 0, len(inner)+2)
	quoted = append(append(append(quoted, '"'), inner...), '"')
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

// bytesToString views b as a string without copying; the string must not
// outlive b's contents.
func bytesToString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// rawKind classifies a raw JSON value by its first byte.
func rawKind(raw []byte) kind {
	switch raw[0] {
	case '"':
		return kString
	case 't', 'f':
		return kBool
	case 'n':
		return kNull
	case '{', '[':
		return kRaw
	}
	return kNumber
}

// equalJSON reports whether raw (a JSON value) equals the value of kind k
// whose text form is text, comparing by value: numbers numerically,
// strings after decoding escapes.
func equalJSON(raw []byte, k kind, text []byte) bool {
	rk := rawKind(raw)
	if rk != k {
		return false
	}
	switch k {
	case kString:
		inner := raw[1 : len(raw)-1]
		if bytes.IndexByte(inner, '\\') < 0 {
			return bytes.Equal(inner, text)
		}
		s, ok := unquoteJSON(inner)
		return ok && s == string(text)
	case kNumber:
		if bytes.Equal(raw, text) {
			return true
		}
		a, err1 := strconv.ParseFloat(bytesToString(raw), 64)
		b, err2 := strconv.ParseFloat(bytesToString(text), 64)
		return err1 == nil && err2 == nil && a == b
	}
	return bytes.Equal(raw, text)
}

// textOf returns the text form of a raw JSON value: strings decoded,
// everything else as is.
func textOf(dst, raw []byte) []byte {
	if rawKind(raw) != kString {
		return append(dst, raw...)
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return append(dst, inner...)
	}
	s, _ := unquoteJSON(inner)
	return append(dst, s...)
}

// appendJSONString appends s's characters escaped for the inside of a JSON
// string.
func appendJSONString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
