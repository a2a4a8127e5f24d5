// Package located is the one error type of every YAML file showdown
// reads: a problem in a plan, scenario or service manifest, located by
// file, line, column and field, with a hint of what to do, and the list
// of them that a parser returns so that every mistake is reported at
// once.
package located

import (
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a file.
type Error struct {
	// File is the file's name as given to the parser.
	File string
	// Line and Col locate the problem (1-based; 0 when unknown).
	Line, Col int
	// Field is the path of the field, e.g. "steps[2].expect.status".
	Field string
	// Msg says what is wrong.
	Msg string
	// Hint says what to do about it; it may be empty.
	Hint string
}

// Error formats e as "file:line:col: field: message (hint: ...)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteString(":" + strconv.Itoa(e.Col))
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString(" (hint: " + e.Hint + ")")
	}
	return b.String()
}

// List is every problem found in one or more files.
type List []*Error

// Error prints every problem, one per line.
func (l List) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Sort orders the problems by file position, keeping the order of those
// on the same spot.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
	})
}

// yamlLine finds the line number in a yaml.v3 message.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// SyntaxHint is the hint given with YAML that does not parse.
const SyntaxHint = "check the indentation and quote values holding ': ', '#' or '{{'"

// FromYAML turns an error of yaml.v3 into located problems of file: one
// per message of a *yaml.TypeError (a value of the wrong type), or one
// "invalid YAML" problem for text that does not parse.
func FromYAML(file string, err error) List {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var l List
		for _, msg := range te.Errors {
			line, rest := splitLine(msg)
			l = append(l, &Error{File: file, Line: line, Msg: rest})
		}
		return l
	}
	line, msg := splitLine(strings.TrimPrefix(err.Error(), "yaml: "))
	return List{{File: file, Line: line, Msg: "invalid YAML: " + msg, Hint: SyntaxHint}}
}

// splitLine takes the "line N:" out of a yaml.v3 message.
func splitLine(msg string) (int, string) {
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return 0, msg
	}
	line, _ := strconv.Atoi(m[1])
	return line, strings.TrimSpace(strings.Replace(msg, m[0]+":", "", 1))
}
