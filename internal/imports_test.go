package internal

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is the import path prefix of the project's packages.
const module = "github.com/showdownlab/showdown/"

// importRules says which project packages a package may not reach, even
// through others: data flows one way, from the socket (load) through the
// lab to the results model and the report, and only cmd/ wires them
// together. docs/architecture.md draws the same picture.
var importRules = []struct {
	pkg    string   // a package, or a prefix ending in "/"
	forbid []string // packages it must not depend on, directly or not
	why    string
}{
	{"", []string{"cmd/"}, "nothing below cmd/ imports a command"},
	{"load", []string{"internal/", "workloads"}, "the engine is importable on its own"},
	{"load/atomicfile", []string{"internal/", "workloads", "load"}, "writing a file atomically needs nothing of the project"},
	{"workloads", []string{"internal/", "load"}, "the contract's files depend on nothing"},
	{"internal/located", []string{"internal/", "load"}, "the error type of every YAML file stands alone"},
	{"internal/results", []string{"internal/lab", "internal/report", "internal/stack", "internal/verify"}, "the results model is read by all and knows none of its readers"},
	{"internal/report", []string{"internal/lab", "internal/stack", "internal/verify", "internal/db"}, "a report is drawn from results alone"},
	{"internal/plan", []string{"internal/lab", "internal/results", "internal/report", "internal/stack"}, "a plan is a file format, not a runner"},
	{"internal/stack", []string{"internal/lab", "internal/report", "internal/results", "internal/verify"}, "bringing a stack up serves run, verify and what comes next alike"},
	{"internal/verify", []string{"internal/lab", "internal/report", "internal/stack", "internal/results"}, "the contract suite checks a URL, whoever started it"},
	{"internal/db", []string{"internal/lab", "internal/report", "internal/stack", "internal/verify", "internal/results"}, "the databases know no runner"},
	{"internal/service", []string{"internal/lab", "internal/report", "internal/stack", "internal/db"}, "a service knows how to build and start, not what runs it"},
	{"internal/faults", []string{"internal/lab", "internal/report", "internal/verify"}, "the fault test brings a stack up and judges it, whoever asks"},
	{"internal/scenario", []string{"internal/lab", "internal/report", "internal/stack", "internal/db"}, "scenarios only drive load"},
}

// TestImportRules checks importRules over every non-test Go file of the
// project (services/ and bench/ are separate modules or tools and left out).
func TestImportRules(t *testing.T) {
	graph := projectImports(t, "..")
	if len(graph) < 10 {
		t.Fatalf("found %d packages; is the test run from internal/?", len(graph))
	}
	for _, r := range importRules {
		matched := false
		for pkg := range graph {
			if !(pkg == r.pkg || r.pkg == "" || strings.HasSuffix(r.pkg, "/") && strings.HasPrefix(pkg, r.pkg)) {
				continue
			}
			if r.pkg == "" && strings.HasPrefix(pkg, "cmd/") {
				continue
			}
			matched = true
			for _, dep := range reach(graph, pkg) {
				for _, f := range r.forbid {
					if dep == f || strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f) {
						t.Errorf("%s depends on %s (%s)", pkg, dep, r.why)
					}
				}
			}
		}
		if !matched {
			t.Errorf("rule for %q matches no package: update importRules", r.pkg)
		}
	}
}

// projectImports maps each project package (relative to the module) to
// the project packages its non-test files import.
func projectImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "services" || rel == "bench" || rel == "results" || strings.HasSuffix(rel, "testdata") || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if _, ok := graph[pkg]; !ok {
			graph[pkg] = nil
		}
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if dep, ok := strings.CutPrefix(p, module); ok {
				graph[pkg] = append(graph[pkg], dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return graph
}

// reach lists every project package pkg depends on, directly or not.
func reach(graph map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, d := range graph[p] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(pkg)
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
