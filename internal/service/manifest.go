// Package service finds, builds and starts the implementations: it
// discovers those under services/ by their manifests, builds them (cached
// by a hash of their sources), starts them with the common environment,
// waits until they are healthy and stops them with everything they
// spawned.
package service

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/showdownlab/showdown/internal/located"

	"github.com/showdownlab/showdown/workloads"
)

// ManifestFile is the name of the manifest in each service folder.
const ManifestFile = "showdown.yaml"

// Manifest describes one implementation: how to build it, run it, and which
// workloads it serves. Its format is documented in services/README.md.
type Manifest struct {
	// Name is the implementation's name; it equals its folder's name.
	Name string
	// Language is the implementation's language, e.g. "go".
	Language string
	// Description says in one line what the stack is made of.
	Description string
	// Workloads lists the workloads the service serves, in manifest order.
	Workloads []string
	// Build holds the build steps, each an argv run in Dir; may be empty.
	BuildSteps [][]string
	// Run is the argv that starts the server, run in Dir.
	Run []string
	// Artifact is what ships (a file or folder relative to Dir), for size reports.
	Artifact string
	// Sources are globs (relative to Dir, "**" matching any depth) whose
	// content keys the build cache.
	Sources []string
	// Knobs are the stack-specific environment variables with defaults.
	Knobs map[string]Knob
	// Image is the service's image recipe, a COPY-only Containerfile
	// relative to Dir; empty when the service has none.
	Image string
	// ImageSteps are argv lists run in Dir after the build and before the
	// image build, making what the recipe copies beyond the build's output.
	ImageSteps [][]string
	// Pools says how the service's processes share its database pools.
	Pools Pools
	// Cores is the knob that sets the stack's concurrency at a plan's
	// core counts; zero for a stack that follows its CPUs by itself.
	Cores Cores
	// Dir is the absolute path of the service folder.
	Dir string
	// File is the absolute path of the manifest.
	File string
	// lines are where fields are written in File ("name", "build[0]"),
	// for errors that come after parsing (a failed build step).
	lines map[string]int
}

// Knob is a stack-specific environment variable a plan may set.
type Knob struct {
	// Default is the value used when a plan does not set the knob; empty
	// means the variable is not set at all.
	Default string
	// Help says what the knob does.
	Help string
}

// Supports reports whether the service serves workload w.
func (m *Manifest) Supports(w string) bool { return slices.Contains(m.Workloads, w) }

// KnobNames returns the knob names in sorted order.
func (m *Manifest) KnobNames() []string {
	names := make([]string, 0, len(m.Knobs))
	for k := range m.Knobs {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Problem is one mistake in a manifest, located by file, line and field
// (the project's one located error type).
type Problem = located.Error

// Problems is every mistake found in one or more manifests.
type Problems []*Problem

// Error lists the problems, one a line.
func (ps Problems) Error() string { return located.List(ps).Error() }

// Hint tells the user where the manifest format is documented.
func (ps Problems) Hint() string {
	return "the manifest format is documented in services/README.md"
}

// Discover reads every services/*/showdown.yaml under root, and the
// manifest of each folder of dirs (a stack from anywhere, named by a plan's
// path: or a command's argument), and returns the valid manifests sorted
// by name. A folder given twice, or one of services/ given again, counts
// once. When some manifests are invalid or missing, or two stacks from
// different folders share a name, it still returns the valid ones, with a
// Problems error listing every problem at once.
func Discover(root string, dirs ...string) ([]*Manifest, error) {
	files, err := filepath.Glob(filepath.Join(root, "services", "*", ManifestFile))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var all Problems
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		f := filepath.Join(abs, ManifestFile)
		if slices.Contains(files, f) {
			continue
		}
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			all = append(all, missing(abs))
			continue
		}
		files = append(files, f)
	}
	var (
		ms   []*Manifest
		seen = map[string]*Manifest{}
	)
	for _, f := range files {
		m, ps := Load(f)
		all = append(all, ps...)
		if m == nil || len(ps) > 0 {
			continue
		}
		if prev, dup := seen[m.Name]; dup {
			all = append(all, &Problem{File: f, Line: m.lines["name"], Field: "name",
				Msg:  fmt.Sprintf("two stacks are named %q: %s and %s", m.Name, prev.Dir, m.Dir),
				Hint: "a stack's name says which it is in every result: rename one folder, and its name: with it"})
			continue
		}
		seen[m.Name] = m
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
	if len(all) > 0 {
		return ms, all
	}
	return ms, nil
}

// missing is the problem of a stack's folder that holds no manifest.
func missing(dir string) *Problem {
	msg := fmt.Sprintf("no stack here: %s holds no %s", dir, ManifestFile)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		msg = fmt.Sprintf("no stack here: there is no folder %s", dir)
	}
	return &Problem{File: filepath.Join(dir, ManifestFile), Msg: msg,
		Hint: "a stack's folder holds its manifest, " + ManifestFile + ": docs/your-stack.md starts one, services/README.md has its fields"}
}

