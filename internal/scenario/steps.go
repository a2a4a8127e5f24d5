package scenario

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// stepList returns the step nodes of the setup or steps section.
func (p *parser) stepList(f kv, section string, required bool) []*yaml.Node {
	if f.v == nil || f.v.Kind == yaml.ScalarNode && f.v.Tag == "!!null" {
		if required {
			p.errAt(f.k, section, "add steps: with at least one request; see docs/scenarios.md", "a scenario needs at least one step")
		}
		return nil
	}
	if f.v.Kind != yaml.SequenceNode || len(f.v.Content) == 0 {
		p.errAt(f.v, section, "write a list: each step starts with '- name: ...'", "want a non-empty list of steps, got %s", describe(f.v))
		return nil
	}
	out := make([]*yaml.Node, len(f.v.Content))
	for i, n := range f.v.Content {
		out[i] = resolve(n)
	}
	return out
}

// collectCaptures registers every capture name before the steps are
// compiled, so a use before the capturing step gets a precise message.
func (p *parser) collectCaptures(steps []*yaml.Node, section string, setup bool) {
	for i, n := range steps {
		if n.Kind != yaml.MappingNode {
			continue
		}
		var capNode *yaml.Node
		name := ""
		for j := 0; j+1 < len(n.Content); j += 2 {
			switch n.Content[j].Value {
			case "capture":
				capNode = resolve(n.Content[j+1])
			case "name":
				name = n.Content[j+1].Value
			}
		}
		if capNode == nil || capNode.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(capNode.Content); j += 2 {
			k := capNode.Content[j]
			field := join(fmt.Sprintf("%s[%d].capture", section, i), k.Value)
			if !identRe.MatchString(k.Value) || slices.Contains(builtinNames, k.Value) {
				p.errAt(k, field, "a capture name is letters, digits and _, and not one of "+strings.Join(builtinNames, ", "),
					"bad capture name %q", k.Value)
				continue
			}
			if sym, ok := p.syms[k.Value]; ok {
				if !sym.capture {
					p.errAt(k, field, "rename the capture or the variable", "%q is already a variable", k.Value)
				}
				continue
			}
			p.syms[k.Value] = &symbol{slot: p.s.nslots, capture: true, setup: setup, step: i, stepNm: name}
			p.s.nslots++
		}
	}
}

// stepResolver resolves names in step i's templates: variables, setup
// captures, and captures of earlier steps of the same section.
func (p *parser) stepResolver(i int, setup bool) resolver {
	return func(name string) (int, error) {
		sym, ok := p.syms[name]
		if !ok {
			return 0, p.unknown(name)
		}
		if !sym.capture || (sym.setup && !setup) || (sym.setup == setup && sym.step < i) {
			return sym.slot, nil
		}
		where := "steps"
		if sym.setup {
			where = "setup"
		}
		hint := "a step can only use captures of the steps before it"
		if sym.setup != setup {
			hint = "the setup section cannot use captures of the main steps"
		}
		return 0, &hintError{fmt.Sprintf("capture %q is set by %s[%d] (%q), which does not come before this step",
			name, where, sym.step, sym.stepNm), hint}
	}
}

func (p *parser) compileSteps(nodes []*yaml.Node, section string, setup bool) []*step {
	var out []*step
	for i, n := range nodes {
		out = append(out, p.step(n, fmt.Sprintf("%s[%d]", section, i), p.stepResolver(i, setup)))
	}
	return out
}

