package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
)

// upperMain is a stack serving the string workload's one request, doing
// spin microseconds of extra work per request: 0 in the commit before
// the change, 1000 in the slowed one.
const upperMain = `package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const spin = %SPIN% * time.Microsecond

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(` + "`" + `{"status":"ok"}` + "`" + `))
	})
	mux.HandleFunc("POST /uppercase", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ S string ` + "`" + `json:"s"` + "`" + ` }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for end := time.Now().Add(spin); time.Now().Before(end); {
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"v": strings.ToUpper(in.S)})
	})
	l, err := net.Listen("tcp", net.JoinHostPort(os.Getenv("HOST"), os.Getenv("PORT")))
	if err != nil {
		os.Exit(1)
	}
	http.Serve(l, mux)
}
`

// TestYourChange follows docs/your-change.md: a stack in a git repository,
// judged against its parent commit by fail_if's slower_than. A commit that
// changes nothing but a README passes (exit 0, said why); a commit that
// makes each request spin 1 ms fails (exit 3, said so). It builds three
// copies of a small stack and runs two short plans, about a minute and a
// half of both CPUs with the noise probes (skipped with -short).
//
// The slowed commit is some 20 times slower, and each plan takes three
// starts: under go test's other packages on two CPUs the rounds of one
// start varied threefold (2026-12-02), and with two starts the interval's
// t quantile (12.7) let that noise reach a 1.0 ratio; with three it is 4.3.
func TestYourChange(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a stack at three revisions and runs two plans (skipped with -short)")
	}
	for _, tool := range []string{"go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not on PATH")
		}
	}
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	svc := filepath.Join(repo, "upper")
	os.MkdirAll(svc, 0o755)
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(svc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("showdown.yaml", "name: upper\nlanguage: go\nworkloads: [string]\nbuild: [[go, build, -o, bin/server, .]]\nsources: [\"*.go\", go.mod]\nrun: [bin/server]\nartifact: bin/server\n")
	write("go.mod", "module upper\n\ngo 1.22\n")
	write("main.go", strings.Replace(upperMain, "%SPIN%", "0", 1))
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("bin/\n"), 0o644)
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "upper")
	write("README.md", "upper: a stack for a test\n")
	git("add", "-A")
	git("commit", "-q", "-m", "a README: no change to the code")

	plan := filepath.Join(repo, "change.yaml")
	os.WriteFile(plan, []byte(`name: change
implementations:
  - {path: upper, rev: HEAD~1}
  - path: upper
workloads: [string]
verify: quick
load: {model: closed, levels: [4], duration: 1s, warmup: 1s}
trials: 3
round: 500ms
settle: 250ms
measure_max: 12s
fail_if: {slower_than: 5%}
`), 0o644)
	cache := t.TempDir()
	runPlan := func(name string) (int, string, *results.Run) {
		resultsDir := filepath.Join(t.TempDir(), "results")
		cmd := exec.Command(os.Args[0], "run", "--results", resultsDir, plan)
		cmd.Env = append(os.Environ(), asCLI+"=1", "SHOWDOWN_ROOT="+root, "SHOWDOWN_CACHE="+cache)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		dirs, _ := filepath.Glob(filepath.Join(resultsDir, "*"))
		if len(dirs) != 1 {
			t.Fatalf("%s: results folders %v, want one\n%s", name, dirs, out)
		}
		rec, err := results.ReadRun(dirs[0])
		if err != nil {
			t.Fatal(err)
		}
		return code, string(out), rec
	}

	// Unchanged code: no significant difference, or not within the
	// precision; either way exit 0, and said.
	code, out, rec := runPlan("unchanged")
	t.Logf("unchanged: exit %d\n%s", code, verdictLines(out))
	if code != exitOK || !strings.Contains(out, "fail_if slower_than 5%: passed") {
		t.Errorf("unchanged: exit %d, want 0 with the reason it passed\n%s", code, out)
	}
	if im := rec.Plan.Implementations[0]; im.Service != "upper@HEAD~1" || im.Rev != "HEAD~1" || len(im.Commit) != 40 {
		t.Errorf("run.json records %+v, want upper@HEAD~1 with its commit", im)
	}
	if c := rec.Comparisons; len(c) != 1 || c[0].Verdict == nil || len(c[0].Verdict.FailIf) != 1 || c[0].Verdict.FailIf[0].Baseline != "upper@HEAD~1" {
		t.Fatalf("run.json's comparison: %+v, want one fail_if judgement against upper@HEAD~1", c)
	}

	// The slowed commit against its parent: exit 3, said on stderr.
	write("main.go", strings.Replace(upperMain, "%SPIN%", "1000", 1))
	git("add", "-A")
	git("commit", "-q", "-m", "spin 1 ms per request")
	code, out, rec = runPlan("slowed")
	t.Logf("slowed: exit %d\n%s", code, verdictLines(out))
	if code != exitThresholds || !strings.Contains(out, "FAILED: upper is") || !strings.Contains(out, "slower than upper@HEAD~1") {
		t.Errorf("slowed: exit %d, want 3 with the failure said\n%s", code, out)
	}
	if s := rec.Comparisons[0].Verdict.FailIf; len(s) != 1 || !s[0].Crossed {
		t.Errorf("run.json's fail_if: %+v, want crossed", s)
	}
	// No worktree left in the repository, nothing left running from it.
	if wt, _ := exec.Command("git", "-C", repo, "worktree", "list").Output(); strings.Count(string(wt), "\n") != 1 {
		t.Errorf("worktrees left:\n%s", wt)
	}
	if left := runningFrom(cache); len(left) > 0 {
		t.Errorf("processes left running from %s: %v", cache, left)
	}
}

