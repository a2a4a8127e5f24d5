package service

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Sibling stacks (two frameworks of one language) keep their database
// code alike on purpose: a fix in one copy that the other lacks would
// make the comparison unfair. Each folder stays whole, so that a user can
// copy one (docs/your-stack.md); this test keeps the copies alike
// instead, as services/README.md says.
//
// A sibling pair compares a file whole, or, where the copies differ
// legitimately (a framework's own hook, a pool mode only one of them
// reproduces), only its marked regions:
//
//	// showdown:shared begin NAME
//	...
//	// showdown:shared end NAME
//
// (# in Python). Each stack's own folder name reads as <stack>, and a
// line starting "package " (a Java package names its folder) is left out
// of a whole-file comparison.
var siblings = []struct {
	files   [2]string // under services/
	regions bool      // compare the marked regions; else the whole file
}{
	// Python: the pools, their FIFO permits and the 503 rule; the docstring
	// and Django's setup() differ.
	{[2]string{"python-django/app/db.py", "python-fastapi/app/db.py"}, true},
	// Go: the time bounds, MariaDB and the 503 rule; go-stdlib alone
	// reproduces the sources' pool mistakes (DB_POOL_MODE).
	{[2]string{"go-gin/db.go", "go-stdlib/db.go"}, true},
	// Rust: both pools; axum alone closes them at shutdown.
	{[2]string{"rust-actix/src/db.rs", "rust-axum/src/db.rs"}, true},
	// Node: the pools and the ping; the "not configured" hook is each
	// framework's own.
	{[2]string{"node-express/lib/db.js", "node-fastify/lib/db.js"}, true},
	// Java: the bank, the JSON reader and the database, whole.
	{[2]string{"java-micronaut/src/main/java/dev/showdown/micronaut/Bank.java", "java-quarkus/src/main/java/dev/showdown/quarkus/Bank.java"}, false},
	{[2]string{"java-micronaut/src/main/java/dev/showdown/micronaut/JsonBody.java", "java-quarkus/src/main/java/dev/showdown/quarkus/JsonBody.java"}, false},
	{[2]string{"java-micronaut/src/main/java/dev/showdown/micronaut/Database.java", "java-quarkus/src/main/java/dev/showdown/quarkus/Database.java"}, false},
}

// TestSiblingsAlike fails, naming the file, the region and the first line
// that differs, when sibling stacks' shared code drifts apart.
func TestSiblingsAlike(t *testing.T) {
	root := filepath.Join("..", "..", "services")
	for _, s := range siblings {
		var copies [2][]region
		for i, f := range s.files {
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			stack := strings.SplitN(f, "/", 2)[0]
			copies[i], err = regionsOf(string(b), stack, s.regions)
			if err != nil {
				t.Errorf("services/%s: %v", f, err)
			}
		}
		for _, p := range compareRegions(copies[0], copies[1]) {
			t.Errorf("services/%s and services/%s: %s (change both, or mark what may differ outside a showdown:shared region)", s.files[0], s.files[1], p)
		}
	}
}

// region is a named run of a file's lines, as compared.
type region struct {
	name  string
	first int // the line number of its first line
	lines []string
}

var marker = regexp.MustCompile(`^\s*(?://|#)\s*showdown:shared (begin|end) (\S+)\s*$`)

// regionsOf cuts text into its marked regions (or, whole, one region
// "whole file"), with stack's own name read as <stack>.
func regionsOf(text, stack string, marked bool) ([]region, error) {
	lines := strings.Split(strings.ReplaceAll(text, stack, "<stack>"), "\n")
	if !marked {
		r := region{name: "whole file", first: 1}
		for _, l := range lines {
			if strings.HasPrefix(l, "package ") {
				l = "package (its own)"
			}
			r.lines = append(r.lines, l)
		}
		return []region{r}, nil
	}
	var out []region
	var cur *region
	for i, l := range lines {
		m := marker.FindStringSubmatch(l)
		switch {
		case m == nil:
			if cur != nil {
				cur.lines = append(cur.lines, l)
			}
		case m[1] == "begin" && cur == nil:
			cur = &region{name: m[2], first: i + 2}
		case m[1] == "end" && cur != nil && m[2] == cur.name:
			out = append(out, *cur)
			cur = nil
		default:
			return nil, fmt.Errorf("line %d: %s %s out of place", i+1, m[1], m[2])
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("region %s has no end", cur.name)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no showdown:shared region")
	}
	return out, nil
}

// compareRegions says where a and b differ: a region one has and the
// other lacks, or a region's first line that differs.
func compareRegions(a, b []region) []string {
	var out []string
	if len(a) != len(b) {
		return []string{fmt.Sprintf("%d regions against %d: %s against %s", len(a), len(b), names(a), names(b))}
	}
	for i := range a {
		ra, rb := a[i], b[i]
		if ra.name != rb.name {
			out = append(out, fmt.Sprintf("region %d is %s in one, %s in the other", i+1, ra.name, rb.name))
			continue
		}
		for j := 0; j < max(len(ra.lines), len(rb.lines)); j++ {
			la, lb := "(the region's end)", "(the region's end)"
			if j < len(ra.lines) {
				la = ra.lines[j]
			}
			if j < len(rb.lines) {
				lb = rb.lines[j]
			}
			if la != lb {
				out = append(out, fmt.Sprintf("region %s differs first at lines %d and %d:\n\t%s\n\t%s", ra.name, ra.first+j, rb.first+j, la, lb))
				break
			}
		}
	}
	return out
}

func names(rs []region) string {
	var n []string
	for _, r := range rs {
		n = append(n, r.name)
	}
	return strings.Join(n, ", ")
}

// TestCompareRegions: a changed line is named with its region and line
// numbers; a missing region and an unclosed one are reported.
func TestCompareRegions(t *testing.T) {
	a, err := regionsOf("x\n// showdown:shared begin r\none\ngo-a\n// showdown:shared end r\n", "go-a", true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := regionsOf("// showdown:shared begin r\none\ngo-b\n// showdown:shared end r\ny\n", "go-b", true)
	if p := compareRegions(a, b); len(p) != 0 {
		t.Errorf("alike but for their own names: %q", p)
	}
	c, _ := regionsOf("// showdown:shared begin r\nOne\ngo-b\n// showdown:shared end r\n", "go-b", true)
	want := "region r differs first at lines 3 and 2:\n\tone\n\tOne"
	if p := compareRegions(a, c); len(p) != 1 || p[0] != want {
		t.Errorf("got %q, want %q", p, want)
	}
	if p := compareRegions(a, nil); len(p) != 1 {
		t.Errorf("a missing region: %q", p)
	}
	if _, err := regionsOf("# showdown:shared begin r\nx\n", "s", true); err == nil {
		t.Error("a region without an end passed")
	}
}
