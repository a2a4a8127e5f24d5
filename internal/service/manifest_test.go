package service

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeManifest writes text as services/<name>/showdown.yaml under root and
// returns the file's path.
func writeManifest(t *testing.T, root, name, text string) string {
	t.Helper()
	dir := filepath.Join(root, "services", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, ManifestFile)
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

const validManifest = `name: go-x
language: go
description: a test
workloads: [string, bank]
build:
  - [go, build, -o, bin/server, .]
run: [bin/server]
artifact: bin/server
sources: [go.mod, "*.go"]
image: Containerfile
image_build:
  - [env, CGO_ENABLED=0, go, build, -o, bin/image/server, .]
knobs:
  GOMAXPROCS: {default: "", help: "scheduler threads"}
  GOGC: {default: "100", help: "GC target"}
`

func TestLoadValid(t *testing.T) {
	root := t.TempDir()
	f := writeManifest(t, root, "go-x", validManifest)
	m, ps := Load(f)
	if len(ps) > 0 {
		t.Fatalf("Load: unexpected problems:\n%v", ps)
	}
	want := &Manifest{
		Name: "go-x", Language: "go", Description: "a test",
		Workloads:  []string{"string", "bank"},
		BuildSteps: [][]string{{"go", "build", "-o", "bin/server", "."}},
		Run:        []string{"bin/server"},
		Artifact:   "bin/server",
		Sources:    []string{"go.mod", "*.go"},
		Image:      "Containerfile",
		ImageSteps: [][]string{{"env", "CGO_ENABLED=0", "go", "build", "-o", "bin/image/server", "."}},
		Knobs:      map[string]Knob{"GOMAXPROCS": {Help: "scheduler threads"}, "GOGC": {Default: "100", Help: "GC target"}},
		Pools:      Pools{Per: PoolPerService},
		Dir:        filepath.Dir(f),
		File:       f,
	}
	if got := m.lines["build[0]"]; got != 6 {
		t.Errorf("line of build[0] = %d, want 6", got)
	}
	m.lines = nil
	if !reflect.DeepEqual(m, want) {
		t.Errorf("Load:\ngot  %+v\nwant %+v", m, want)
	}
}

func TestLoadProblems(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // each a substring of one problem, in order: "line: field: message"
	}{
		// A tab where YAML wants spaces: the parser's line is kept.
		{"bad yaml", "name: go-x\nrun: [x]\n\tfoo: 1\n", []string{":3: invalid YAML: found character that cannot start any token"}},
		// An empty file is not a manifest.
		{"empty", "", []string{"invalid YAML: empty file"}},
		// A list where a mapping is expected.
		{"not a mapping", "- a\n- b\n", []string{":1: the manifest must be a mapping"}},
		// A misspelt key gets a suggestion, with its line.
		{"unknown key", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: [x]\nartefact: bin/x\n",
			[]string{`:5: artefact: unknown field (did you mean "artifact"?)`}},
		// run is required; the problem points at the mapping.
		{"missing run", "name: go-x\nlanguage: go\nworkloads: [string]\n", []string{":1: run: missing (required)"}},
		// An empty run.
		{"empty run", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: []\n", []string{":4: run: must not be empty"}},
		// An unknown workload, with the line of the list item.
		{"unknown workload", "name: go-x\nlanguage: go\nworkloads:\n  - string\n  - bnak\nrun: [x]\n",
			[]string{`:5: workloads[1]: unknown workload "bnak" (did you mean "bank"?)`}},
		// Every problem at once, in file order of discovery.
		{"several", "name: Go_X\nworkloads: [string, string]\nrun: x\nbuild: [[]]\nknobs:\n  PORT: {default: \"1\"}\n  A: {defualt: x}\n",
			[]string{
				`:1: name: "Go_X": use lower-case`,
				`:1: language: missing (required)`,
				`:2: workloads[1]: "string" listed twice`,
				`:3: run: must be a list of strings`,
				`:4: build[0]: must not be empty`,
				`:6: knobs.PORT: PORT is set by the harness`,
				`:7: knobs.A.defualt: unknown field (did you mean "default"?)`,
			}},
		// The name must equal the folder.
		{"name mismatch", "name: go-y\nlanguage: go\nworkloads: [string]\nrun: [x]\n", []string{`:1: name: "go-y" must equal the folder name "go-x"`}},
		// Build steps without sources could never be cached correctly.
		{"build without sources", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: [x]\nbuild: [[make]]\n", []string{`sources: missing`}},
		// Pools: an unknown mode, a knob the manifest lacks, and per
		// process without the knob that counts the processes.
		{"pools", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: [x]\npools: {per: thread, processes: WORKERS}\n",
			[]string{`:5: pools.per: "thread": want service`, `:5: pools.processes: "WORKERS" is not one of the manifest's knobs`}},
		{"pools per process", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: [x]\npools: {per: process}\n",
			[]string{`:5: pools.processes: missing`}},
		// Cores: a knob the manifest does not declare, and no value.
		{"cores unknown knob", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: [x]\ncores: {env: WORKERS}\n",
			[]string{`:5: cores.env: "WORKERS" is not one of the manifest's knobs`, `:5: cores.value: missing`}},
		// Cores: no env, a misspelt field.
		{"cores no env", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: [x]\ncores: {valeu: \"{cores}\"}\n",
			[]string{`:5: cores.valeu: unknown field (did you mean "value"?)`, `:5: cores.env: missing`, `:5: cores.value: missing`}},
		// Cores as a scalar.
		{"cores scalar", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: [x]\ncores: WORKERS\n",
			[]string{`:5: cores: must be a mapping`}},
		// A source glob escaping the folder.
		{"source outside", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: [x]\nsources: [../secret]\n", []string{`:5: sources[0]: "../secret" is not a glob inside`}},
		// An image recipe escaping the folder.
		{"image outside", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: [x]\nimage: ../Containerfile\n", []string{`:5: image: "../Containerfile" must be a path inside`}},
		// Image steps with no recipe to use what they make.
		{"image_build without image", "name: go-x\nlanguage: go\nworkloads: [string]\nrun: [x]\nimage_build: [[make, image]]\n", []string{`:5: image_build: steps for an image, but no image recipe`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			f := writeManifest(t, root, "go-x", tt.text)
			_, ps := Load(f)
			if len(ps) != len(tt.want) {
				t.Fatalf("Load: got %d problems, want %d:\n%v", len(ps), len(tt.want), ps)
			}
			for i, p := range ps {
				if !strings.HasPrefix(p.Error(), f) {
					t.Errorf("problem %d: %q does not start with the file name", i, p.Error())
				}
				if !strings.Contains(p.Error(), tt.want[i]) {
					t.Errorf("problem %d:\ngot  %q\nwant it to contain %q", i, p.Error(), tt.want[i])
				}
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	writeManifest(t, root, "go-x", validManifest)
	bad := writeManifest(t, root, "node-y", "name: node-y\nlanguage: js\nworkloads: [strung]\nrun: [node, server.js]\n")
	// A folder without a manifest is not a service.
	os.MkdirAll(filepath.Join(root, "services", "notes"), 0o755)

	ms, err := Discover(root)
	if len(ms) != 1 || ms[0].Name != "go-x" {
		t.Errorf("Discover: got %d manifests, want only go-x", len(ms))
	}
	var ps Problems
	if err == nil {
		t.Fatal("Discover: no error for an invalid manifest")
	}
	ps, ok := err.(Problems)
	if !ok || len(ps) != 1 || ps[0].File != bad || ps[0].Line != 3 {
		t.Errorf("Discover: got error %v, want one problem at %s:3", err, bad)
	}
	if _, err := Lookup(ms, "node-y"); err == nil || !strings.Contains(err.Error(), "known: go-x") {
		t.Errorf("Lookup(node-y): got %v, want an error listing go-x", err)
	}
}

// A stack from a folder outside services/ joins those inside; a folder
// without a manifest and a second stack of a name are problems naming
// both folders; a folder given twice, or one of services/ given again,
// counts once.
func TestDiscoverFolders(t *testing.T) {
	root := t.TempDir()
	writeManifest(t, root, "go-x", validManifest)
	elsewhere := t.TempDir()
	ours := filepath.Dir(writeManifest(t, elsewhere, "our-service", strings.Replace(validManifest, "name: go-x", "name: our-service", 1)))
	twin := filepath.Dir(writeManifest(t, elsewhere, "go-x", validManifest))
	empty := filepath.Join(elsewhere, "empty")
	os.MkdirAll(empty, 0o755)

	tests := []struct {
		name     string
		dirs     []string
		names    []string // the stacks found, by name
		problems []string // substrings, one per problem, in order
	}{
		// No folder: services/ alone.
		{"none", nil, []string{"go-x"}, nil},
		// A folder outside, given twice: one more stack.
		{"outside", []string{ours, ours + "/"}, []string{"go-x", "our-service"}, nil},
		// A folder of services/ given again is the same stack.
		{"inside again", []string{filepath.Join(root, "services", "go-x")}, []string{"go-x"}, nil},
		// A folder without a manifest, and one that does not exist.
		{"no manifest", []string{empty, filepath.Join(elsewhere, "gone")}, []string{"go-x"}, []string{
			empty + "/showdown.yaml: no stack here: " + empty + " holds no showdown.yaml (hint: a stack's folder holds its manifest",
			"no stack here: there is no folder " + filepath.Join(elsewhere, "gone")}},
		// Two stacks named go-x: refused with both folders.
		{"same name", []string{twin}, []string{"go-x"}, []string{
			twin + "/showdown.yaml:1: name: two stacks are named \"go-x\": " + filepath.Join(root, "services", "go-x") + " and " + twin}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := Discover(root, tt.dirs...)
			var names []string
			for _, m := range ms {
				names = append(names, m.Name)
			}
			if !reflect.DeepEqual(names, tt.names) {
				t.Errorf("stacks = %v, want %v", names, tt.names)
			}
			var ps Problems
			if err != nil {
				ps = err.(Problems)
			}
			if len(ps) != len(tt.problems) {
				t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(tt.problems), err)
			}
			for i, want := range tt.problems {
				if !strings.Contains(ps[i].Error(), want) {
					t.Errorf("problem %d = %q, want it to hold %q", i, ps[i].Error(), want)
				}
			}
		})
	}

	// Find takes a name, or a folder Discover was given; Source says
	// where each comes from.
	ms, _ := Discover(root, ours)
	for _, tc := range []struct{ arg, name, source string }{
		{"go-x", "go-x", filepath.Join("services", "go-x")},
		{ours, "our-service", ours},
	} {
		m, err := Find(ms, tc.arg)
		if err != nil || m.Name != tc.name || m.Source(root) != tc.source {
			t.Errorf("Find(%s) = %v, %v; want %s from %s", tc.arg, m, err, tc.name, tc.source)
		}
	}
	if _, err := Find(ms, twin); err == nil {
		t.Errorf("Find(%s): a folder Discover was not given is found", twin)
	}
}

// A name never looks like a folder, and a folder always does.
func TestIsFolder(t *testing.T) {
	for arg, want := range map[string]bool{
		"go-stdlib":      false,
		"our-service":    false,
		"./our-service":  true,
		"../our-service": true,
		"/srv/ours":      true,
		"x/y":            true,
	} {
		if got := IsFolder(arg); got != want {
			t.Errorf("IsFolder(%q) = %v, want %v", arg, got, want)
		}
	}
}

func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	writeManifest(t, root, "go-x", validManifest)
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644)
	deep := filepath.Join(root, "services", "go-x", "a", "b")
	os.MkdirAll(deep, 0o755)
	t.Setenv("SHOWDOWN_ROOT", "")
	got, err := FindRoot(deep)
	if err != nil || got != root {
		t.Errorf("FindRoot(%s) = %q, %v; want %q", deep, got, err, root)
	}
	if _, err := FindRoot(t.TempDir()); err == nil {
		t.Error("FindRoot outside a tree: no error")
	} else if _, ok := err.(interface{ Hint() string }); !ok {
		t.Errorf("FindRoot outside a tree: error %v carries no hint", err)
	}
	t.Setenv("SHOWDOWN_ROOT", root)
	if got, err := FindRoot("/"); err != nil || got != root {
		t.Errorf("FindRoot with SHOWDOWN_ROOT = %q, %v; want %q", got, err, root)
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		glob, name string
		want       bool
	}{
		{"*.go", "main.go", true},             // a plain glob
		{"*.go", "sub/main.go", false},        // * does not cross folders
		{"src/**/*.java", "src/A.java", true}, // ** may be no folder at all
		{"src/**/*.java", "src/main/java/x/A.java", true},
		{"src/**/*.java", "test/A.java", false},
		{"**", "a/b/c", true},             // everything
		{"pom.xml", "pom.xml", true},      // a literal file
		{"pom.xml", "sub/pom.xml", false}, // literal is anchored at the service folder
	}
	for _, tt := range tests {
		if got := globMatch(tt.glob, tt.name); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.glob, tt.name, got, tt.want)
		}
	}
}

func TestSourceFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"pom.xml", "src/main/A.java", "src/main/B.txt", "node_modules/x/y.js", "lib/a.js", "lib/deep/b.js", "bin/server"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644)
	}
	m := &Manifest{Name: "x", Dir: dir, Artifact: "bin", Sources: []string{"pom.xml", "src/**/*.java", "lib", "**/*.js"}}
	got, err := m.sourceFiles()
	if err != nil {
		t.Fatal(err)
	}
	// node_modules and the artifact are skipped though "**/*.js" could reach them;
	// a folder glob ("lib") takes its whole tree.
	want := []string{"lib/a.js", "lib/deep/b.js", "pom.xml", "src/main/A.java"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sourceFiles:\ngot  %q\nwant %q", got, want)
	}
}

