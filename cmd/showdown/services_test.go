package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// svcTestState is a state whose output is captured and whose environment
// holds only env.
func svcTestState(ctx context.Context, env map[string]string) (*state, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &state{
		ctx:    ctx,
		stdin:  strings.NewReader(""),
		stdout: &out,
		stderr: &errb,
		getenv: func(k string) string { return env[k] },
	}, &out, &errb
}

// svcTree writes a showdown tree under a temporary folder: go.mod and one
// services/<name>/showdown.yaml per entry of manifests.
func svcTree(t *testing.T, manifests map[string]string) string {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644)
	for name, text := range manifests {
		dir := filepath.Join(root, "services", name)
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "showdown.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestServices(t *testing.T) {
	good := "name: go-a\nlanguage: go\nworkloads: [string, bank]\nbuild: [[go, build, -o, bin/s, .]]\nsources: [\"*.go\"]\nrun: [bin/s]\nknobs:\n  GOGC: {default: \"100\", help: GC target}\n"
	bad := "name: node-b\nlanguage: javascript\nworkloads: [string]\nrun: [node, server.js]\nbuidl: [[npm, ci]]\n"
	tests := []struct {
		name      string
		manifests map[string]string
		args      []string
		code      int
		stdout    []string // substrings of stdout
		stderr    []string // substrings of stderr
	}{
		// One valid service: listed with its workloads, build state and knobs.
		{"valid", map[string]string{"go-a": good}, nil, exitOK,
			[]string{"NAME", "go-a", "go", "string,bank", "not built", "GOGC"}, nil},
		// -knobs adds defaults and help.
		{"knobs", map[string]string{"go-a": good}, []string{"-knobs"}, exitOK,
			[]string{"go-a knobs:", "GOGC=100", "GC target"}, nil},
		// A broken manifest: the valid ones are still listed, the problem is
		// shown with file:line and field, and the exit code says failure.
		{"broken", map[string]string{"go-a": good, "node-b": bad}, nil, exitFailure,
			[]string{"go-a"}, []string{"node-b/showdown.yaml:5: buidl: unknown field (did you mean \"build\"?)", "hint: the manifest format"}},
		// An empty tree is a failure, not an empty table.
		{"none", map[string]string{}, nil, exitFailure, nil, []string{"no manifest"}},
		// Arguments are a usage error.
		{"argument", map[string]string{"go-a": good}, []string{"go-a"}, exitUsage, nil, []string{"unexpected argument"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := svcTree(t, tt.manifests)
			os.MkdirAll(filepath.Join(root, "services"), 0o755)
			t.Setenv("SHOWDOWN_ROOT", "")
			t.Setenv("SHOWDOWN_CACHE", t.TempDir())
			st, out, errb := svcTestState(context.Background(), map[string]string{"SHOWDOWN_ROOT": root})
			code := run(st, append([]string{"services"}, tt.args...))
			if code != tt.code {
				t.Errorf("exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errb)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errb.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, errb)
				}
			}
		})
	}
}
