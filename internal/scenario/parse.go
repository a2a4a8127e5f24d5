package scenario

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The keys each part of a scenario file may hold.
var (
	topKeys     = []string{"name", "description", "base_url", "data", "vars", "setup", "steps"}
	stepKeys    = []string{"name", "method", "url", "headers", "body", "expect", "capture", "pause"}
	expectKeys  = []string{"status", "json", "body_contains", "body_matches"}
	varGenKeys  = []string{"pick", "pick_list", "randint"}
	captureKeys = []string{"json", "header", "regex", "group", "match", "from", "default"}
	methods     = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
)

var (
	identRe      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	jsonNumberRe = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	tokenRe      = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// hintError is a message with a hint, from code that has no node at hand.
type hintError struct{ msg, hint string }

func (e *hintError) Error() string { return e.msg }

// symbol is a name templates can use: a variable or a capture.
type symbol struct {
	slot    int
	capture bool
	setup   bool // captured by the setup section
	step    int  // index of the first step capturing it
	stepNm  string
	defined bool // a variable whose definition was read already
}

type parser struct {
	file string
	opts Options
	errs ErrorList
	syms map[string]*symbol
	s    *Scenario
	// fileVars names every variable of the file's vars section.
	fileVars map[string]bool
}

// Parse parses a scenario from data; filename is used in error messages.
func Parse(filename string, data []byte, opts Options) (*Scenario, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, ErrorList{syntaxError(filename, err)}
	}
	p := &parser{file: filename, opts: opts, syms: map[string]*symbol{},
		s: &Scenario{file: filename, seed: opts.Seed}}
	p.parse(&doc)
	if len(p.errs) > 0 {
		sort.SliceStable(p.errs, func(i, j int) bool {
			a, b := p.errs[i], p.errs[j]
			return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
		})
		return nil, p.errs
	}
	p.s.internURLs()
	return p.s, nil
}

func (p *parser) errAt(n *yaml.Node, field, hint, format string, args ...any) {
	e := &Error{File: p.file, Field: field, Msg: fmt.Sprintf(format, args...), Hint: hint}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	p.errs = append(p.errs, e)
}

// errsAt reports errors from template or path compilation at n.
func (p *parser) errsAt(n *yaml.Node, field string, errs []error) {
	for _, err := range errs {
		hint := ""
		var he *hintError
		if errors.As(err, &he) {
			hint = he.hint
		}
		p.errAt(n, field, hint, "%s", err.Error())
	}
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// kv is one key and value of a mapping.
type kv struct {
	key  string
	k, v *yaml.Node
}

// mapping checks that n is a mapping whose keys are unique scalars among
// allowed (any key when allowed is nil) and returns its pairs in order and
// by key.
func (p *parser) mapping(n *yaml.Node, field string, allowed []string) ([]kv, map[string]kv) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.errAt(n, field, "", "want a mapping (key: value lines), got %s", describe(n))
		return nil, map[string]kv{}
	}
	var list []kv
	byKey := map[string]kv{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.errAt(k, field, quoteHint(k), "a key must be a plain value, got %s", describe(k))
			continue
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			p.errAt(k, field, "write the keys out", "YAML merge keys (<<) are not supported")
			continue
		}
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			hint := didYouMean(k.Value, allowed)
			if hint == "" {
				hint = "allowed keys: " + strings.Join(allowed, ", ")
			}
			p.errAt(k, join(field, k.Value), hint, "unknown key %q", k.Value)
			continue
		}
		if prev, dup := byKey[k.Value]; dup {
			p.errAt(k, join(field, k.Value), "", "duplicate key %q (first at line %d)", k.Value, prev.k.Line)
			continue
		}
		pair := kv{key: k.Value, k: k, v: v}
		list = append(list, pair)
		byKey[k.Value] = pair
	}
	return list, byKey
}

// describe names a node's kind for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return "an empty list"
		}
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

// quoteHint explains the usual cause of a flow mapping where a scalar was
// meant: an unquoted {{template}}.
func quoteHint(n *yaml.Node) string {
	if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle != 0 {
		return `quote templates in YAML: "{{name}}"`
	}
	return ""
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	if strings.ContainsAny(key, ".[ ") {
		return field + "[" + key + "]"
	}
	return field + "." + key
}

// str returns n's value when it is a non-empty string scalar.
func (p *parser) str(n *yaml.Node, field string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errAt(n, field, quoteHint(n), "want a text value, got %s", describe(n))
		return "", false
	}
	if n.Value == "" {
		p.errAt(n, field, "", "must not be empty")
		return "", false
	}
	return n.Value, true
}

