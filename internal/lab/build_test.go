package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
)

// TestBuildLanes builds three services whose build steps check how they
// ran: the two of language "x" must take turns (each holds a folder that
// the other's mkdir would find), and the one of language "y" must run
// beside one of them (each waits up to 30 s for the other to have
// started, so builds one after another fail).
func TestBuildLanes(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: builds run one at a time")
	}
	root := t.TempDir()
	t.Setenv("SHOWDOWN_CACHE", filepath.Join(root, "cache"))
	marks := filepath.Join(root, "marks")
	if err := os.Mkdir(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	// meet: say this build started, then wait for the other lane's.
	meet := func(me, other string) string {
		return fmt.Sprintf(`touch %[1]s/%[2]s.started; i=0; while [ ! -e %[1]s/%[3]s.started ]; do i=$((i+1)); [ $i -lt 300 ] || { echo "%[3]s never started beside %[2]s" >&2; exit 1; }; sleep 0.1; done`, marks, me, other)
	}
	// turn: fail if another build of the language is inside its turn.
	turn := fmt.Sprintf(`mkdir %[1]s/x.turn || { echo "two builds of language x at once" >&2; exit 1; }; sleep 0.3; rmdir %[1]s/x.turn`, marks)
	steps := map[string]struct{ lang, script string }{
		"x-one": {"x", meet("x", "y") + "; " + turn},
		"x-two": {"x", turn},
		"y-one": {"y", meet("y", "x")},
	}
	for name, s := range steps {
		dir := filepath.Join(root, "services", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		manifest := fmt.Sprintf(`name: %s
language: %s
description: a build that checks how it was scheduled
workloads: [string]
build:
  - [sh, -c, %q]
run: [sh, -c, "exit 1"]
sources: [showdown.yaml]
`, name, s.lang, s.script)
		if err := os.WriteFile(filepath.Join(dir, service.ManifestFile), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat := catalogOf(t, root)
	p := parseTestPlan(t, cat, `name: lanes
implementations: [x-one, x-two, y-one]
workloads: [string]
load: {levels: [1], duration: 1s, warmup: 0s}
placement: {}
`)
	x := &execution{rn: &Runner{Root: root}, plan: p, dir: t.TempDir(), manifests: map[string]*service.Manifest{}}
	x.rec = &results.Run{Builds: map[string]*results.Build{}}
	ms, err := service.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		x.manifests[m.Name] = m
	}
	x.build(context.Background())
	for _, name := range []string{"x-one", "x-two", "y-one"} {
		b := x.rec.Builds[name]
		if b == nil {
			t.Errorf("%s: no build record", name)
		} else if b.Error != "" || b.Cached {
			t.Errorf("%s: build error %q (cached %v), want built\n%s", name, b.Error, b.Cached, b.LogTail)
		}
	}
	if len(x.rec.Warnings) > 0 {
		t.Errorf("warnings: %s", strings.Join(x.rec.Warnings, "; "))
	}
}