func (p *parser) step(n *yaml.Node, field string, r resolver) *step {
	st := &step{method: "GET"}
	_, f := p.mapping(n, field, stepKeys)
	if mf, ok := f["method"]; ok {
		if m, ok := p.str(mf.v, field+".method"); ok {
			up := strings.ToUpper(m)
			if !slices.Contains(methods, up) {
				p.errAt(mf.v, field+".method", "one of "+strings.Join(methods, ", "), "unknown method %q", m)
			}
			st.method = up
		}
	}
	rawURL := ""
	if uf, ok := f["url"]; !ok {
		p.errAt(n, field+".url", "every step needs url: /path or http://host/path", "missing url")
	} else if u, ok := p.str(uf.v, field+".url"); ok {
		rawURL = u
		p.url(st, uf.v, u, field+".url", r)
	}
	st.name = st.method + " " + rawURL
	if nf, ok := f["name"]; ok {
		if v, ok := p.str(nf.v, field+".name"); ok {
			st.name = v
		}
	}
	hasCT := false
	if hf, ok := f["headers"]; ok {
		pairs, _ := p.mapping(hf.v, field+".headers", nil)
		for _, pr := range pairs {
			hfield := join(field+".headers", pr.key)
			if !tokenRe.MatchString(pr.key) {
				p.errAt(pr.k, hfield, "", "bad header name %q", pr.key)
				continue
			}
			if strings.EqualFold(pr.key, "Content-Type") {
				hasCT = true
			}
			val, ok := p.scalar(pr.v, hfield)
			if !ok {
				continue
			}
			t, errs := compileTemplate(string(val.text), modeText, r)
			p.errsAt(pr.v, hfield, errs)
			h := header{name: pr.key, val: t}
			if c, ok := t.constant(); ok {
				h.constVal, h.isConst = string(c), true
			}
			st.headers = append(st.headers, h)
		}
	}
	if bf, ok := f["body"]; ok && bf.v.ShortTag() != "!!null" {
		b := bf.v
		if b.Kind == yaml.ScalarNode && b.ShortTag() == "!!str" {
			t, errs := compileTemplate(b.Value, modeText, r)
			p.errsAt(b, field+".body", errs)
			st.body = t
		} else {
			var t tmpl
			p.jsonTmpl(b, field+".body", r, &t)
			st.body = t
			if !hasCT {
				st.headers = append(st.headers, header{name: "Content-Type", constVal: "application/json", isConst: true})
			}
		}
		if st.body == nil {
			st.body = tmpl{}
		}
	}
	if ef, ok := f["expect"]; ok {
		p.expect(st, ef.v, field+".expect", r)
	}
	if cf, ok := f["capture"]; ok {
		p.captures(st, cf.v, field+".capture")
	}
	if pf, ok := f["pause"]; ok {
		if s, ok := p.str(pf.v, field+".pause"); ok {
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				p.errAt(pf.v, field+".pause", "write a duration such as 500ms or 2s", "bad pause %q", s)
			}
			st.pause = d
		}
	}
	return st
}

// url compiles a step's URL, prefixing relative paths with the base URL.
func (p *parser) url(st *step, n *yaml.Node, raw, field string, r resolver) {
	t, errs := compileTemplate(raw, modeText, r)
	p.errsAt(n, field, errs)
	switch {
	case strings.HasPrefix(raw, "/"):
		if p.s.baseURL == "" {
			p.errAt(n, field, "set base_url: in the file or pass a base URL (--base-url)", "relative URL %q and no base URL", raw)
			return
		}
		t = append(tmpl{{kind: segLit, lit: []byte(p.s.baseURL)}}, t...)
		if len(t) > 1 && t[1].kind == segLit {
			t = append(tmpl{{kind: segLit, lit: append([]byte(p.s.baseURL), t[1].lit...)}}, t[2:]...)
		}
	case strings.HasPrefix(raw, "http://"), strings.HasPrefix(raw, "https://"), strings.HasPrefix(raw, "{{"):
	default:
		p.errAt(n, field, "write a path such as /client/new/400, or an absolute http:// URL", "URL %q is neither a path nor absolute", raw)
		return
	}
	st.url, st.rawURL = t, raw
	if c, ok := t.constant(); ok {
		st.urlConst, st.constURL = string(c), true
	}
}