// scalar converts a YAML scalar to a value, keeping its YAML type.
func (p *parser) scalar(n *yaml.Node, field string) (value, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		p.errAt(n, field, quoteHint(n), "want a single value, got %s", describe(n))
		return value{}, false
	}
	switch n.ShortTag() {
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return value{text: strconv.AppendInt(nil, i, 10), kind: kNumber}, true
		}
		fallthrough
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			p.errAt(n, field, "", "%q is not a finite number", n.Value)
			return value{}, false
		}
		return value{text: strconv.AppendFloat(nil, f, 'g', -1, 64), kind: kNumber}, true
	case "!!bool":
		var b bool
		_ = n.Decode(&b)
		return value{text: strconv.AppendBool(nil, b), kind: kBool}, true
	case "!!null":
		return value{text: []byte("null"), kind: kNull}, true
	}
	return value{text: []byte(n.Value), kind: kString}, true
}

// inferValue types a value given as text (command line, harness lists): a
// JSON number is a number, anything else a string.
func inferValue(s string) value {
	if jsonNumberRe.MatchString(s) {
		return value{text: []byte(s), kind: kNumber}
	}
	return value{text: []byte(s), kind: kString}
}

func (p *parser) parse(doc *yaml.Node) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		p.errAt(nil, "", "a scenario needs at least a steps: list; see docs/scenarios.md", "the file is empty")
		return
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		p.errAt(root, "", "a scenario is a mapping with at least steps:; see docs/scenarios.md", "want a mapping (key: value lines), got %s", describe(root))
		return
	}
	_, top := p.mapping(root, "", topKeys)
	s := p.s
	s.name = strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file))
	if f, ok := top["name"]; ok {
		if v, ok := p.str(f.v, "name"); ok {
			s.name = v
		}
	}
	if f, ok := top["description"]; ok {
		p.str(f.v, "description")
	}
	p.baseURL(top)
	p.feeds(top)
	p.vars(top)
	setupNode, stepsNode := top["setup"], top["steps"]
	if stepsNode.k == nil {
		stepsNode.k = root
	}
	setupList := p.stepList(setupNode, "setup", false)
	stepList := p.stepList(stepsNode, "steps", true)
	p.collectCaptures(setupList, "setup", true)
	p.collectCaptures(stepList, "steps", false)
	s.setup = p.compileSteps(setupList, "setup", true)
	s.steps = p.compileSteps(stepList, "steps", false)
	seen := map[string]int{}
	for i, st := range s.steps {
		s.labels = append(s.labels, st.name)
		if j, dup := seen[st.name]; dup {
			p.errAt(stepList[i], fmt.Sprintf("steps[%d].name", i), "step names label the results; make each one unique",
				"duplicate step name %q (also steps[%d])", st.name, j)
			continue
		}
		seen[st.name] = i
	}
}

func (p *parser) baseURL(top map[string]kv) {
	var node *yaml.Node
	raw := ""
	if f, ok := top["base_url"]; ok {
		node = f.v
		raw, _ = p.str(f.v, "base_url")
	}
	field := "base_url"
	if p.opts.BaseURL != "" {
		raw, node, field = p.opts.BaseURL, nil, "base URL option"
	}
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		p.errAt(node, field, "write it as http://host:port, optionally with a path prefix", "%q is not an http(s) base URL", raw)
		return
	}
	p.s.baseURL = strings.TrimRight(raw, "/")
}

// vars reads the vars section and the command-line variables.
func (p *parser) vars(top map[string]kv) {
	var pairs []kv
	if f, ok := top["vars"]; ok && !(f.v.Kind == yaml.ScalarNode && f.v.Tag == "!!null") {
		pairs, _ = p.mapping(f.v, "vars", nil)
	}
	inFile := map[string]bool{}
	for _, pr := range pairs {
		inFile[pr.key] = true
	}
	p.fileVars = inFile
	// Command-line variables not in the file come first, so every file
	// variable can use them.
	names := make([]string, 0, len(p.opts.Vars))
	for name := range p.opts.Vars {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !identRe.MatchString(name) || slices.Contains(builtinNames, name) {
			p.errAt(nil, "--var "+name, "a variable name is letters, digits and _, and not one of "+strings.Join(builtinNames, ", "),
				"bad variable name %q", name)
			continue
		}
		if inFile[name] {
			continue
		}
		p.addVar(&varDef{name: name, kind: varConst, val: inferValue(p.opts.Vars[name])})
	}
	for _, pr := range pairs {
		field := join("vars", pr.key)
		if !identRe.MatchString(pr.key) {
			p.errAt(pr.k, field, "use letters, digits and _ (not starting with a digit)", "bad variable name %q", pr.key)
			continue
		}
		if slices.Contains(builtinNames, pr.key) {
			p.errAt(pr.k, field, "pick another name", "%q is a built-in name", pr.key)
			continue
		}
		if _, dup := p.syms[pr.key]; dup {
			continue // reported by mapping
		}
		v := p.varDef(pr, field)
		if cli, ok := p.opts.Vars[pr.key]; ok {
			v = &varDef{kind: varConst, val: inferValue(cli)}
		}
		if v == nil {
			v = &varDef{kind: varConst}
		}
		v.name = pr.key
		p.addVar(v)
	}
}

