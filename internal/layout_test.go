package internal

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The README's layout is written from each package's doc comment: a
// package's line is the head of its doc's first sentence (up to its
// first colon or semicolon, "Package x" and "is" left out), and the
// packages are grouped by their floor (floorOf). A package without a
// line, or a line its doc no longer says, fails the test; go test
// ./internal -update writes the block again.
const (
	layoutFile  = "../README.md"
	layoutBegin = "<!-- layout: written by go test ./internal -update from each package's doc comment and floorOf in internal/floors_test.go; edit those, not this -->"
	layoutEnd   = "<!-- end of layout -->"
)

// layoutFolders are the layout's folders that are not Go packages, or
// more than one.
var layoutFolders = []struct{ path, what string }{
	{"workloads/<name>/", "contract, schema, SQL, default scenario (embedded in the binary)"},
	{"services/<stack>/", "one implementation each, own build and manifest"},
	{"plans/", "ready plans: default, smoke, the source experiments"},
	{"bench/", "side-by-side benchmarks against other tools, and their commands"},
}

// inLayout reports whether package p has a line of its own in the
// layout: bench's commands are one folder there.
func inLayout(p string) bool { return !strings.HasPrefix(p, "bench/") }

// TestLayout compares the README's layout with the packages' doc
// comments, and checks that docs/architecture.md has a row for every
// package and names no code that is not there.
func TestLayout(t *testing.T) {
	docs := packageDocs(t)
	checkSection(t, layoutFile, layoutBegin, layoutEnd, drawLayout(docs), "the packages' doc comments and floorOf")

	arch, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for p := range docs {
		pkgs = append(pkgs, p)
	}
	// The names of this package (floorOf, importRules) count too.
	for _, p := range architectureProblems(string(arch), pkgs, declaredNames(t, append(pkgs, "internal"))) {
		t.Error(p)
	}
}

// packageDocs maps each of the module's packages (but the module's
// root) to the synopsis of its doc comment.
func packageDocs(t *testing.T) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{len .GoFiles}}\t{{.Doc}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	docs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		p, ok := strings.CutPrefix(f[0], module)
		if !ok || f[1] == "0" {
			continue
		}
		docs[p] = f[2]
	}
	if len(docs) < 20 {
		t.Fatalf("go list gave %d packages; is the test run from internal/?", len(docs))
	}
	return docs
}

// headline is a package's line in the layout, from the synopsis of its
// doc comment.
func headline(synopsis string) string {
	s := synopsis
	for _, w := range []string{"Package ", "Command "} {
		if rest, ok := strings.CutPrefix(s, w); ok {
			_, s, _ = strings.Cut(rest, " ")
		}
	}
	s = strings.TrimPrefix(s, "is ")
	if i := strings.IndexAny(s, ":;"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, ".,")
}

// drawLayout writes the layout block: each floor's packages with their
// headlines, then the folders that are not packages.
func drawLayout(docs map[string]string) string {
	var pkgs []string
	for p := range docs {
		if inLayout(p) {
			pkgs = append(pkgs, p)
		}
	}
	sort.Slice(pkgs, func(i, j int) bool {
		a, b := pkgs[i], pkgs[j]
		if floorOf[a] != floorOf[b] {
			return floorOf[a] < floorOf[b]
		}
		return a < b
	})
	var b strings.Builder
	b.WriteString("\n\n```\n")
	last := -1
	for _, p := range pkgs {
		if f := floorOf[p]; f != last {
			fmt.Fprintf(&b, "# %d. %s\n", f+1, floorNames[f].name)
			last = f
		}
		line := headline(docs[p])
		if line == "" {
			line = "(no doc comment)"
		}
		fmt.Fprintf(&b, "%-21s%s\n", p+"/", line)
	}
	b.WriteString("# not Go packages\n")
	for _, f := range layoutFolders {
		fmt.Fprintf(&b, "%-21s%s\n", f.path, f.what)
	}
	b.WriteString("```\n\n")
	return b.String()
}