// jsonTmpl compiles a YAML mapping, list or scalar into a JSON template:
// numbers stay numbers, "{{name}}" alone becomes the value's JSON form, and
// a string mixing text and templates becomes a JSON string.
func (p *parser) jsonTmpl(n *yaml.Node, field string, r resolver, t *tmpl) {
	n = resolve(n)
	lit := func(b []byte) {
		if k := len(*t); k > 0 && (*t)[k-1].kind == segLit {
			(*t)[k-1].lit = append((*t)[k-1].lit, b...)
			return
		}
		*t = append(*t, seg{kind: segLit, lit: append([]byte(nil), b...)})
	}
	switch n.Kind {
	case yaml.MappingNode:
		pairs, _ := p.mapping(n, field, nil)
		lit([]byte("{"))
		for i, pr := range pairs {
			if i > 0 {
				lit([]byte(","))
			}
			k, _ := json.Marshal(pr.key)
			lit(append(k, ':'))
			p.jsonTmpl(pr.v, join(field, pr.key), r, t)
		}
		lit([]byte("}"))
	case yaml.SequenceNode:
		lit([]byte("["))
		for i, c := range n.Content {
			if i > 0 {
				lit([]byte(","))
			}
			p.jsonTmpl(c, fmt.Sprintf("%s[%d]", field, i), r, t)
		}
		lit([]byte("]"))
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" && strings.Contains(n.Value, "{{") {
			sub, errs := compileTemplate(n.Value, modeJSONString, r)
			p.errsAt(n, field, errs)
			if sg, ok := sub.single(); ok {
				sg.mode = modeJSONValue
				*t = append(*t, sg)
				return
			}
			lit([]byte(`"`))
			for _, sg := range sub {
				if sg.kind == segLit {
					lit(appendJSONString(nil, sg.lit))
				} else {
					*t = append(*t, sg)
				}
			}
			lit([]byte(`"`))
			return
		}
		v, ok := p.scalar(n, field)
		if ok {
			lit(appendJSON(nil, v.text, v.kind))
		}
	default:
		p.errAt(n, field, "", "want a value, got %s", describe(n))
	}
}

func (p *parser) expect(st *step, n *yaml.Node, field string, r resolver) {
	_, f := p.mapping(n, field, expectKeys)
	if sf, ok := f["status"]; ok {
		sfield := field + ".status"
		nodes := []*yaml.Node{sf.v}
		if sf.v.Kind == yaml.SequenceNode {
			nodes = sf.v.Content
			if len(nodes) == 0 {
				p.errAt(sf.v, sfield, "write status: 200 or status: [200, 201]", "empty status list")
			}
		}
		st.status = []int{}
		for _, sn := range nodes {
			var code int
			if sn.Kind != yaml.ScalarNode || sn.ShortTag() != "!!int" || sn.Decode(&code) != nil || code < 100 || code > 599 {
				p.errAt(sn, sfield, "write status: 200 or status: [200, 201]", "want an HTTP status code (100-599), got %s", describe(sn))
				continue
			}
			st.status = append(st.status, code)
		}
	}
	if jf, ok := f["json"]; ok {
		pairs, _ := p.mapping(jf.v, field+".json", nil)
		for _, pr := range pairs {
			jfield := join(field+".json", pr.key)
			path, err := compilePath(pr.key)
			if err != nil {
				p.errAt(pr.k, jfield, errPathHint, "bad JSON path %q: %v", pr.key, err)
				continue
			}
			jc := jsonCheck{path: path}
			switch pr.v.Kind {
			case yaml.MappingNode:
				_, ef := p.mapping(pr.v, jfield, []string{"exists"})
				e, ok := ef["exists"]
				if !ok {
					continue
				}
				var b bool
				if e.v.ShortTag() != "!!bool" || e.v.Decode(&b) != nil {
					p.errAt(e.v, jfield+".exists", "write exists: true or exists: false", "want true or false, got %s", describe(e.v))
					continue
				}
				jc.exists = -1
				if b {
					jc.exists = 1
				}
			case yaml.ScalarNode:
				if pr.v.ShortTag() == "!!str" && strings.Contains(pr.v.Value, "{{") {
					t, errs := compileTemplate(pr.v.Value, modeText, r)
					p.errsAt(pr.v, jfield, errs)
					jc.want, jc.wantKind = t, kString
					break
				}
				v, ok := p.scalar(pr.v, jfield)
				if !ok {
					continue
				}
				jc.want, jc.wantKind = tmpl{{kind: segLit, lit: v.text}}, v.kind
				if len(v.text) == 0 {
					jc.want = tmpl{}
				}
			default:
				p.errAt(pr.v, jfield, "assert on single fields, e.g. $.items[0].id: 7", "want a single value or {exists: true}, got %s", describe(pr.v))
				continue
			}
			st.json = append(st.json, jc)
		}
	}
	if mf, ok := f["body_matches"]; ok {
		st.matches = p.regex(mf.v, field+".body_matches")
	}
	if bf, ok := f["body_contains"]; ok {
		if s, ok := p.str(bf.v, field+".body_contains"); ok {
			t, errs := compileTemplate(s, modeText, r)
			p.errsAt(bf.v, field+".body_contains", errs)
			st.contains = t
		}
	}
}

func (p *parser) captures(st *step, n *yaml.Node, field string) {
	pairs, _ := p.mapping(n, field, nil)
	for _, pr := range pairs {
		cfield := join(field, pr.key)
		sym, ok := p.syms[pr.key]
		if !ok || !sym.capture {
			continue // reported by collectCaptures
		}
		c := capture{name: pr.key, slot: sym.slot}
		src, srcNode, isHeader := "", pr.v, false
		switch pr.v.Kind {
		case yaml.ScalarNode:
			src = pr.v.Value
		case yaml.MappingNode:
			var ok bool
			if src, srcNode, isHeader, ok = p.captureForm(pr.v, cfield, &c); !ok {
				continue
			}
			if c.re != nil {
				st.captures = append(st.captures, c)
				continue
			}
		default:
			p.errAt(pr.v, cfield, "write name: $.id, name: {header: Location} or name: {regex: 'id=(\\d+)'}", "want a JSON path, {header: Name} or {regex: ...}, got %s", describe(pr.v))
			continue
		}
		if isHeader {
			if !tokenRe.MatchString(src) {
				p.errAt(srcNode, cfield, "", "bad header name %q", src)
				continue
			}
			c.header = src
		} else {
			path, err := compilePath(src)
			if err != nil {
				p.errAt(srcNode, cfield, errPathHint, "bad JSON path %q: %v", src, err)
				continue
			}
			c.path = path
		}
		st.captures = append(st.captures, c)
	}
}
