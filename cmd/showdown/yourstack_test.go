package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
)

// TestYourStack follows docs/your-stack.md as a newcomer would: a copy of
// go-stdlib in a folder outside the tree, renamed our-service, verified by
// its folder and compared with go-stdlib in interleaved rounds by a plan
// that names it by path. The comparison is short, like the smoke plans:
// it proves the pipeline, and its verdict is not asserted (it is the same
// code; docs/your-stack.md says what a real comparison needs).
func TestYourStack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a service, starts databases and runs a plan (skipped with -short)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH")
	}
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	ours := filepath.Join(work, "our-service")
	copyStack(t, filepath.Join(root, "services", "go-stdlib"), ours)
	manifest := filepath.Join(ours, service.ManifestFile)
	text, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.Replace(string(text), "name: go-stdlib", "name: our-service", 1)
	if renamed == string(text) {
		t.Fatalf("%s has no 'name: go-stdlib' line to rename", manifest)
	}
	os.WriteFile(manifest, []byte(renamed), 0o644)
	env := map[string]string{"SHOWDOWN_ROOT": root}

	// showdown services ./our-service: listed with its folder.
	st, out, errb := svcTestState(context.Background(), env)
	if code := run(st, []string{"services", ours}); code != exitOK {
		t.Fatalf("showdown services %s: exit code %d\n%s%s", ours, code, out, errb)
	}
	if !strings.Contains(out.String(), "our-service") || !strings.Contains(out.String(), ours) {
		t.Errorf("showdown services does not list our-service from %s:\n%s", ours, out)
	}

	// showdown verify --service ../our-service (relative to here).
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, ours)
	if err != nil {
		t.Fatal(err)
	}
	st, out, errb = svcTestState(context.Background(), env)
	code := run(st, []string{"verify", "--service", rel, "--health-timeout", "2m"})
	t.Logf("verify: %s; progress:\n%s", lastLine(out.String()), progressLines(errb.String()))
	if code != exitOK {
		t.Fatalf("showdown verify --service %s: exit code %d\n%s\n%s", rel, code, out, errb)
	}
	if !strings.Contains(errb.String(), "starting our-service") {
		t.Errorf("verify did not start our-service:\n%s", errb)
	}

	// A two-stack plan beside the folder, naming it by path; run as a
	// process of its own, since a run pins itself to the generator's CPUs.
	plan := filepath.Join(work, "ours-vs-go.yaml")
	os.WriteFile(plan, []byte(`name: ours-vs-go
implementations:
  - go-stdlib
  - path: our-service
workloads: [string]
verify: quick
load:
  model: closed
  levels: [4]
  duration: 2s
  warmup: 1s
trials: 1
round: 500ms
settle: 250ms
measure_max: 6s
`), 0o644)
	resultsDir := filepath.Join(work, "results")
	cmd := exec.Command(os.Args[0], "run", "--results", resultsDir, plan)
	cmd.Env = append(os.Environ(), asCLI+"=1", "SHOWDOWN_ROOT="+root)
	cmd.Dir = work
	outb, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("showdown run %s: %v\n%s", plan, err, outb)
	}
	dirs, _ := filepath.Glob(filepath.Join(resultsDir, "*"))
	if len(dirs) != 1 {
		t.Fatalf("results folders %v, want one\n%s", dirs, outb)
	}
	rec, err := results.ReadRun(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if im := rec.Plan.Implementations[1]; im.Service != "our-service" || im.Dir != ours {
		t.Errorf("run.json records %+v, want our-service from %s", im, ours)
	}
	var ran []string
	for _, sr := range rec.Services {
		if sr.Status != results.OK {
			t.Errorf("%s on %s: %s: %s\n%s", sr.Implementation, sr.Workload, sr.Status, sr.Reason, sr.LogTail)
		}
		ran = append(ran, sr.Implementation)
	}
	for _, want := range []string{"go-stdlib", "our-service"} {
		if !slices.Contains(ran, want) {
			t.Errorf("no run of %s in run.json (runs: %v)", want, ran)
		}
	}
	if len(rec.Comparisons) != 1 || rec.Comparisons[0].Verdict == nil || len(rec.Comparisons[0].Verdict.Pairs) != 1 {
		t.Fatalf("run.json has no verdict on the pair: %+v\n%s", rec.Comparisons, outb)
	}
	v := rec.Comparisons[0].Verdict
	t.Logf("verdict: %v, pair %+v", v.Ranking, v.Pairs[0])
	if _, err := os.Stat(filepath.Join(dirs[0], "report.html")); err != nil {
		t.Errorf("no report: %v", err)
	}
	// Nothing is left running from the folder.
	if left := runningFrom(ours); len(left) > 0 {
		t.Errorf("processes left running from %s: %v", ours, left)
	}
}

