package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Error is one problem in a scenario file, located by line, column and the
// field it concerns.
type Error struct {
	// File is the scenario file's name as given to Load or Parse.
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

// ErrorList is every problem found in a scenario file, in file order; Load
// and Parse return all of them at once.
type ErrorList []*Error

// Error prints every problem, one per line.
func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// yamlLine finds the line number in a yaml.v3 syntax error message.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// syntaxError turns a yaml.v3 parse error into an Error.
func syntaxError(file string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimSpace(strings.Replace(msg, m[0]+":", "", 1))
	}
	return &Error{File: file, Line: line, Msg: "invalid YAML: " + msg,
		Hint: "check the indentation and quote values holding ': ', '#' or '{{'"}
}

// didYouMean returns a hint naming the candidate closest to s, or "".
func didYouMean(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len(s)/3) {
		return ""
	}
	return fmt.Sprintf("did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
