package internal

import (
	"flag"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
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
	{"internal/report", []string{"internal/lab", "internal/stack", "internal/verify", "internal/db", "internal/service", "internal/monitor"}, "a report is drawn from results alone, and judged again by the ways of measuring's judgements (rounds, capacity), not by what runs a plan"},
	{"internal/plan", []string{"internal/lab", "internal/results", "internal/report", "internal/stack", "internal/machine"}, "a plan is a file format, not a runner: the machine it is checked for is an input, never read"},
	{"internal/stack", []string{"internal/lab", "internal/report", "internal/results", "internal/verify"}, "bringing a stack up serves run, verify and what comes next alike"},
	{"internal/verify", []string{"internal/lab", "internal/report", "internal/stack", "internal/results"}, "the contract suite checks a URL, whoever started it"},
	{"internal/contract", []string{"internal/lab", "internal/report", "internal/results", "internal/faults"}, "checking stacks against the suite starts them and their databases, and records nothing"},
	{"internal/db", []string{"internal/lab", "internal/report", "internal/stack", "internal/verify", "internal/results"}, "the databases know no runner"},
	{"internal/service", []string{"internal/lab", "internal/report", "internal/stack", "internal/db"}, "a service knows how to build and start, not what runs it"},
	{"internal/faults", []string{"internal/lab", "internal/report", "internal/verify"}, "the fault test brings a stack up and judges it, whoever asks"},
	{"internal/scenario", []string{"internal/lab", "internal/report", "internal/stack", "internal/db"}, "scenarios only drive load"},
	{"internal/lab", []string{"internal/report", "internal/k8s"}, "the runner writes results; drawing them is the report's"},
	{"internal/lab", []string{"internal/verify", "internal/faults", "internal/noise", "internal/neighbour"}, "the lab calls the contract suite, the fault test, the noise probe and the neighbour through lab.Steps, which the command wires"},
	{"internal/results", []string{"internal/cgroup", "internal/monitor", "internal/noise", "internal/proctree", "internal/neighbour", "internal/service", "internal/db"}, "reading a results folder links no sampler, cgroupfs or process code: results owns the records it stores"},
	{"internal/cgroup", []string{"internal/monitor", "internal/results", "internal/plan"}, "limits and pinning need no sampler"},
	{"internal/monitor", []string{"internal/cgroup", "internal/results", "internal/plan"}, "the sampler reads processes, whoever asks"},
	{"internal/k8s", []string{"internal/lab", "internal/report", "internal/stack", "internal/verify"}, "the cluster runner shares the results model and the warm-up rule, not the local runner"},
	{"internal/warmup", []string{"internal/lab", "internal/report", "internal/stack", "internal/k8s"}, "the warm-up rule and its drive loop serve the lab and the cluster alike"},
	{"internal/imported", []string{"internal/lab", "internal/report", "internal/stack"}, "importing other tools' results builds the results model, and draws nothing"},
	{"internal/images", []string{"internal/lab", "internal/report", "internal/stack", "internal/k8s"}, "images are built from a service's folder alone"},
	{"internal/jmx", []string{"internal/lab", "internal/report", "internal/stack"}, "a JMeter plan becomes a scenario file, not a run"},
	{"internal/human", []string{"internal/", "load", "workloads"}, "formatting numbers for people needs nothing"},
	{"internal/stats", []string{"internal/", "load", "workloads"}, "statistics need nothing of the project"},
	{"internal/scaling", []string{"load", "workloads", "internal/results", "internal/plan", "internal/human", "internal/lab", "internal/report", "internal/k8s"}, "the scalability law is arithmetic on figures: stats and nothing else"},
	{"internal/proctree", []string{"internal/", "load", "workloads"}, "walking a process tree needs nothing"},
	{"internal/cpulist", []string{"internal/", "load", "workloads"}, "parsing a CPU list needs nothing"},
	{"internal/machine", []string{"internal/plan", "internal/results", "internal/monitor", "internal/lab", "load", "workloads"}, "reading the machine's /proc files needs nothing of the project but the CPU-list parser (a leaf)"},
	{"internal/neighbour", []string{"internal/", "load", "workloads"}, "the noisy neighbour stands alone, for any binary to start"},
	{"bench/", []string{"internal/lab", "internal/stack", "internal/report", "internal/k8s"}, "bench's tools measure the engine and the method, and link no runner"},
	{"internal/noise", []string{"internal/lab", "internal/results", "internal/monitor", "internal/cgroup"}, "the machine's noise probe knows no service"},
	{"internal/measure", []string{"internal/lab", "internal/stack", "internal/monitor", "internal/cgroup", "internal/db", "internal/service", "internal/rounds", "internal/capacity", "internal/sequential"}, "what a way of measuring asks of the lab is interfaces, below every way"},
	{"internal/rounds", []string{"internal/lab", "internal/stack", "internal/monitor", "internal/cgroup", "internal/service", "internal/db", "internal/capacity", "internal/sequential"}, "interleaved rounds reach the lab only through internal/measure, and need no other way of measuring"},
	{"internal/capacity", []string{"internal/lab", "internal/stack", "internal/monitor", "internal/cgroup", "internal/service", "internal/db", "internal/rounds", "internal/sequential"}, "the capacity search reaches the lab only through internal/measure, and needs no other way of measuring"},
	{"internal/sequential", []string{"internal/lab", "internal/stack", "internal/monitor", "internal/cgroup", "internal/service", "internal/db", "internal/rounds", "internal/capacity"}, "sequential starts reach the lab only through internal/measure, and need no other way of measuring"},
	{"internal/wording", []string{"internal/lab", "internal/measure", "internal/rounds", "internal/capacity", "internal/sequential", "internal/report", "internal/stack", "internal/monitor"}, "the verdict's words are said from results alone"},
}

