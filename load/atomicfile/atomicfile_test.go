package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// crashEnv makes the test binary a writer that kills itself half way
// through a write (see TestKilledWriteLeavesOldFile).
const crashEnv = "ATOMICFILE_TEST_CRASH_PATH"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnv); path != "" {
		_ = Write(path, 0o644, func(w io.Writer) error {
			w.Write(bytes.Repeat([]byte("new "), 1<<18))
			w.(interface{ Flush() error }).Flush() // a part of the new content is on disk
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		})
		os.Exit(3) // not reached
	}
	os.Exit(m.Run())
}

func temps(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if IsTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWrite(t *testing.T) {
	old := []byte("old content\n")
	tests := []struct {
		name    string
		exists  bool // the file exists before the write
		fill    func(io.Writer) error
		want    string // the file's content after the write; "" means absent
		wantErr bool
	}{
		// A write replaces the old content whole.
		{name: "replace", exists: true, fill: func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }, want: "new\n"},
		// A new file appears only once complete.
		{name: "create", fill: func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }, want: "new\n"},
		// A writer that fails half way leaves the old file as it was.
		{name: "fail keeps old", exists: true, wantErr: true, want: string(old), fill: func(w io.Writer) error {
			io.WriteString(w, strings.Repeat("partial", 100000))
			return errors.New("disk on fire")
		}},
		// A writer that fails half way creates nothing.
		{name: "fail creates none", wantErr: true, fill: func(w io.Writer) error {
			io.WriteString(w, "partial")
			return errors.New("disk on fire")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "run.json")
			if tt.exists {
				if err := os.WriteFile(path, old, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := Write(path, 0o644, tt.fill)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Write: err = %v, want error %v", err, tt.wantErr)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tt.want == "" && !errors.Is(rerr, os.ErrNotExist):
				t.Errorf("file exists (%d bytes, err %v), want none", len(got), rerr)
			case tt.want != "" && string(got) != tt.want:
				t.Errorf("content %q (err %v), want %q", trunc(got), rerr, tt.want)
			}
			if ts := temps(t, dir); len(ts) > 0 {
				t.Errorf("temporary files left: %v", ts)
			}
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != 0o644&^umask() {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), 0o644&^umask())
			}
		})
	}
}

func trunc(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// TestKilledWriteLeavesOldFile kills a writer (SIGKILL, no deferred
// cleanup runs) after part of the new content reached the disk: the final
// name still holds the whole old content; only a temporary file, which
// readers skip, holds the part.
func TestKilledWriteLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "timeseries.csv")
	old := []byte("second,requests\n0,10\n")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, exists := range []bool{true, false} {
		if !exists {
			os.Remove(path)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("writer: %v, want killed by SIGKILL", err)
		}
		got, err := os.ReadFile(path)
		switch {
		case exists && !bytes.Equal(got, old):
			t.Errorf("after a killed write the file holds %q (err %v), want the old %q", trunc(got), err, old)
		case !exists && !errors.Is(err, os.ErrNotExist):
			t.Errorf("after a killed write of a new file it exists (%d bytes, err %v), want none", len(got), err)
		}
		ts := temps(t, dir)
		if len(ts) != 1 {
			t.Fatalf("temporary files %v, want the killed writer's one", ts)
		}
		if fi, err := os.Stat(filepath.Join(dir, ts[0])); err != nil || fi.Size() == 0 {
			t.Errorf("the temporary file is empty (%v): the writer was killed before writing, the test proves nothing", err)
		}
		os.Remove(filepath.Join(dir, ts[0]))
	}
}

// TestCreateCommit streams into a File and commits it; Abort after Commit
// changes nothing, and the final name appears only at Commit.
func TestCreateCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "service.log")
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	io.WriteString(f, "line 1\n")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("final name exists before Commit (err %v)", err)
	}
	io.WriteString(f, "line 2\n")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort()
	if got, err := os.ReadFile(path); err != nil || string(got) != "line 1\nline 2\n" {
		t.Errorf("content %q (err %v)", got, err)
	}
	if ts := temps(t, dir); len(ts) > 0 {
		t.Errorf("temporary files left: %v", ts)
	}
}

// TestReaderNeverSeesPart rewrites a file while reading it: every read
// is one whole version.
func TestReaderNeverSeesPart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	versions := [][]byte{bytes.Repeat([]byte("a"), 200<<10), bytes.Repeat([]byte("b"), 300<<10)}
	if err := WriteFile(path, versions[0], 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		for i := range 50 {
			if err := WriteFile(path, versions[i%2], 0o644); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for reads := 0; ; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, versions[0]) && !bytes.Equal(got, versions[1]) {
			t.Fatalf("read %d bytes that are neither version", len(got))
		}
	}
}
