package internal

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// The floors of docs/architecture.md, from the commands down. A package
// imports only packages of its own floor and of the floors below it: no
// arrow climbs.
const (
	commands = iota
	runners
	bringUp
	parts
	leaves
)

// floorNames name the floors and say what lives on each.
var floorNames = [...]struct{ name, what string }{
	commands: {"commands", "`cmd/showdown` and bench's tools: flags, exit codes, process state; they wire the rest"},
	runners:  {"runners and readers", "what runs a plan, a suite or a fault test, and what reads results back"},
	bringUp:  {"bring-up and rules", "bringing a stack up, the warm-up rule, the scenario language, and the ways of measuring a plan, each with its runner and its judgement (interleaved rounds, the capacity search, sequential starts), over what they ask of the lab (measure)"},
	parts:    {"parts", "databases, services, limits, samplers, the results model, the plan format and the verdict's words"},
	leaves:   {"leaves", "packages that need nothing of the project, or only another leaf"},
}

// floorOf places each of the module's packages on a floor. A new package
// is one line here; docs/architecture.md's drawing follows (go test
// ./internal -update).
var floorOf = map[string]int{
	"cmd/showdown":            commands,
	"bench/attack/generators": commands,
	"bench/attack/hello":      commands,
	"tools/pause":             commands,
	"bench/attack/prof":       commands,
	"bench/warmup-cold":       commands,

	"internal/lab":       runners,
	"internal/k8s":       runners,
	"internal/faults":    runners,
	"internal/verify":    runners,
	"internal/contract":  runners,
	"internal/report":    runners,
	"internal/imported":  runners,
	"internal/images":    runners,
	"internal/jmx":       runners,
	"internal/neighbour": runners,

	"internal/stack":      bringUp,
	"internal/warmup":     bringUp,
	"internal/scenario":   bringUp,
	"internal/measure":    bringUp,
	"internal/rounds":     bringUp,
	"internal/sequential": bringUp,
	"internal/capacity":   bringUp,

	"internal/measure/measuretest": bringUp,

	"internal/db":      parts,
	"internal/service": parts,
	"internal/cgroup":  parts,
	"internal/monitor": parts,
	"internal/noise":   parts,
	"internal/results": parts,
	"internal/plan":    parts,
	"internal/located": parts,
	"internal/wording": parts,

	"workloads":         leaves,
	"internal/cpulist":  leaves,
	"internal/proctree": leaves,
	"internal/machine":  leaves,
	"internal/stats":    leaves,
	"internal/human":    leaves,
	"internal/scaling":  leaves,
	"load":              leaves,
	"load/atomicfile":   leaves,
}

// The generated part of docs/architecture.md lies between these lines.
const (
	floorsBegin = "<!-- floors: written by go test ./internal -update from architecture.edges and floorOf in internal/floors_test.go; edit those, not this -->"
	floorsEnd   = "<!-- end of floors -->"
)

// checkFloors checks that every package of pkgs has a floor and that no
// edge ("from -> to") climbs to a higher floor, then compares the floors
// section of docs/architecture.md with the one drawn from edges; with
// -update it writes the section instead.
func checkFloors(t *testing.T, pkgs, edges []string) {
	t.Helper()
	for _, p := range floorProblems(pkgs, edges, floorOf) {
		t.Error(p)
	}
	if t.Failed() {
		return
	}
	checkSection(t, "../docs/architecture.md", floorsBegin, floorsEnd, drawFloors(pkgs, edges), "architecture.edges and floorOf")
}