func TestCoresKnob(t *testing.T) {
	root := t.TempDir()
	f := writeManifest(t, root, "node-x", "name: node-x\nlanguage: javascript\nworkloads: [string]\nrun: [node, s.js]\n"+
		"knobs:\n  WORKERS: {default: \"1\", help: workers}\ncores: {env: WORKERS, value: \"{cores}\"}\n")
	m, ps := Load(f)
	if len(ps) > 0 {
		t.Fatalf("Load: %v", ps)
	}
	for _, tt := range []struct {
		n    int
		want map[string]string
	}{
		// One core: one worker.
		{1, map[string]string{"WORKERS": "1"}},
		// Eight cores: eight workers.
		{8, map[string]string{"WORKERS": "8"}},
		// No core count (a plan without cores): nothing set.
		{0, nil},
	} {
		if got := m.Cores.EnvAt(tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("EnvAt(%d): got %v, want %v", tt.n, got, tt.want)
		}
	}
	// A value around the placeholder, e.g. a JVM flag.
	c := Cores{Env: "JAVA_OPTS", Value: "-XX:ActiveProcessorCount={cores}"}
	if got := c.EnvAt(4)["JAVA_OPTS"]; got != "-XX:ActiveProcessorCount=4" {
		t.Errorf("EnvAt(4): got %q", got)
	}
	// Automatic stacks get nothing.
	if got := (Cores{}).EnvAt(4); got != nil || !(Cores{}).Automatic() {
		t.Errorf("automatic: got %v", got)
	}
}