// checkSection compares the part of the file at path between the lines
// begin and end with want, which is written from what from says; with
// -update it writes want there instead.
func checkSection(t *testing.T, path, begin, end, want, from string) {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no generated section: put the lines\n%s\n%s\nwhere it goes, then go test ./internal -update", path, begin, end)
	}
	got := string(doc[i+len(begin) : j])
	if *update && got != want {
		out := append(append(append([]byte{}, doc[:i+len(begin)]...), want...), doc[j:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
		n := 0
		for n < len(g) && n < len(w) && g[n] == w[n] {
			n++
		}
		line := ""
		if n < len(w) {
			line = w[n]
		}
		t.Errorf("the generated section of %s differs from %s, first at its line %d, which should read\n%s\ngo test ./internal -update rewrites it", path, from, n+1, line)
	}
}

// declaredNames maps each package of pkgs, by its last path element, to
// the names its Go files (tests included) declare at the top: functions,
// types, variables and constants, and Type.Method and Type.Field.
func declaredNames(t *testing.T, pkgs []string) map[string]map[string]bool {
	t.Helper()
	names := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, p := range pkgs {
		files, _ := filepath.Glob(filepath.Join("..", p, "*.go"))
		set := map[string]bool{}
		for _, f := range files {
			file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			declare(set, file)
		}
		names[filepath.Base(p)] = set
	}
	return names
}

// declare adds the top-level names of file to set.
func declare(set map[string]bool, file *ast.File) {
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if ix, ok := typ.(*ast.IndexExpr); ok {
					typ = ix.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			set[name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						set[n.Name] = true
					}
				case *ast.TypeSpec:
					set[s.Name.Name] = true
					var fields *ast.FieldList
					switch ty := s.Type.(type) {
					case *ast.StructType:
						fields = ty.Fields
					case *ast.InterfaceType:
						fields = ty.Methods
					}
					if fields == nil {
						continue
					}
					for _, f := range fields.List {
						for _, n := range f.Names {
							set[s.Name.Name+"."+n.Name] = true
						}
						if len(f.Names) == 0 { // embedded
							if id, ok := f.Type.(*ast.Ident); ok {
								set[s.Name.Name+"."+id.Name] = true
							}
						}
					}
				}
			}
		}
	}
}

