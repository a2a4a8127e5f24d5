package scenario

import (
	"regexp"
	"strconv"

	"github.com/showdownlab/showdown/load"
	"gopkg.in/yaml.v3"
)

// regexCapture captures a group of a regular expression's match in the
// response body or header block (JMeter's Regular Expression Extractor).
type regexCapture struct {
	re      *regexp.Regexp
	group   int  // 0: the whole match
	match   int  // 1: the first match, 2: the second, ...
	headers bool // search the raw header block instead of the body
}

// find returns the group of the configured match in src.
func (r *regexCapture) find(src []byte) ([]byte, bool) {
	if r.match == 1 {
		m := r.re.FindSubmatchIndex(src)
		if m == nil || m[2*r.group] < 0 {
			return nil, false
		}
		return src[m[2*r.group]:m[2*r.group+1]], true
	}
	all := r.re.FindAllSubmatchIndex(src, r.match)
	if len(all) < r.match {
		return nil, false
	}
	m := all[r.match-1]
	if m[2*r.group] < 0 {
		return nil, false
	}
	return src[m[2*r.group]:m[2*r.group+1]], true
}

// captureForm reads the long form of a capture: exactly one source (json,
// header or regex), a default, and for regex its group, match and from. It
// fills c's regex and default and returns the json or header source.
func (p *parser) captureForm(n *yaml.Node, field string, c *capture) (src string, srcNode *yaml.Node, isHeader, ok bool) {
	list, f := p.mapping(n, field, captureKeys)
	var sources []kv
	for _, pr := range list {
		if pr.key == "json" || pr.key == "header" || pr.key == "regex" {
			sources = append(sources, pr)
		}
	}
	if len(sources) != 1 {
		p.errAt(n, field, "write {json: $.id}, {header: Location} or {regex: 'id=(\\d+)'}", "want exactly one of json, header, regex")
		return "", nil, false, false
	}
	s := sources[0]
	if d, has := f["default"]; has {
		if v, good := p.scalar(d.v, join(field, "default")); good {
			c.def = &value{text: v.text, kind: v.kind, set: true}
		}
	}
	if s.key != "regex" {
		for _, k := range []string{"group", "match", "from"} {
			if m, has := f[k]; has {
				p.errAt(m.k, join(field, k), "group, match and from go with regex", "%s is only for a regex capture", k)
			}
		}
		return s.v.Value, s.v, s.key == "header", true
	}
	rc := &regexCapture{group: 1, match: 1}
	rc.re = p.regex(s.v, join(field, "regex"))
	if rc.re == nil {
		return "", nil, false, false
	}
	if rc.re.NumSubexp() == 0 {
		rc.group = 0
	}
	if g, has := f["group"]; has {
		rc.group = p.intIn(g.v, join(field, "group"), 0, rc.re.NumSubexp(),
			"the group's number: 0 for the whole match, 1 for the first (...)")
	}
	if m, has := f["match"]; has {
		rc.match = p.intIn(m.v, join(field, "match"), 1, 1<<20, "1 for the first match, 2 for the second, ...")
	}
	if fr, has := f["from"]; has {
		switch fr.v.Value {
		case "body":
		case "headers":
			rc.headers = true
		default:
			p.errAt(fr.v, join(field, "from"), "write from: body or from: headers", "unknown source %s", describe(fr.v))
		}
	}
	c.re = rc
	return "", nil, false, true
}

// regex compiles a regular expression (Go's RE2 syntax) given at n.
func (p *parser) regex(n *yaml.Node, field string) *regexp.Regexp {
	s, ok := p.str(n, field)
	if !ok {
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		p.errAt(n, field, "Go's RE2 syntax: no look-around or back-references", "bad regular expression: %v", err)
		return nil
	}
	return re
}

// intIn reads an integer in lo..hi.
func (p *parser) intIn(n *yaml.Node, field string, lo, hi int, hint string) int {
	i, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || i < lo || i > hi {
		p.errAt(n, field, hint, "want an integer in %d..%d, got %s", lo, hi, describe(n))
		return lo
	}
	return i
}

// captureRegex stores c's regular expression group found in resp, or its
// default.
func (c *capture) captureRegex(sl *value, resp *load.Response) error {
	src := resp.Body
	if c.re.headers {
		src = resp.RawHeader
	}
	v, ok := c.re.find(src)
	if !ok {
		if c.setDefault(sl) {
			return nil
		}
		return &load.CheckError{Reason: "capture " + c.name + ": no match of " + strconv.Quote(clip([]byte(c.re.re.String())))}
	}
	sl.text, sl.kind, sl.set = append(sl.text[:0], v...), kString, true
	if jsonNumberRe.Match(v) {
		sl.kind = kNumber
	}
	return nil
}

// setDefault stores c's default, if it has one.
func (c *capture) setDefault(sl *value) bool {
	if c.def == nil {
		return false
	}
	sl.text, sl.kind, sl.set = append(sl.text[:0], c.def.text...), c.def.kind, true
	return true
}