// IsFolder reports whether arg, given where a stack is expected, names a
// folder rather than a stack under services/: a path holding a '/' or
// starting with '.', as a name never does (./our-service, ../x, /srv/x).
func IsFolder(arg string) bool {
	return strings.ContainsRune(arg, filepath.Separator) || strings.HasPrefix(arg, ".")
}

// Find returns the stack that arg names in ms: the one of that name, or
// with IsFolder(arg) the one in that folder (which Discover must have been
// given).
func Find(ms []*Manifest, arg string) (*Manifest, error) {
	if !IsFolder(arg) {
		return Lookup(ms, arg)
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.Dir == abs {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no valid stack in %s", abs)
}

// Source says where m comes from: its folder relative to root
// (services/go-stdlib) when it is inside, else its absolute folder.
func (m *Manifest) Source(root string) string {
	if rel, err := filepath.Rel(root, m.Dir); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return m.Dir
}

// Lookup returns the manifest named name from ms, or an error listing the
// names there are.
func Lookup(ms []*Manifest, name string) (*Manifest, error) {
	names := make([]string, 0, len(ms))
	for _, m := range ms {
		if m.Name == name {
			return m, nil
		}
		names = append(names, m.Name)
	}
	if len(names) == 0 {
		return nil, hintError{fmt.Errorf("unknown service %q: no valid manifest found under services/*/%s", name, ManifestFile), folderHint(name)}
	}
	return nil, hintError{fmt.Errorf("unknown service %q (known: %s)", name, strings.Join(names, ", ")), folderHint(name)}
}

// folderHint is the hint for an unknown stack name: the folder of that
// name here, when there is one, or the list of services.
func folderHint(name string) string {
	if _, err := os.Stat(filepath.Join(name, ManifestFile)); err == nil {
		return fmt.Sprintf("a stack outside services/ is named by its folder: ./%s", name)
	}
	return "run 'showdown services' for the list; a stack outside services/ is named by its folder (./our-service)"
}

// FindRoot walks up from start to the folder holding both services/ and
// go.mod: the root of the showdown tree. SHOWDOWN_ROOT, when set, wins.
func FindRoot(start string) (string, error) {
	if r := os.Getenv("SHOWDOWN_ROOT"); r != "" {
		if !isRoot(r) {
			return "", hintError{fmt.Errorf("SHOWDOWN_ROOT=%s holds no services/ folder and go.mod", r),
				"point SHOWDOWN_ROOT at a showdown checkout, or unset it"}
		}
		return filepath.Abs(r)
	}
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for {
		if isRoot(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", hintError{fmt.Errorf("no showdown tree (a folder with services/ and go.mod) above %s", start),
				"run showdown inside a showdown checkout, or set SHOWDOWN_ROOT to one"}
		}
		dir = parent
	}
}

func isRoot(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "services"))
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// hintError is an error with advice for the user.
type hintError struct {
	err  error
	hint string
}

func (e hintError) Error() string { return e.err.Error() }
func (e hintError) Unwrap() error { return e.err }

// Hint returns the advice.
func (e hintError) Hint() string { return e.hint }

var (
	nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	envRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// commonEnv is set by the harness; a knob may not redefine it.
	commonEnv = []string{"PORT", "HOST", "DATABASE_URL", "MYSQL_URL", "DB_POOL_SIZE", "LOG_REQUESTS"}
	fields    = []string{"name", "language", "description", "workloads", "build", "run", "artifact", "sources", "knobs", "image", "image_build", "pools", "cores"}
)

// Load reads and validates one manifest file. It returns the manifest (nil
// when the file cannot be parsed) and every problem found.
func Load(file string) (*Manifest, Problems) {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, Problems{{File: file, Msg: err.Error()}}
	}
	return parse(file, filepath.Dir(abs), data)
}

