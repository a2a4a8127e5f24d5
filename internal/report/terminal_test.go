package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTerminalFits: the terminal form of a real run's answer keeps every
// line within TerminalWidth columns, names every stack in its narrow
// scorecard, and says each part of the question in a line of its own.
func TestTerminalFits(t *testing.T) {
	res, err := Load(scorecardDay)
	if err != nil {
		t.Fatal(err)
	}
	if !HasTerminalForm(res, WithRejudging()) {
		t.Fatal("a run with a scorecard has no terminal form")
	}
	var b bytes.Buffer
	WriteTerminal(&b, res, TerminalWidth, WithRejudging())
	out := b.String()
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > TerminalWidth {
			t.Errorf("line %d is %d columns, over %d: %q", i+1, n, TerminalWidth, line)
		}
	}
	for _, want := range []string{"rust-axum ", "python-fastapi ", "- more users (throughput): ", "- faster at R (p99 at ", "- fewer resources at R (CPU per request at ", "- still correct: "} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal form lacks %q", want)
		}
	}
	golden(t, "terminal.golden.txt", b.Bytes())
}

// TestWrap: words fill each line up to the width, the lines after the
// first indented; a word longer than the width stands alone.
func TestWrap(t *testing.T) {
	if got, want := wrap("a bb ccc dddd", 6, "  "), "a bb\n  ccc\n  dddd"; got != want {
		t.Errorf("wrap = %q, want %q", got, want)
	}
	if got, want := wrap("abcdefgh ij", 4, ""), "abcdefgh\nij"; got != want {
		t.Errorf("wrap = %q, want %q", got, want)
	}
}