// verdictLines are the lines of a run's output from its verdict on.
func verdictLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "VERDICT") || strings.Contains(l, "fail_if") || strings.Contains(l, "×") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// run --check --against REV FOLDER makes the plan of a folder against its
// revision and says the defaults and the revision's commit; a revision
// that does not exist and a folder outside git are refused (exit 2), each
// naming the folder and the revision. Nothing is built.
func TestRunAgainstCheck(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	root := svcTree(t, map[string]string{"rival": "name: rival\nlanguage: go\nworkloads: [string]\nrun: [bin/s]\n"})
	t.Setenv("SHOWDOWN_CACHE", t.TempDir())
	repo := t.TempDir()
	svc := filepath.Join(repo, "ours")
	os.MkdirAll(svc, 0o755)
	manifest := "name: ours\nlanguage: go\nworkloads: [string]\nrun: [bin/s]\n"
	os.WriteFile(filepath.Join(svc, service.ManifestFile), []byte(manifest), 0o644)
	for i, msg := range []string{"first", "second"} {
		os.WriteFile(filepath.Join(svc, "n"), []byte{byte('0' + i)}, 0o644)
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", msg}} {
			if i == 1 && args[0] == "init" {
				continue
			}
			if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	plain := filepath.Join(t.TempDir(), "ours")
	os.MkdirAll(plain, 0o755)
	os.WriteFile(filepath.Join(plain, service.ManifestFile), []byte(manifest), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want []string // in stdout and stderr
	}{
		// The folder against its parent: two arms, the defaults said.
		{"folder", []string{"run", "--check", "--against", "HEAD~1", svc}, exitOK,
			[]string{"ok: 2 implementation(s)", "ours@HEAD~1: revision HEAD~1, commit ", "wider than ±3%", "10m0s after the builds"}},
		// A revision the repository lacks: the folder and the repository named.
		{"bad rev", []string{"run", "--check", "--against", "v9", svc}, exitUsage,
			[]string{svc + ": --against: revision v9 does not exist in " + repo, "nothing was run"}},
		// A folder outside git.
		{"not git", []string{"run", "--check", "--against", "HEAD~1", plain}, exitUsage,
			[]string{plain + " is not in a git repository, so it has no revision HEAD~1", "git init"}},
	}
	for _, tc := range tests {
		st, out, errb := svcTestState(context.Background(), map[string]string{"SHOWDOWN_ROOT": root})
		if code := run(st, tc.args); code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.code, out, errb)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String()+errb.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s%s", tc.name, w, out, errb)
			}
		}
	}
}
