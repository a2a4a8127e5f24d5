package jmx

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}

func typed(s, kind string) *yaml.Node {
	switch kind {
	case "number":
		if strings.ContainsAny(s, ".eE") {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: s}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: s}
	case "bool":
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: s}
	case "null":
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	}
	return str(s)
}

// inferred types a constant like the scenario types --var values: a JSON
// number is a number, anything else a string.
func inferred(s string) *yaml.Node {
	if numberRe.MatchString(s) {
		return typed(s, "number")
	}
	return str(s)
}

// mapping builds a mapping from key, value pairs.
func mapping(pairs ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(pairs); i += 2 {
		k := str(pairs[i].(string))
		v := pairs[i+1].(*yaml.Node)
		m.Content = append(m.Content, k, v)
	}
	return m
}

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, str(key), v)
}

// emit writes the scenario.
func (im *importer) emit(plan *element) []byte {
	doc := mapping()
	name := plan.name()
	if name == "" || name == "Test Plan" {
		name = strings.TrimSuffix(filepath.Base(im.file), filepath.Ext(im.file))
	}
	add(doc, "name", str(name))
	add(doc, "description", str(fmt.Sprintf("Imported from the JMeter plan %s by showdown import jmx.", filepath.Base(im.file))))
	doc.Content[0].HeadComment = fmt.Sprintf("Imported from %s (JMeter test plan %q, line %d).\nsee docs/jmeter.md for what each element became", filepath.Base(im.file), plan.name(), plan.line())
	if im.base != "" {
		add(doc, "base_url", str(im.base))
		doc.Content[len(doc.Content)-2].HeadComment = "the server of the samplers (HTTP Request Defaults); --base-url replaces it"
	}
	if len(im.data) > 0 {
		list := &yaml.Node{Kind: yaml.SequenceNode}
		for _, d := range im.data {
			m := mapping("file", str(d.file))
			m.Content[0].HeadComment = fmt.Sprintf("CSV Data Set Config %q, line %d", d.el.name(), d.el.line())
			if len(d.names) > 0 {
				ns := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
				for _, n := range d.names {
					ns.Content = append(ns.Content, str(n))
				}
				add(m, "names", ns)
				if d.skipFirst {
					add(m, "skip_first_line", typed("true", "bool"))
				}
			}
			if d.delimiter != "" && d.delimiter != "," {
				add(m, "delimiter", str(d.delimiter))
			}
			add(m, "each", str("iteration"))
			add(m, "share", str(d.share))
			list.Content = append(list.Content, m)
		}
		add(doc, "data", list)
	}
	if len(im.vars) > 0 {
		vars := mapping()
		for _, v := range im.vars {
			val := inferred(v.value)
			if v.template {
				val = str(v.value)
			}
			add(vars, v.name, val)
			vars.Content[len(vars.Content)-2].HeadComment = v.from
		}
		add(doc, "vars", vars)
	}
	if len(im.setup) > 0 {
		add(doc, "setup", im.stepList(im.setup))
		doc.Content[len(doc.Content)-2].HeadComment = "the setUp Thread Group: run once before the users start"
	}
	add(doc, "steps", im.stepList(im.steps))
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}); err != nil {
		panic(err) // a node tree built here always encodes
	}
	return buf.Bytes()
}

func (im *importer) stepList(steps []*stepOut) *yaml.Node {
	list := &yaml.Node{Kind: yaml.SequenceNode}
	for _, st := range steps {
		m := mapping("name", str(st.name))
		m.Content[0].HeadComment = fmt.Sprintf("HTTP Request line %d", st.el.line())
		if st.method != "GET" {
			add(m, "method", str(st.method))
		}
		add(m, "url", str(st.url))
		if len(st.headers) > 0 {
			h := mapping()
			for _, x := range st.headers {
				add(h, x.name, str(x.value))
			}
			add(m, "headers", h)
		}
		if st.hasBody {
			add(m, "body", str(st.body))
		}
		if st.status != nil || len(st.json) > 0 || st.contains != "" || st.matches != "" {
			e := mapping()
			if len(st.status) == 1 {
				add(e, "status", typed(fmt.Sprint(st.status[0]), "number"))
			} else if len(st.status) > 1 {
				l := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
				for _, c := range st.status {
					l.Content = append(l.Content, typed(fmt.Sprint(c), "number"))
				}
				add(e, "status", l)
			}
			if len(st.json) > 0 {
				j := mapping()
				for _, x := range st.json {
					switch x.exists {
					case 1:
						add(j, x.path, mapping("exists", typed("true", "bool")))
					case -1:
						add(j, x.path, mapping("exists", typed("false", "bool")))
					default:
						add(j, x.path, typed(x.value, x.kind))
					}
				}
				add(e, "json", j)
			}
			if st.contains != "" {
				add(e, "body_contains", str(st.contains))
			}
			if st.matches != "" {
				add(e, "body_matches", str(st.matches))
			}
			add(m, "expect", e)
		}
		if len(st.captures) > 0 {
			c := mapping()
			for _, x := range st.captures {
				var v *yaml.Node
				if x.kind == "json" {
					v = mapping("json", str(x.src))
				} else {
					v = mapping("regex", str(x.src))
					if x.group != 1 {
						add(v, "group", typed(fmt.Sprint(x.group), "number"))
					}
					if x.match != 1 {
						add(v, "match", typed(fmt.Sprint(x.match), "number"))
					}
					if x.headers {
						add(v, "from", str("headers"))
					}
				}
				if x.hasDef {
					add(v, "default", inferred(x.def))
				}
				v.Style = yaml.FlowStyle
				add(c, x.name, v)
			}
			add(m, "capture", c)
		}
		if st.pause > 0 {
			add(m, "pause", str(st.pause.String()))
			m.Content[len(m.Content)-2].HeadComment = "Constant Timer"
		}
		list.Content = append(list.Content, m)
	}
	return list
}