// floorProblems lists the packages of pkgs that floors does not place,
// the places of packages that do not exist, and the edges that climb.
func floorProblems(pkgs, edges []string, floors map[string]int) []string {
	var out []string
	known := map[string]bool{}
	for _, p := range pkgs {
		known[p] = true
		if _, ok := floors[p]; !ok {
			out = append(out, fmt.Sprintf("package %s has no floor: add a line for it to floorOf in internal/floors_test.go (e.g. %q: parts,), then go test ./internal -update", p, p))
		}
	}
	var gone []string
	for p := range floors {
		if !known[p] {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone)
	for _, p := range gone {
		out = append(out, fmt.Sprintf("floorOf in internal/floors_test.go places %s, which is no package of the module: remove its line", p))
	}
	for _, e := range edges {
		from, to, _ := strings.Cut(e, " -> ")
		f, okf := floors[from]
		g, okt := floors[to]
		if okf && okt && g < f {
			out = append(out, fmt.Sprintf("%s (%s) imports %s, a floor up (%s): no import climbs; move the code down, or the package to another floor", from, floorNames[f].name, to, floorNames[g].name))
		}
	}
	return out
}

// drawFloors writes the floors section: each floor's packages and what
// each imports on its own floor and below, from edges.
func drawFloors(pkgs, edges []string) string {
	imports := map[string][]string{}
	for _, e := range edges {
		from, to, _ := strings.Cut(e, " -> ")
		imports[from] = append(imports[from], to)
	}
	// height is how long a chain of imports on its own floor a package
	// heads: within a floor, importers come before what they import.
	height := map[string]int{}
	var heightOf func(p string) int
	heightOf = func(p string) int {
		if h, ok := height[p]; ok {
			return h
		}
		height[p] = 0 // a cycle cannot be: go list would have refused it
		h := 0
		for _, to := range imports[p] {
			if floorOf[to] == floorOf[p] {
				h = max(h, 1+heightOf(to))
			}
		}
		height[p] = h
		return h
	}
	sorted := append([]string(nil), pkgs...)
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if floorOf[a] != floorOf[b] {
			return floorOf[a] < floorOf[b]
		}
		if ha, hb := heightOf(a), heightOf(b); ha != hb {
			return ha > hb
		}
		return a < b
	})
	code := func(list []string) string {
		if len(list) == 0 {
			return ""
		}
		sort.Strings(list)
		return "`" + strings.Join(list, "`, `") + "`"
	}
	var b strings.Builder
	b.WriteString("\n\n")
	for f, fl := range floorNames {
		fmt.Fprintf(&b, "%d. **%s**: %s.\n", f+1, fl.name, fl.what)
	}
	b.WriteString("\n| floor | package | imports on its floor | imports below |\n|---|---|---|---|\n")
	last := -1
	for _, p := range sorted {
		f := floorOf[p]
		var same, below []string
		for _, to := range imports[p] {
			if floorOf[to] == f {
				same = append(same, to)
			} else {
				below = append(below, to)
			}
		}
		name := ""
		if f != last {
			name, last = fmt.Sprintf("%d. %s", f+1, floorNames[f].name), f
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", name, p, code(same), code(below))
	}
	b.WriteString("\n")
	return b.String()
}

// TestFloorProblems: a package without a floor is named, with the line to
// add; so are a floor of a package that is gone and an import that climbs.
func TestFloorProblems(t *testing.T) {
	floors := map[string]int{"internal/lab": runners, "internal/plan": parts, "internal/gone": leaves}
	got := floorProblems([]string{"internal/lab", "internal/plan", "internal/new"},
		[]string{"internal/lab -> internal/plan", "internal/plan -> internal/lab"}, floors)
	want := []string{
		`package internal/new has no floor: add a line for it to floorOf in internal/floors_test.go (e.g. "internal/new": parts,)`,
		"floorOf in internal/floors_test.go places internal/gone, which is no package of the module",
		"internal/plan (parts) imports internal/lab, a floor up (runners and readers): no import climbs",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	if p := floorProblems([]string{"internal/lab", "internal/plan"}, []string{"internal/lab -> internal/plan"}, map[string]int{"internal/lab": runners, "internal/plan": parts}); len(p) != 0 {
		t.Errorf("a graph that keeps to its floors: %q", p)
	}
}

// TestDrawFloors: the drawing lists each package on its floor, importers
// before what they import, and splits imports on its floor from those
// below.
func TestDrawFloors(t *testing.T) {
	got := drawFloors([]string{"internal/plan", "internal/results", "load"},
		[]string{"internal/results -> internal/plan", "internal/results -> load", "internal/plan -> load"})
	for _, row := range []string{
		"| 4. parts | `internal/results` | `internal/plan` | `load` |\n|  | `internal/plan` |  | `load` |\n| 5. leaves | `load` |  |  |\n",
	} {
		if !strings.Contains(got, row) {
			t.Errorf("drawing lacks\n%s\ngot:\n%s", row, got)
		}
	}
}