// copyStack copies a service folder as a newcomer would, without what
// its build made (bin/, target/, node_modules/).
func copyStack(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			if slices.Contains([]string{"bin", "target", "node_modules", ".venv"}, d.Name()) && rel != "." {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// runningFrom lists the command lines of the processes that run in dir
// or whose command line names it.
func runningFrom(dir string) []string {
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		b, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil {
			continue
		}
		cl := strings.ReplaceAll(string(b), "\x00", " ")
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		if strings.Contains(cl, dir) || strings.HasPrefix(cwd, dir) {
			found = append(found, cl)
		}
	}
	return found
}

// A stack's folder that is wrong is refused before anything starts, each
// mistake with its file, line and a hint, by every command that takes one.
func TestStackFolderMistakes(t *testing.T) {
	root := tinyTree(t)
	work := t.TempDir()
	typo := filepath.Join(work, "typo")
	os.MkdirAll(typo, 0o755)
	os.WriteFile(filepath.Join(typo, service.ManifestFile), []byte("name: typo\nlanguage: go\nworkloads: [string]\nrun: [bin/server]\nbuidl: [[go, build]]\n"), 0o644)
	twin := filepath.Join(work, "tiny-bad") // the name of the tree's stack
	os.MkdirAll(twin, 0o755)
	os.WriteFile(filepath.Join(twin, service.ManifestFile), []byte("name: tiny-bad\nlanguage: go\nworkloads: [string]\nrun: [bin/server]\n"), 0o644)
	plan := func(name, impl string) string {
		f := filepath.Join(work, name+".yaml")
		os.WriteFile(f, []byte("name: "+name+"\nimplementations:\n  - tiny-bad\n  - path: "+impl+"\nworkloads: [string]\nload: {levels: [1]}\n"), 0o644)
		return f
	}
	nope := filepath.Join(work, "nope")
	tests := []struct {
		name string
		args []string
		code int
		want []string // in stderr
	}{
		// A folder that does not exist.
		{"verify, no folder", []string{"verify", "--service", nope}, exitFailure,
			[]string{nope + "/showdown.yaml: no stack here: there is no folder " + nope, "hint: a stack's folder holds its manifest"}},
		// A manifest with a mistake: its file, line, field and a hint.
		{"verify, bad field", []string{"verify", "--service", typo}, exitFailure,
			[]string{typo + "/showdown.yaml:5: buidl: unknown field (did you mean \"build\"?)", "hint: the manifest format"}},
		// A folder whose stack has the name of one under services/.
		{"verify, same name", []string{"verify", "--service", twin}, exitFailure,
			[]string{"two stacks are named \"tiny-bad\": " + filepath.Join(root, "services", "tiny-bad") + " and " + twin}},
		{"up, no folder", []string{"up", "--service", nope}, exitFailure, []string{"no stack here"}},
		{"images, bad field", []string{"images", "build", typo}, exitFailure, []string{"buidl: unknown field"}},
		// A name that is a folder here, written without ./: the hint says how.
		{"services, bare word", []string{"services", "typo"}, exitUsage, []string{"unexpected argument \"typo\"", "./typo"}},
		// A plan's folder without a manifest: the plan's line.
		{"plan, no stack", []string{"run", "--check", plan("p1", "nope")}, exitUsage,
			[]string{"p1.yaml:4: implementations.1.path: no stack in nope (" + nope + ")"}},
		// A plan's folder with a bad manifest: the manifest's line.
		{"plan, bad field", []string{"run", "--check", plan("p2", "typo")}, exitFailure,
			[]string{typo + "/showdown.yaml:5: buidl: unknown field"}},
		// A plan's folder whose stack takes another's name.
		{"plan, same name", []string{"run", "--check", plan("p3", "tiny-bad")}, exitFailure,
			[]string{"two stacks are named \"tiny-bad\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, out, errb := svcTestState(context.Background(), map[string]string{"SHOWDOWN_ROOT": root})
			if code := run(st, tt.args); code != tt.code {
				t.Errorf("exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errb)
			}
			for _, w := range tt.want {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb)
				}
			}
		})
	}
}
