package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// readmeRun is the results folder of the make run whose answer README.md
// pastes (testdata/readme-run/README.md says which).
const readmeRun = "testdata/readme-run"

// TestReadmeAnswer: the answer README.md shows is what make run printed
// for the run kept in testdata, byte for byte, from the verdicts that run
// recorded: a figure in the README cannot drift from its run.
func TestReadmeAnswer(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "```text\nshowdown: ")
	if i < 0 {
		t.Fatal("README.md has no answer (a ```text block starting \"showdown: \")")
	}
	block := text[i+len("```text\n"):]
	block = block[:strings.Index(block, "```")]
	res, err := Load(readmeRun)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteTerminal(&out, res, TerminalWidth)
	if got := out.String(); got != block {
		t.Errorf("README.md's answer is not what %s prints (bin/showdown report --as-recorded --format terminal %s):\n%s", readmeRun, readmeRun, firstDiff([]byte(block), []byte(got)))
	}
}
