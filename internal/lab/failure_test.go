package lab

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/machine"
	"github.com/showdownlab/showdown/load/atomicfile"
)

// resultsDir is a results folder for a test that runs real services: when
// the test fails, it also prints the last 30 lines of every service's log
// under the folder and how busy the machine was meanwhile (machine.Since),
// so that a timing cause can be told from a bug.
func resultsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	before, _ := machine.ReadStat()
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(failureNotes(dir, before))
		}
	})
	return dir
}

// failureNotes are resultsDir's words for a failed test.
func failureNotes(dir string, before machine.Stat) string {
	var b strings.Builder
	b.WriteString(machine.Since(before))
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		// A running service's log has its temporary name until Close.
		name := d.Name()
		if name != "service.log" && !strings.HasPrefix(name, atomicfile.TempPrefix+"service.log") {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		tail := tailFile(path, 30)
		if tail == "" {
			tail = "(empty)"
		}
		b.WriteString("\nlast lines of " + rel + ":\n  | " + strings.ReplaceAll(tail, "\n", "\n  | "))
		return nil
	})
	return b.String()
}

// TestFailureNotes: the notes name the machine's load and quote each
// service log's tail, whole or still under its temporary name, and
// nothing else.
func TestFailureNotes(t *testing.T) {
	dir := t.TempDir()
	start := filepath.Join(dir, "runs", "string", "go-stdlib", "trial-1")
	os.MkdirAll(start, 0o755)
	var lines []string
	for i := range 40 {
		lines = append(lines, "line "+strconv.Itoa(i+1))
	}
	os.WriteFile(filepath.Join(start, "service.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(start, atomicfile.TempPrefix+"service.log.tmp-123"), []byte("listening on 127.0.0.1:8080\n"), 0o644)
	os.WriteFile(filepath.Join(start, "build.log"), []byte("not a service's\n"), 0o644)
	before, _ := machine.ReadStat()
	got := failureNotes(dir, before)
	for _, want := range []string{"machine: load average ", "last lines of runs/string/go-stdlib/trial-1/service.log:\n  | line 11\n", "  | line 40", "listening on 127.0.0.1:8080"} {
		if !strings.Contains(got, want) {
			t.Errorf("notes lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "line 10\n") || strings.Contains(got, "not a service's") {
		t.Errorf("notes hold more than 30 lines of the log, or another log:\n%s", got)
	}
}
