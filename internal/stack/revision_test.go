package stack

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
)

// gitRepo makes a repository in a temporary folder holding a stack's
// folder, svc, committed twice: its manifest's description says which
// commit ("first", "second").
func gitRepo(t *testing.T) (repo, svc string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	repo = t.TempDir()
	svc = filepath.Join(repo, "stacks", "svc")
	os.MkdirAll(svc, 0o755)
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	for _, which := range []string{"first", "second"} {
		os.WriteFile(filepath.Join(svc, "showdown.yaml"), []byte("name: svc\nlanguage: go\ndescription: "+which+"\nworkloads: [string]\nrun: [bin/server]\n"), 0o644)
		run("add", "-A")
		run("commit", "-q", "-m", which)
	}
	return repo, svc
}

// A folder at a revision is the folder as that commit had it, in a copy
// of its own, named as the folder; a revision that does not exist, a
// folder outside git and a folder the commit lacks are errors naming
// both, with a hint.
func TestMaterialise(t *testing.T) {
	repo, svc := gitRepo(t)
	t.Setenv("SHOWDOWN_CACHE", t.TempDir())
	rev, err := Materialise(svc, "HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(rev.Dir, "showdown.yaml"))
	if err != nil || !strings.Contains(string(b), "description: first") || filepath.Base(rev.Dir) != "svc" || len(rev.Commit) != 40 {
		t.Errorf("HEAD~1 of %s: %+v with %q (%v), want the first commit's manifest in a folder svc", svc, rev, b, err)
	}
	again, err := Materialise(svc, "HEAD~1")
	if err != nil || again != rev {
		t.Errorf("HEAD~1 again: %+v, %v; want the same copy %+v", again, err, rev)
	}
	if out, _ := exec.Command("git", "-C", repo, "worktree", "list").Output(); strings.Count(string(out), "\n") != 1 {
		t.Errorf("worktrees left in the repository:\n%s", out)
	}
	plain := t.TempDir()
	tests := []struct {
		name, folder, rev string
		want              []string // in the message and hint
	}{
		// A revision the repository does not have: both named.
		{"bad rev", svc, "nope~3", []string{"revision nope~3 does not exist in " + repo, svc, "log --oneline"}},
		// Beyond the first commit.
		{"too far", svc, "HEAD~5", []string{"revision HEAD~5 does not exist"}},
		// A folder outside any repository.
		{"not git", plain, "HEAD~1", []string{plain + " is not in a git repository, so it has no revision HEAD~1", "git init"}},
		// A folder the commit did not have.
		{"no folder then", filepath.Join(repo, "stacks"), "HEAD~1", nil},
	}
	os.MkdirAll(filepath.Join(repo, "later"), 0o755)
	tests[3].folder = filepath.Join(repo, "later")
	os.WriteFile(filepath.Join(repo, "later", "x"), nil, 0o644)
	tests[3].want = []string{"later did not exist at revision HEAD~1"}
	for _, tc := range tests {
		_, err := Materialise(tc.folder, tc.rev)
		var re *RevisionError
		if !errors.As(err, &re) {
			t.Errorf("%s: error %v, want a RevisionError", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(re.Msg+" hint: "+re.Hint, w) {
				t.Errorf("%s: %q (hint %q) lacks %q", tc.name, re.Msg, re.Hint, w)
			}
		}
	}
}

// A plan naming a folder at a revision gets an arm of that name, its
// manifest from the commit and its commit recorded; a bad revision is a
// mistake at the implementation's line, as --against's is at its own.
func TestParsePlanRevisions(t *testing.T) {
	repo, _ := gitRepo(t)
	t.Setenv("SHOWDOWN_CACHE", t.TempDir())
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "services"), 0o755)
	file := filepath.Join(repo, "p.yaml")
	text := "name: p\nimplementations:\n  - {path: stacks/svc, rev: HEAD~1}\n  - path: stacks/svc\nworkloads: [string]\nload: {levels: [1]}\n"
	p, ms, err := ParsePlan(root, file, []byte(text), plan.MachineOf(2))
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Arms(); len(a) != 2 || a[0].ID() != "svc@HEAD~1" || len(a[0].Commit) != 40 || a[1].ID() != "svc" || p.Baseline() != "svc@HEAD~1" {
		t.Errorf("arms %+v, baseline %s; want svc@HEAD~1 (with its commit) and svc", a, p.Baseline())
	}
	descs := map[string]string{}
	for _, m := range ms {
		descs[m.Name] = m.Description
	}
	if descs["svc@HEAD~1"] != "first" || descs["svc"] != "second" {
		t.Errorf("manifests %v, want svc@HEAD~1 from the first commit and svc from the working tree", descs)
	}

	bad := "name: p\nimplementations:\n  - path: stacks/svc\n  - {path: stacks/svc, rev: v9}\nworkloads: [string]\nload: {levels: [1]}\n"
	_, _, err = ParsePlan(root, file, []byte(bad), plan.MachineOf(2))
	var list plan.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !strings.Contains(list[0].Error(), "p.yaml:4: implementations.1.rev: revision v9 does not exist in "+repo) {
		t.Errorf("bad rev: %v, want one mistake at line 4", err)
	}
	_, _, err = ParsePlanAgainst(root, file, []byte("name: p\nimplementations: [{path: stacks/svc}]\nworkloads: [string]\nload: {levels: [1]}\n"), plan.MachineOf(2), "HEAD~9")
	if !errors.As(err, &list) || len(list) != 1 || !strings.Contains(list[0].Error(), "--against: revision HEAD~9 does not exist") {
		t.Errorf("--against HEAD~9: %v, want one mistake of --against", err)
	}
}