var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// qualified is pkg.Name or pkg.Type.Member, with or without () (not
	// a file name: pkg.json).
	qualified = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Za-z_]\w*))?(?:\(\))?$`)
	// camel is an unqualified Go name in camelCase (runSequential).
	camel = regexp.MustCompile(`^[a-z]+[A-Z]\w*$`)
	// exported is an unqualified exported name, or Type.Member.
	exported = regexp.MustCompile(`^([A-Z]\w*)(?:\.([A-Za-z_]\w*))?(?:\(\))?$`)
	// ownsRow is a row of the table of what each package owns.
	ownsRow = regexp.MustCompile("^\\| `([^`]+)` \\|")
)

// architectureProblems checks docs/architecture.md (text): its table of
// what each package owns has a row for every package of pkgs that has a
// line in the layout, and none for a package that is gone; every piece
// of code it names exists: pkg.Name in the package, an exported Name in
// the package of its row (or a method or field of one of its types), and
// a camelCase name somewhere in the module.
func architectureProblems(text string, pkgs []string, names map[string]map[string]bool) []string {
	var out []string
	known := map[string]bool{}
	for _, p := range pkgs {
		known[p] = true
	}
	rows := map[string]bool{}
	row := ""
	for n, line := range strings.Split(text, "\n") {
		row = ""
		if m := ownsRow.FindStringSubmatch(line); m != nil {
			row = strings.TrimSuffix(m[1], "/")
			rows[row] = true
			if !known[row] {
				out = append(out, fmt.Sprintf("docs/architecture.md:%d: a row for %s, which is no package of the module", n+1, row))
			}
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			if p := nameProblem(m[1], row, names); p != "" {
				out = append(out, fmt.Sprintf("docs/architecture.md:%d: %s", n+1, p))
			}
		}
	}
	for _, p := range pkgs {
		if inLayout(p) && !rows[p] {
			out = append(out, fmt.Sprintf("docs/architecture.md has no row for `%s` in the table of what each package owns", p))
		}
	}
	return out
}

// nameProblem says what is wrong with the code span s of a line in the
// row of package row (""), or "".
func nameProblem(s, row string, names map[string]map[string]bool) string {
	if m := qualified.FindStringSubmatch(s); m != nil {
		set, ok := names[m[1]]
		if !ok {
			return "" // not a package of the project: a file name or a field path
		}
		name := m[2]
		if m[3] != "" {
			name += "." + m[3]
		}
		if !set[name] {
			return fmt.Sprintf("`%s` names %s, which package %s does not declare", s, name, m[1])
		}
		return ""
	}
	if camel.MatchString(s) {
		for _, set := range names {
			if set[s] {
				return ""
			}
		}
		return fmt.Sprintf("`%s` is declared nowhere in the module", s)
	}
	if m := exported.FindStringSubmatch(s); m != nil && row != "" {
		set := names[filepath.Base(row)]
		name := m[1]
		if m[2] != "" {
			name += "." + m[2]
		}
		if set != nil && !set[name] && !member(set, name) {
			return fmt.Sprintf("`%s` in %s's row: package %s declares no %s", s, row, filepath.Base(row), name)
		}
	}
	return ""
}

// member reports whether set holds name as a method or field of one of
// its types (`At` for Fit.At).
func member(set map[string]bool, name string) bool {
	for n := range set {
		if strings.HasSuffix(n, "."+name) {
			return true
		}
	}
	return false
}

// TestArchitectureProblems: a missing row, a row of a package that is
// gone, and names that no longer exist are each reported.
func TestArchitectureProblems(t *testing.T) {
	names := map[string]map[string]bool{
		"design": {"Sequential": true, "For": true},
		"lab":    {"Runner": true, "Runner.Run": true},
	}
	text := "| package | owns | does not |\n|---|---|---|\n" +
		"| `internal/design` | `For` picks one; `Rounds` and `design.Sequential` | |\n" +
		"| `internal/gone` | | |\n" +
		"starts (`runSequential`), `lab.Runner.Run`, `lab.Runner.Stop`, `plans/default.yaml`\n"
	got := architectureProblems(text, []string{"internal/design", "internal/lab"}, names)
	want := []string{
		"docs/architecture.md:3: `Rounds` in internal/design's row: package design declares no Rounds",
		"docs/architecture.md:4: a row for internal/gone, which is no package of the module",
		"docs/architecture.md:5: `runSequential` is declared nowhere in the module",
		"docs/architecture.md:5: `lab.Runner.Stop` names Runner.Stop, which package lab does not declare",
		"docs/architecture.md has no row for `internal/lab` in the table of what each package owns",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestHeadline: a package's layout line is the head of its synopsis.
func TestHeadline(t *testing.T) {
	for _, tc := range []struct{ synopsis, want string }{
		// The head before a colon, without "Package x is".
		{"Package results is the model of a results folder: the record of a run.", "the model of a results folder"},
		// A verb stays.
		{"Package lab runs whole experiments: it builds the services.", "runs whole experiments"},
		// A command, and a sentence without a colon.
		{"Command showdown compares service implementations under load.", "compares service implementations under load"},
		// A synopsis cut at a blank line before a formula.
		{"Package scaling fits the law to figures over core counts,", "fits the law to figures over core counts"},
	} {
		if got := headline(tc.synopsis); got != tc.want {
			t.Errorf("headline(%q) = %q, want %q", tc.synopsis, got, tc.want)
		}
	}
}