// TestImportRules checks importRules over every non-test Go file of the
// project's module, bench/'s tools included; services/ and the folders
// with a go.mod of their own (bench/attack/clients, tools/k8stest) are
// other modules and left out.
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
			if rel == "services" || rel == "results" || strings.HasSuffix(rel, "testdata") || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir // a module of its own (bench/attack/clients, tools/k8stest)
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

var update = flag.Bool("update", false, "rewrite docs/architecture.edges from go list, and the floors of docs/architecture.md from it")

// edgesFile is the machine-readable list of the package edges that
// docs/architecture.md draws.
const edgesFile = "../docs/architecture.edges"

// TestArchitectureEdges compares docs/architecture.edges, one "from ->
// to" line per import between the project's packages, with what go list
// says the packages import, and checks that docs/architecture.md names
// every package. go test ./internal -update rewrites the list.
func TestArchitectureEdges(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{len .GoFiles}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs, edges []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from, ok := strings.CutPrefix(fields[0]+"/", module)
		if !ok {
			continue
		}
		from = strings.TrimSuffix(from, "/")
		if from == "" || fields[1] == "0" { // the module's root, or tests only (this package)
			continue
		}
		pkgs = append(pkgs, from)
		for _, imp := range fields[2:] {
			if to, ok := strings.CutPrefix(imp, module); ok {
				edges = append(edges, from+" -> "+to)
			}
		}
	}
	sort.Strings(edges)
	if len(edges) < 50 {
		t.Fatalf("go list gave %d edges; is the test run from internal/?", len(edges))
	}
	if *update {
		text := "# The imports between showdown's packages, one per line, checked against go list\n# by internal/imports_test.go (go test ./internal -update rewrites it).\n# docs/architecture.md draws them.\n" + strings.Join(edges, "\n") + "\n"
		if err := os.WriteFile(edgesFile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(edgesFile)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			listed[line] = true
		}
	}
	for _, e := range edges {
		if !listed[e] {
			t.Errorf("%s imports what docs/architecture.edges does not list: %s (update the drawing, then go test ./internal -update)", edgesFile, e)
		}
		delete(listed, e)
	}
	for e := range listed {
		t.Errorf("docs/architecture.edges lists %s, which no import makes", e)
	}
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		if (strings.HasPrefix(p, "internal/") || strings.HasPrefix(p, "load")) && !strings.Contains(string(doc), "\n| `"+p+"` |") && !strings.Contains(string(doc), "\n| `"+p+"/` |") {
			t.Errorf("docs/architecture.md has no row for `%s` in the table of what each package owns", p)
		}
	}
	checkFloors(t, pkgs, edges)
}
