package jmx

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
)

// node is one XML element with the line it starts on.
type node struct {
	tag   string
	attrs map[string]string
	text  string
	line  int
	kids  []*node
}

// parseXML reads data into a tree of nodes.
func parseXML(data []byte) (*node, error) {
	var lines []int // offsets of '\n'
	for i, b := range data {
		if b == '\n' {
			lines = append(lines, i)
		}
	}
	lineAt := func(off int64) int {
		return sort.SearchInts(lines, int(off)) + 1
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	root := &node{tag: "#document"}
	stack := []*node{root}
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{tag: t.Name.Local, attrs: map[string]string{}, line: lineAt(off)}
			for _, a := range t.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top.text += string(t)
		}
	}
	return root, nil
}

// element is one JMeter test element with its children (the hashTree that
// follows it in the file).
type element struct {
	n    *node
	kids []*element
}

// typ is the element's XML tag: its test element class (HTTPSamplerProxy,
// ThreadGroup, ...).
func (e *element) typ() string { return e.n.tag }

// name is the element's name as shown in JMeter (testname).
func (e *element) name() string { return e.n.attrs["testname"] }

// gui is the element's editor class, which tells apart elements sharing a
// class (ConfigTestElement is HTTP Request Defaults with HttpDefaultsGui).
func (e *element) gui() string { return e.n.attrs["guiclass"] }

func (e *element) line() int { return e.n.line }

func (e *element) enabled() bool { return e.n.attrs["enabled"] != "false" }

func (e *element) String() string {
	return fmt.Sprintf("%s %q (line %d)", e.typ(), e.name(), e.line())
}

// prop returns the direct property of n named name: by its name
// attribute (<stringProp name="x">), or by its <name> child, as JMeter
// writes a test bean's doubleProp (<doubleProp><name>x</name><value>...).
func prop(n *node, name string) *node {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.attrs["name"] == name {
			return k
		}
		if _, has := k.attrs["name"]; !has && len(k.kids) > 0 && k.kids[0].tag == "name" && strings.TrimSpace(k.kids[0].text) == name {
			return k
		}
	}
	return nil
}

// value is a property's text: its <value> child's where it has one.
func value(p *node) string {
	for _, k := range p.kids {
		if k.tag == "value" {
			return k.text
		}
	}
	return p.text
}

// str returns a property's text ("" when absent).
func (e *element) str(name string) string { return propText(e.n, name) }

func propText(n *node, name string) string {
	if p := prop(n, name); p != nil {
		return strings.TrimSpace(value(p))
	}
	return ""
}

// rawStr returns a property's text as is (bodies keep their spaces).
func (e *element) rawStr(name string) string {
	if p := prop(e.n, name); p != nil {
		return p.text
	}
	return ""
}

// boolean returns a boolean property, or def when absent.
func (e *element) boolean(name string, def bool) bool {
	switch e.str(name) {
	case "true":
		return true
	case "false":
		return false
	}
	return def
}

// elements builds the test element tree from a hashTree node: each element
// is followed by the hashTree of its children.
func elements(ht *node) []*element {
	var out []*element
	for _, k := range ht.kids {
		if k.tag == "hashTree" {
			if len(out) > 0 {
				out[len(out)-1].kids = elements(k)
			}
			continue
		}
		out = append(out, &element{n: k})
	}
	return out
}

// arguments returns the name and value of each argument of an Arguments
// element property (User Defined Variables, sampler parameters).
func arguments(args *node) []argument {
	coll := prop(args, "Arguments.arguments")
	if coll == nil {
		return nil
	}
	var out []argument
	for _, a := range coll.kids {
		out = append(out, argument{
			name:        propText(a, "Argument.name"),
			value:       rawProp(a, "Argument.value"),
			encode:      propText(a, "HTTPArgument.always_encode") == "true",
			useEquals:   propText(a, "HTTPArgument.use_equals") != "false",
			contentType: propText(a, "HTTPArgument.content_type"),
			line:        a.line,
		})
	}
	return out
}

func rawProp(n *node, name string) string {
	if p := prop(n, name); p != nil {
		return p.text
	}
	return ""
}

// argument is one name=value pair.
type argument struct {
	name, value string
	encode      bool
	useEquals   bool
	contentType string
	line        int
}