func (p *parser) addVar(v *varDef) {
	v.slot = p.s.nslots
	p.s.nslots++
	p.syms[v.name] = &symbol{slot: v.slot, defined: true}
	p.s.vars = append(p.s.vars, v)
}

// varDef reads one variable definition.
func (p *parser) varDef(pr kv, field string) *varDef {
	n := pr.v
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" && strings.Contains(n.Value, "{{") {
			t, errs := compileTemplate(n.Value, modeText, p.varResolver())
			p.errsAt(n, field, errs)
			return &varDef{kind: varTemplate, t: t}
		}
		v, ok := p.scalar(n, field)
		if !ok {
			return nil
		}
		return &varDef{kind: varConst, val: v}
	case yaml.MappingNode:
		list, _ := p.mapping(n, field, varGenKeys)
		if len(list) != 1 {
			if len(list) > 1 || len(n.Content) == 0 {
				p.errAt(n, field, "write one of {pick: [a, b]}, {pick_list: name}, {randint: [1, 100]}", "want exactly one generator")
			}
			return nil
		}
		g := list[0]
		gf := join(field, g.key)
		switch g.key {
		case "pick":
			if g.v.Kind != yaml.SequenceNode || len(g.v.Content) == 0 {
				p.errAt(g.v, gf, "write pick: [a, b, c]", "want a non-empty list, got %s", describe(g.v))
				return nil
			}
			d := &varDef{kind: varPick}
			for i, c := range g.v.Content {
				if v, ok := p.scalar(c, fmt.Sprintf("%s[%d]", gf, i)); ok {
					d.choices = append(d.choices, v)
				}
			}
			if len(d.choices) == 0 {
				return nil
			}
			return d
		case "pick_list":
			name, ok := p.str(g.v, gf)
			if !ok {
				return nil
			}
			list, ok := p.opts.Lists[name]
			if !ok {
				have := make([]string, 0, len(p.opts.Lists))
				for k := range p.opts.Lists {
					have = append(have, k)
				}
				sort.Strings(have)
				hint := "the harness supplies lists for its workloads (sku_ids for sku); none was given"
				if len(have) > 0 {
					hint = "supplied lists: " + strings.Join(have, ", ")
					if dm := didYouMean(name, have); dm != "" {
						hint = dm
					}
				}
				p.errAt(g.v, gf, hint, "no list named %q", name)
				return nil
			}
			if len(list) == 0 {
				p.errAt(g.v, gf, "the list must hold at least one value", "list %q is empty", name)
				return nil
			}
			d := &varDef{kind: varPick}
			for _, s := range list {
				d.choices = append(d.choices, inferValue(s))
			}
			return d
		case "randint":
			var args []string
			if g.v.Kind == yaml.SequenceNode {
				for _, c := range g.v.Content {
					args = append(args, c.Value)
				}
			}
			lo, hi, err := parseRange(args)
			if err != nil {
				p.errAt(g.v, gf, "write randint: [1, 100] (both bounds included)", "%v", err)
				return nil
			}
			return &varDef{kind: varRandint, lo: lo, hi: hi}
		}
	}
	p.errAt(n, field, `write a value, a "template {{user}}", {pick: [...]}, {pick_list: name} or {randint: [lo, hi]}`,
		"bad variable definition: %s", describe(n))
	return nil
}

// varResolver resolves names in a variable template: only variables
// defined above it.
func (p *parser) varResolver() resolver {
	return func(name string) (int, error) {
		sym, ok := p.syms[name]
		switch {
		case ok && !sym.capture:
			return sym.slot, nil
		case ok:
			return 0, &hintError{fmt.Sprintf("a variable cannot use capture %q", name),
				"variables are set when an iteration starts, before any response; use the capture directly in the step"}
		}
		if p.inVarsBelow(name) {
			return 0, &hintError{fmt.Sprintf("variable %q is used before it is defined", name), "move its definition above this one"}
		}
		return 0, p.unknown(name)
	}
}

// inVarsBelow is set while reading vars so a forward reference gets its own
// message; the vars section is read in order, so any file variable not yet
// in syms is below.
func (p *parser) inVarsBelow(name string) bool {
	return p.fileVars != nil && p.fileVars[name]
}

func (p *parser) unknown(name string) error {
	cands := slices.Clone(builtinNames)
	for k := range p.syms {
		cands = append(cands, k)
	}
	sort.Strings(cands)
	hint := didYouMean(name, cands)
	if hint == "" {
		hint = "define it under vars:, capture it in an earlier step, or pass --var " + name + "=VALUE"
	}
	return &hintError{fmt.Sprintf("unknown variable %q", name), hint}
}
