package internal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README opens as the tools people like do: the two commands within
// a screen, a real answer within two, no paragraph a reader must wade
// through, and every stack named.
const (
	readmeCommandsBy = 25
	readmeAnswerBy   = 70
	readmeParagraph  = 12
)

// TestReadmeOpens checks README.md against those promises: `make run`
// and `make test` in a code block within the first readmeCommandsBy
// lines, the scorecard (the answer as make run prints it, which
// internal/report's TestReadmeAnswer holds to a kept run) within the first
// readmeAnswerBy, no paragraph of prose over readmeParagraph lines, and
// every folder under services/ named.
func TestReadmeOpens(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	find := func(pred func(string) bool) int {
		for i, l := range lines {
			if pred(l) {
				return i + 1
			}
		}
		return 0
	}
	for _, cmd := range []string{"make run", "make test"} {
		if n := find(func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), cmd) }); n == 0 || n > readmeCommandsBy {
			t.Errorf("README.md: %q at line %d, want it within the first %d lines", cmd, n, readmeCommandsBy)
		}
	}
	if n := find(func(l string) bool { return strings.HasPrefix(l, "stack ") && strings.Contains(l, " throughput ") }); n == 0 || n > readmeAnswerBy {
		t.Errorf("README.md: the answer's scorecard (a line starting \"stack \" with its columns, as make run prints it) at line %d, want it within the first %d lines", n, readmeAnswerBy)
	}
	fence, run, start := false, 0, 0
	for i, l := range lines {
		text := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(text, "```"):
			fence, run = !fence, 0
		case fence || text == "" || strings.HasPrefix(text, "|") || strings.HasPrefix(text, "#") || strings.HasPrefix(text, "<!--"):
			run = 0
		default:
			if run == 0 {
				start = i + 1
			}
			run++
			if run == readmeParagraph+1 {
				t.Errorf("README.md:%d: a paragraph over %d lines: split it, or move its figures to bench/README.md", start, readmeParagraph)
			}
		}
	}
	dirs, err := filepath.Glob("../services/*/showdown.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no services found (%v)", err)
	}
	for _, m := range dirs {
		name := filepath.Base(filepath.Dir(m))
		if !strings.Contains(string(b), "`"+name+"`") {
			t.Errorf("README.md does not name the stack %s (in backquotes)", name)
		}
	}
}