// parse decodes data by hand from yaml nodes so every problem carries its
// line and all of them are reported at once.
func parse(file, dir string, data []byte) (*Manifest, Problems) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Problems{{File: file, Msg: "invalid YAML: empty file"}}
		}
		return nil, Problems(located.FromYAML(file, err))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	x := &manifestParser{file: file, root: root}
	if root.Kind != yaml.MappingNode {
		x.add(root, "", "the manifest must be a mapping of fields (name, language, run, ...)")
		return nil, x.ps
	}
	m := &Manifest{Dir: dir, File: filepath.Join(dir, filepath.Base(file)), Knobs: map[string]Knob{}, Pools: Pools{Per: PoolPerService}, lines: map[string]int{}}
	x.m = m
	x.fields()
	x.names(dir)
	x.workloads()
	x.run()
	x.builds()
	x.sources()
	if v, ok := x.got["knobs"]; ok && v.Tag != "!!null" {
		x.knobs(v)
	}
	if v, ok := x.got["pools"]; ok && v.Tag != "!!null" {
		m.Pools = parsePools(v, m.Knobs, x.add)
	}
	if v, ok := x.got["cores"]; ok && v.Tag != "!!null" {
		m.Cores = parseCores(v, m.Knobs, x.add)
	}
	if len(x.ps) > 0 {
		return m, x.ps
	}
	return m, nil
}

// manifestParser is one parse of a manifest: the fields found (got) and
// the problems so far (ps), which each part of the manifest adds to.
type manifestParser struct {
	file string
	root *yaml.Node
	got  map[string]*yaml.Node
	m    *Manifest
	ps   Problems
}

// add records a problem at n's line (none when n is nil).
func (x *manifestParser) add(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	x.ps = append(x.ps, &Problem{File: x.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// fields collects the root's known fields and their lines; an unknown
// field or one given twice is a problem.
func (x *manifestParser) fields() {
	x.got = map[string]*yaml.Node{}
	for i := 0; i+1 < len(x.root.Content); i += 2 {
		k, v := x.root.Content[i], x.root.Content[i+1]
		if !slices.Contains(fields, k.Value) {
			x.add(k, k.Value, "unknown field%s", suggest(k.Value, fields))
			continue
		}
		if _, dup := x.got[k.Value]; dup {
			x.add(k, k.Value, "given twice")
			continue
		}
		x.got[k.Value] = v
		x.m.lines[k.Value] = k.Line
	}
}

// str is the string of field ("" when absent or not a string).
func (x *manifestParser) str(field string, required bool) string {
	v, ok := x.got[field]
	if !ok {
		if required {
			x.add(x.root, field, "missing (required)")
		}
		return ""
	}
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		x.add(v, field, "must be a string")
		return ""
	}
	if required && strings.TrimSpace(v.Value) == "" {
		x.add(v, field, "must not be empty")
	}
	return v.Value
}

// strs is the list of strings v holds, field naming it.
func (x *manifestParser) strs(field string, v *yaml.Node) []string {
	if v.Kind != yaml.SequenceNode {
		x.add(v, field, "must be a list of strings, e.g. [a, b]")
		return nil
	}
	out := make([]string, 0, len(v.Content))
	for i, e := range v.Content {
		if e.Kind != yaml.ScalarNode || e.Tag == "!!null" {
			x.add(e, fmt.Sprintf("%s[%d]", field, i), "must be a string")
			continue
		}
		out = append(out, e.Value)
	}
	return out
}

// inside reports whether path names a file inside the service folder.
func inside(path string) bool {
	return !filepath.IsAbs(path) && !strings.HasPrefix(filepath.Clean(path), "..")
}

// names reads the name (the folder's, dir), language, description and
// artifact.
func (x *manifestParser) names(dir string) {
	m := x.m
	m.Name = x.str("name", true)
	if m.Name != "" {
		if !nameRE.MatchString(m.Name) {
			x.add(x.got["name"], "name", "%q: use lower-case letters, digits and '-' (e.g. go-stdlib)", m.Name)
		} else if base := filepath.Base(dir); base != m.Name {
			x.add(x.got["name"], "name", "%q must equal the folder name %q", m.Name, base)
		}
	}
	m.Language = x.str("language", true)
	m.Description = x.str("description", false)
	m.Artifact = x.str("artifact", false)
	if m.Artifact != "" && !inside(m.Artifact) {
		x.add(x.got["artifact"], "artifact", "%q must be a path inside the service folder", m.Artifact)
	}
}

// workloads reads the workloads served: known ones, each once.
func (x *manifestParser) workloads() {
	v, ok := x.got["workloads"]
	if !ok {
		x.add(x.root, "workloads", "missing (required): list the workloads served, from %s", strings.Join(workloads.Names, ", "))
		return
	}
	x.m.Workloads = x.strs("workloads", v)
	if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
		x.add(v, "workloads", "must list at least one of %s", strings.Join(workloads.Names, ", "))
	}
	seen := map[string]bool{}
	for i, w := range x.m.Workloads {
		field := fmt.Sprintf("workloads[%d]", i)
		switch {
		case !slices.Contains(workloads.Names, w):
			x.add(v.Content[i], field, "unknown workload %q%s", w, suggest(w, workloads.Names))
		case seen[w]:
			x.add(v.Content[i], field, "%q listed twice", w)
		}
		seen[w] = true
	}
}

// run reads the argv that starts the server.
func (x *manifestParser) run() {
	v, ok := x.got["run"]
	if !ok {
		x.add(x.root, "run", "missing (required): the argv that starts the server, e.g. [bin/server]")
		return
	}
	x.m.Run = x.strs("run", v)
	if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
		x.add(v, "run", "must not be empty: the argv that starts the server, e.g. [bin/server]")
	}
	if len(x.m.Run) > 0 && x.m.Run[0] == "" {
		x.add(v.Content[0], "run[0]", "the program must not be empty")
	}
}

