package jmx

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// References: JMeter's ${...} in a scenario's templates, and the
// constants a thread group and a server need.

// property registers ${__P(name,default)} as a variable with a default.
// A property the plan gives no default (hasDef false) and -J no value
// gets JMeter's own fallback (fallback: "1" for __P, the name for
// __property) and is listed in Result.Unset, to be set with attack --var.
func (im *importer) property(name, def string, hasDef bool, fallback string) string {
	id := ident(name)
	if im.defined[name] {
		// A JMeter variable has the name too (users = ${__P(users,10)}
		// is a common idiom): the property gets its own.
		id += "_prop"
	}
	from := "property " + name + " (-J" + name + "=...; here --var " + id + "=...)"
	v, set := im.props[name]
	switch {
	case set:
		def = v
	case !hasDef:
		def = fallback
		from = fmt.Sprintf("property %s has no default in the plan: set it with --var %s=VALUE (JMeter's -J%s=VALUE); without, %q as in JMeter", name, id, name, fallback)
		if !slices.ContainsFunc(im.res.Unset, func(u UnsetProperty) bool { return u.Var == id }) {
			im.res.Unset = append(im.res.Unset, UnsetProperty{Name: name, Var: id, Value: fallback})
		}
	}
	if _, ok := im.varIdx[id]; !ok {
		im.varIdx[id] = len(im.vars)
		im.vars = append(im.vars, varOut{name: id, value: def, raw: def, from: from})
	}
	return id
}

// missingProperty records that el reads the property name, which has no
// default and no -J value, where a constant is needed.
func (im *importer) missingProperty(el *element, name string) {
	if slices.ContainsFunc(im.missing, func(m MissingProperty) bool { return m.Name == name }) {
		return
	}
	im.missing = append(im.missing, MissingProperty{Name: name, Line: el.line(), Type: el.typ(), Element: el.name()})
}

// tmpl translates JMeter's ${...} references in s into scenario templates.
// ok is false when s uses something with no scenario equivalent (el is
// then listed).
func (im *importer) tmpl(el *element, s string) (string, bool) {
	if strings.Contains(s, "{{") {
		im.skip(el, "the text %q holds '{{', which starts a template in a scenario", clip(s))
		return s, false
	}
	ok := true
	out, _ := expand(s, func(expr string) (string, bool) {
		out, good := im.reference(el, expr)
		if !good {
			ok = false
			return "${" + expr + "}", true
		}
		return out, true
	})
	return out, ok
}

// expand is s with each ${...} reference in turn replaced by what ref
// makes of its inside: the one scanner of references, for templates
// (tmpl) and constants (literal). It stops, false, where ref says false
// (out then holds the text before that reference) or at a '${' never
// closed (out keeps it and the rest as they are).
func expand(s string, ref func(expr string) (string, bool)) (out string, ok bool) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), true
		}
		b.WriteString(s[:i])
		end := matchBrace(s, i+2)
		if end < 0 {
			b.WriteString(s[i:])
			return b.String(), false
		}
		r, ok := ref(s[i+2 : end])
		if !ok {
			return b.String(), false
		}
		b.WriteString(r)
		s = s[end+1:]
	}
}

// matchBrace returns the index of the '}' closing a '${' whose content
// starts at from, or -1.
func matchBrace(s string, from int) int {
	depth := 1
	for j := from; j < len(s); j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// reference translates the inside of one ${...}.
func (im *importer) reference(el *element, expr string) (string, bool) {
	if !strings.HasPrefix(expr, "__") {
		if !im.defined[expr] {
			im.skip(el, "uses ${%s}, which no element of the plan defines (JMeter would send it as is)", expr)
			return "", false
		}
		return "{{" + ident(expr) + "}}", true
	}
	fn, args := expr, []string(nil)
	if i := strings.IndexByte(expr, '('); i >= 0 && strings.HasSuffix(expr, ")") {
		fn, args = expr[:i], splitArgs(expr[i+1:len(expr)-1])
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch fn {
	case "__P":
		if arg(0) == "" {
			break
		}
		return "{{" + im.property(arg(0), arg(1), len(args) > 1, "1") + "}}", true
	case "__property":
		if arg(0) == "" || arg(1) != "" {
			break
		}
		return "{{" + im.property(arg(0), arg(2), len(args) > 2, arg(0)) + "}}", true
	case "__threadNum":
		return "{{user}}", true
	case "__UUID":
		return "{{uuid}}", true
	case "__Random":
		lo, err1 := strconv.ParseInt(arg(0), 10, 64)
		hi, err2 := strconv.ParseInt(arg(1), 10, 64)
		if err1 != nil || err2 != nil || arg(2) != "" || lo > hi {
			break
		}
		return fmt.Sprintf("{{randint %d %d}}", lo, hi), true
	}
	im.skip(el, "uses ${%s}: the function %s has no scenario equivalent (translated: __P, __property, __threadNum, __UUID, __Random with two bounds)", expr, fn)
	return "", false
}

// splitArgs splits a function's arguments at commas not escaped by '\'.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == ',':
			cur.WriteByte(',')
			i++
		case s[i] == ',':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// literal resolves a setting that must be a constant (a thread count, a
// host): a number or text, ${__P(name,default)} (its default) or a
// constant User Defined Variable. from says which property was used.
func (im *importer) literal(el *element, s string) (val, from string, ok bool) {
	return im.literalDepth(el, s, 0)
}

func (im *importer) literalDepth(el *element, s string, depth int) (val, from string, ok bool) {
	if !strings.Contains(s, "${") {
		return s, "", true
	}
	var froms []string
	out, ok := expand(s, func(expr string) (string, bool) {
		if strings.HasPrefix(expr, "__P(") && strings.HasSuffix(expr, ")") {
			a := splitArgs(expr[4 : len(expr)-1])
			if v, ok := im.props[a[0]]; ok {
				froms = append(froms, fmt.Sprintf("property %s (set to %q)", a[0], v))
				return v, true
			}
			if len(a) < 2 {
				// JMeter would use "1": for a thread count that runs, for
				// a server it fails; the plan expects -J either way.
				im.missingProperty(el, a[0])
				return "", false
			}
			froms = append(froms, fmt.Sprintf("property %s (default %q)", a[0], a[1]))
			return a[1], true
		}
		// A User Defined Variable: its own text, resolved the same way.
		v, isVar := im.varIdx[ident(expr)]
		if !isVar || depth > 4 {
			return "", false
		}
		val, f, ok := im.literalDepth(el, im.vars[v].raw, depth+1)
		if !ok {
			return "", false
		}
		if f != "" {
			froms = append(froms, f)
		}
		return val, true
	})
	if !ok {
		return "", "", false
	}
	return out, strings.Join(froms, ", "), true
}
