package verify

import (
	"slices"
	"strings"
	"testing"
)

// Comment syntaxes of the languages the SQL check reads, by extension.
var (
	slashComments = []string{".go", ".java", ".kt", ".js", ".mjs", ".cjs", ".ts", ".rs", ".cs"}
	hashComments  = []string{".py", ".rb", ".yaml", ".yml", ".properties"}
)

// stripComments returns src without its comments, so that SQL text in a
// comment (or a Python docstring) does not count as a statement the
// service runs. Text in string literals is kept, comment markers inside
// them included; a file of another extension is returned as is.
func stripComments(src, ext string) string {
	slash, hash, dashes := slices.Contains(slashComments, ext), slices.Contains(hashComments, ext), ext == ".sql"
	if !slash && !hash && !dashes {
		return src
	}
	quotes := ext != ".properties" // a properties value is text to the end of the line
	var b strings.Builder
	lastSignificant := byte('\n') // the last character of code kept, spaces aside
	for i := 0; i < len(src); {
		c := src[i]
		rest := src[i:]
		switch {
		case slash && strings.HasPrefix(rest, "//"), hash && c == '#' && (ext != ".properties" || lineStart(src, i)),
			dashes && strings.HasPrefix(rest, "--"):
			i += lineEnd(rest)
			continue
		case slash && strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest[2:], "*/")
			if end < 0 {
				return b.String()
			}
			// Keep the line breaks, so a comment still separates words.
			b.WriteString(strings.Repeat("\n", strings.Count(rest[:end+4], "\n")) + " ")
			i += end + 4
			continue
		case ext == ".rs" && !identChar(src, i-1) && rawStringStart(rest) > 0:
			n, hashes := rawStringStart(rest), strings.Count(rest[:rawStringStart(rest)], "#")
			closing := "\"" + strings.Repeat("#", hashes)
			end := strings.Index(rest[n:], closing)
			if end < 0 {
				end = len(rest) - n
			} else {
				end += len(closing)
			}
			b.WriteString(rest[:n+end])
			i += n + end
			lastSignificant = '"'
			continue
		case quotes && (strings.HasPrefix(rest, `"""`) || ext == ".py" && strings.HasPrefix(rest, "'''")):
			end := strings.Index(rest[3:], rest[:3])
			if end < 0 {
				end = len(rest)
			} else {
				end += 6
			}
			// A Python string that stands as a statement is a docstring:
			// documentation, like a comment.
			if !(ext == ".py" && lineStart(src, i) && !strings.ContainsRune("([{,=+\\", rune(lastSignificant))) {
				b.WriteString(rest[:end])
				lastSignificant = '"'
			}
			i += end
			continue
		case quotes && (c == '"' || c == '\'' || c == '`'):
			end := stringEnd(rest)
			if end < 0 { // a Rust lifetime or a stray quote: plain text
				b.WriteByte(c)
				i++
				continue
			}
			b.WriteString(rest[:end])
			i += end
			lastSignificant = c
			continue
		}
		b.WriteByte(c)
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			lastSignificant = c
		}
		i++
	}
	return b.String()
}

// identChar reports whether src[i] exists and may be part of a name.
func identChar(src string, i int) bool {
	if i < 0 {
		return false
	}
	c := src[i]
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// lineStart reports whether only spaces precede src[i] on its line.
func lineStart(src string, i int) bool {
	j := strings.LastIndexByte(src[:i], '\n')
	return strings.TrimSpace(src[j+1:i]) == ""
}

// lineEnd returns the length of s up to its first line break (kept).
func lineEnd(s string) int {
	if n := strings.IndexByte(s, '\n'); n >= 0 {
		return n
	}
	return len(s)
}

// stringEnd returns the length of the quoted literal s starts with, its
// quotes included, or -1 when a single or double quote finds no mate on
// its line (a backquote may span lines).
func stringEnd(s string) int {
	q := s[0]
	for j := 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j + 1
		case '\n':
			if q != '`' {
				return -1
			}
		}
	}
	return -1
}

// rawStringStart returns the length of a Rust raw string's opening
// (r", r#", br##", ...) at the start of s, or 0.
func rawStringStart(s string) int {
	s0 := strings.TrimPrefix(s, "b")
	if !strings.HasPrefix(s0, "r") {
		return 0
	}
	j := 1
	for j < len(s0) && s0[j] == '#' {
		j++
	}
	if j >= len(s0) || s0[j] != '"' {
		return 0
	}
	return len(s) - len(s0) + j + 1
}

func TestStripComments(t *testing.T) {
	for _, c := range []struct{ name, ext, in, want string }{
		// A line comment goes, a string holding // stays.
		{"go line", ".go", "q := \"a // b\" // SELECT 1\nx", "q := \"a // b\" \nx"},
		// A block comment goes, its line breaks kept.
		{"java block", ".java", "a /* SELECT\n1 */ b", "a \n  b"},
		// A Go raw string spans lines and keeps what looks like a comment.
		{"go raw", ".go", "q := `SELECT 1 -- x\n// y`", "q := `SELECT 1 -- x\n// y`"},
		// A character literal holding a quote does not open a string.
		{"char quote", ".java", "c == '\"' // SELECT 1\nd", "c == '\"' \nd"},
		// A Rust lifetime is no string; a raw string keeps its quotes.
		{"rust", ".rs", "fn f<'a>(s: &'a str) {} // SELECT 1\nlet q = r#\"SELECT \"x\" // y\"#;", "fn f<'a>(s: &'a str) {} \nlet q = r#\"SELECT \"x\" // y\"#;"},
		// Python: # comments and docstrings go, assigned strings stay.
		{"python", ".py", "def f():\n    \"\"\"SELECT 1\"\"\"\n    q = \"SELECT #2\"  # SELECT 3\n    r = (\n        \"\"\"SELECT 4\"\"\")", "def f():\n    \n    q = \"SELECT #2\"  \n    r = (\n        \"\"\"SELECT 4\"\"\")"},
		// SQL: -- comments go, a string holding -- stays.
		{"sql", ".sql", "SELECT '--' -- x\nFROM t", "SELECT '--' \nFROM t"},
		// Properties: # only starts a comment at the line's start.
		{"properties", ".properties", "# SELECT 1\nq=SELECT #2", "\nq=SELECT #2"},
	} {
		if got := stripComments(c.in, c.ext); got != c.want {
			t.Errorf("%s: stripComments(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}