// builds reads the build steps, the image recipe and its steps.
func (x *manifestParser) builds() {
	m := x.m
	m.BuildSteps = x.steps("build")
	m.ImageSteps = x.steps("image_build")
	m.Image = x.str("image", false)
	if m.Image != "" && !inside(m.Image) {
		x.add(x.got["image"], "image", "%q must be a path inside the service folder", m.Image)
	}
	if m.Image == "" && len(m.ImageSteps) > 0 {
		x.add(x.got["image_build"], "image_build", "steps for an image, but no image recipe (image: Containerfile)")
	}
}

// steps reads field's list of argv lists, each with its line.
func (x *manifestParser) steps(field string) [][]string {
	v, ok := x.got[field]
	if !ok || v.Tag == "!!null" {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		x.add(v, field, "must be a list of argv lists, e.g. [[go, build, -o, bin/server, .]]")
		return nil
	}
	var out [][]string
	for i, step := range v.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		if step.Kind != yaml.SequenceNode {
			x.add(step, f, "must be an argv list, e.g. [go, build, .]")
			continue
		}
		x.m.lines[f] = step.Line
		argv := x.strs(f, step)
		if len(step.Content) == 0 || (len(argv) > 0 && argv[0] == "") {
			x.add(step, f, "must not be empty")
			continue
		}
		out = append(out, argv)
	}
	return out
}

// sources reads the globs of the sources, which a service that builds
// must list: they key the build cache.
func (x *manifestParser) sources() {
	v, ok := x.got["sources"]
	if !ok || v.Tag == "!!null" {
		if len(x.m.BuildSteps) > 0 {
			x.add(x.root, "sources", "missing: a service with build steps must list the globs of its sources (they key the build cache)")
		}
		return
	}
	x.m.Sources = x.strs("sources", v)
	for i, g := range x.m.Sources {
		if _, err := filepath.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil || g == "" || !inside(g) {
			x.add(v.Content[i], fmt.Sprintf("sources[%d]", i), "%q is not a glob inside the service folder", g)
		}
	}
}

// knobs reads the mapping of knobs v: environment variables the harness
// does not set, each once.
func (x *manifestParser) knobs(v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		x.add(v, "knobs", "must be a mapping NAME: {default: \"...\", help: \"...\"}")
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, kv := v.Content[i], v.Content[i+1]
		field := "knobs." + k.Value
		switch _, dup := x.m.Knobs[k.Value]; {
		case !envRE.MatchString(k.Value):
			x.add(k, field, "not a valid environment variable name")
		case slices.Contains(commonEnv, k.Value):
			x.add(k, field, "%s is set by the harness for every service; it cannot be a knob", k.Value)
		case dup:
			x.add(k, field, "given twice")
		case kv.Kind != yaml.MappingNode:
			x.add(kv, field, "must be a mapping {default: \"...\", help: \"...\"}")
		default:
			x.m.Knobs[k.Value] = x.knob(field, kv)
		}
	}
}

// knob reads one knob's mapping kv: its default and help.
func (x *manifestParser) knob(field string, kv *yaml.Node) Knob {
	var kn Knob
	for j := 0; j+1 < len(kv.Content); j += 2 {
		kk, vv := kv.Content[j], kv.Content[j+1]
		sub := field + "." + kk.Value
		if vv.Kind != yaml.ScalarNode {
			x.add(vv, sub, "must be a string")
			continue
		}
		val := vv.Value
		if vv.Tag == "!!null" {
			val = ""
		}
		switch kk.Value {
		case "default":
			kn.Default = val
		case "help":
			kn.Help = val
		default:
			x.add(kk, sub, "unknown field%s", suggest(kk.Value, []string{"default", "help"}))
		}
	}
	return kn
}

// suggest returns ` (did you mean "x"?)` for the closest of known to s
// (located.Closest), or a list of the known names when none is close.
func suggest(s string, known []string) string {
	if c := located.Closest(s, known); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return fmt.Sprintf(" (known: %s)", strings.Join(known, ", "))
}
