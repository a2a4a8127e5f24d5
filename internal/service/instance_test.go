package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const tinyManifest = `name: tiny
language: go
description: the test service of package service
workloads: [string]
build:
  - [go, build, -o, bin/server, .]
run: [bin/server]
artifact: bin/server
sources: [go.mod, "*.go"]
knobs:
  MODE: {default: "", help: "exit, ignore-term, spawn or unhealthy: how to misbehave"}
  TINY_KNOB: {default: "on", help: "a knob with a default"}
`

var (
	tinyOnce sync.Once
	tinyM    *Manifest
	tinyErr  error
)

// tiny returns the manifest of testdata/tiny copied into a temporary
// services tree and built once for the whole test binary.
func tiny(t *testing.T) *Manifest {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH")
	}
	tinyOnce.Do(func() {
		tinyM, tinyErr = copyTiny(tempRoot)
		if tinyErr == nil {
			_, tinyErr = tinyM.Build(context.Background(), nil)
		}
	})
	if tinyErr != nil {
		t.Fatal(tinyErr)
	}
	return tinyM
}

// copyTiny copies testdata/tiny under root/services/tiny with its manifest.
func copyTiny(root string) (*Manifest, error) {
	dir := filepath.Join(root, "services", "tiny")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{"go.mod", "main.go"} {
		data, err := os.ReadFile(filepath.Join("testdata", "tiny", f))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(tinyManifest), 0o644); err != nil {
		return nil, err
	}
	m, ps := Load(filepath.Join(dir, ManifestFile))
	if len(ps) > 0 {
		return nil, ps
	}
	return m, nil
}

var tempRoot string

func TestMain(m *testing.M) {
	if f := os.Getenv("SERVICE_TEST_PARENT"); f != "" {
		parentOfTiny(f)
		return
	}
	dir, err := os.MkdirTemp("", "service-test-")
	if err != nil {
		panic(err)
	}
	tempRoot = dir
	// Keep build stamps out of the user's cache.
	os.Setenv("SHOWDOWN_CACHE", filepath.Join(dir, "cache"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestBuildCached(t *testing.T) {
	root := t.TempDir()
	m, err := copyTiny(root)
	if err != nil {
		t.Fatal(err)
	}
	if m.Cached() {
		t.Fatal("Cached before the first build")
	}
	ctx := context.Background()
	first, err := m.Build(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached || first.ArtifactBytes == 0 {
		t.Errorf("first build: got %+v, want not cached with an artifact", first)
	}
	second, err := m.Build(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Cached || second.ArtifactBytes != first.ArtifactBytes {
		t.Errorf("second build: got %+v, want cached with %d artifact bytes", second, first.ArtifactBytes)
	}
	// A source change invalidates the cache.
	f := filepath.Join(m.Dir, "main.go")
	data, _ := os.ReadFile(f)
	os.WriteFile(f, append(data, "\n// changed\n"...), 0o644)
	if m.Cached() {
		t.Error("Cached after a source change")
	}
	// A missing artifact too, even with the sources as built.
	os.WriteFile(f, data, 0o644)
	if !m.Cached() {
		t.Error("not Cached after restoring the sources")
	}
	os.Remove(filepath.Join(m.Dir, "bin", "server"))
	if m.Cached() {
		t.Error("Cached with the artifact gone")
	}
}

func TestBuildsTakeTurns(t *testing.T) {
	m, err := copyTiny(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Two builds of one folder at once: the second waits for the first,
	// then finds its stamp, so exactly one of them runs the build.
	var wg sync.WaitGroup
	res := make([]BuildResult, 2)
	errs := make([]error, 2)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = m.Build(context.Background(), nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
	}
	if res[0].Cached == res[1].Cached {
		t.Errorf("concurrent builds: Cached = %v and %v, want exactly one build", res[0].Cached, res[1].Cached)
	}
}

func TestBuildFailure(t *testing.T) {
	root := t.TempDir()
	m, err := copyTiny(root)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(m.Dir, "broken.go"), []byte("package main\n\nfunc broken() { undefinedThing() }\n"), 0o644)
	_, err = m.Build(context.Background(), nil)
	var be *BuildError
	if !errors.As(err, &be) {
		t.Fatalf("Build: got %v, want a BuildError", err)
	}
	if !strings.Contains(err.Error(), "undefinedThing") || !strings.Contains(be.Hint(), "go build") {
		t.Errorf("Build error lacks the compiler's message or a hint:\n%v\nhint: %s", err, be.Hint())
	}
	// It names the step in the manifest, and the hint the folder it ran in.
	if at := m.File + ":" + strconv.Itoa(m.lines["build[0]"]) + ": build[0]: build of tiny failed"; m.lines["build[0]"] == 0 || !strings.HasPrefix(err.Error(), at) {
		t.Errorf("Build error does not start with %q:\n%v", at, err)
	}
	if !strings.Contains(be.Hint(), "cd "+m.Dir+" && ") && !strings.Contains(be.Hint(), "cd services/tiny && ") {
		t.Errorf("Build hint %q does not name the folder %s", be.Hint(), m.Dir)
	}
	if m.Cached() {
		t.Error("a failed build is Cached")
	}
	// A build tool that is not installed is named in the hint.
	m.BuildSteps = [][]string{{"no-such-build-tool-xyz"}}
	_, err = m.Build(context.Background(), nil)
	if !errors.As(err, &be) || !strings.Contains(be.Hint(), "no-such-build-tool-xyz is not installed") {
		t.Errorf("Build with a missing tool: got %v", err)
	}
}

func TestStartHealthStop(t *testing.T) {
	m := tiny(t)
	t.Setenv("SECRET_OF_THE_CALLER", "leaked")
	ctx := context.Background()
	var log strings.Builder
	inst, err := Start(ctx, m, StartOptions{Env: map[string]string{"DATABASE_URL": "postgres://x", "DB_POOL_SIZE": "7"}, Log: &syncWriter{w: &log}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(time.Second)
	startup, err := inst.WaitHealthy(ctx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if startup <= 0 {
		t.Errorf("startup = %v, want > 0", startup)
	}

	// The environment is exactly the common variables, the pass-through
	// ones and the knobs with defaults.
	resp, err := http.Get(inst.URL() + "/env")
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	json.NewDecoder(resp.Body).Decode(&env)
	resp.Body.Close()
	var keys []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"DATABASE_URL", "DB_POOL_SIZE", "HOST", "PORT", "TINY_KNOB", "TMPDIR"}
	for _, k := range passEnv {
		if _, ok := os.LookupEnv(k); ok {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("service environment keys:\ngot  %v\nwant %v", keys, want)
	}
	if !slices.Contains(env, "DB_POOL_SIZE=7") || !slices.Contains(env, "TINY_KNOB=on") || !slices.Contains(env, "HOST=127.0.0.1") {
		t.Errorf("service environment %v lacks the values set", env)
	}
	// Its TMPDIR is its own, and goes with it.
	var tmp string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			tmp = v
		}
	}
	if prefix := fmt.Sprintf("showdown-%d-tiny-", os.Getpid()); filepath.Dir(tmp) != filepath.Clean(os.TempDir()) || !strings.HasPrefix(filepath.Base(tmp), prefix) {
		t.Errorf("TMPDIR = %q, want a %s* folder in %s", tmp, prefix, os.TempDir())
	}
	if err := os.WriteFile(filepath.Join(tmp, "left-behind"), []byte("x"), 0o600); err != nil {
		t.Fatalf("the service's TMPDIR: %v", err)
	}

	pid := inst.PID()
	if err := inst.Stop(5 * time.Second); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if code, err := inst.Wait(ctx); code != 0 || err != nil {
		t.Errorf("Wait after Stop = %d, %v; want 0, nil", code, err)
	}
	if err := inst.Stop(time.Second); err != nil {
		t.Errorf("second Stop: %v, want nil (idempotent)", err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the service's TMPDIR %s after Stop: %v, want it removed", tmp, err)
	}
	if !strings.Contains(inst.LogTail(5), "bye") {
		t.Errorf("log tail %q lacks the service's goodbye", inst.LogTail(5))
	}
	if !strings.Contains(log.String(), "listening on") {
		t.Errorf("StartOptions.Log got %q, want the service's output", log.String())
	}
	assertGroupGone(t, pid)
}

func TestStartExitsAtOnce(t *testing.T) {
	m := tiny(t)
	ctx := context.Background()
	inst, err := Start(ctx, m, StartOptions{Env: map[string]string{"MODE": "exit"}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(time.Second)
	_, err = inst.WaitHealthy(ctx, 30*time.Second)
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("WaitHealthy: got %v, want a StartError", err)
	}
	for _, want := range []string{"exited with code 3", "boom: cannot start, missing widget"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("WaitHealthy error lacks %q:\n%v", want, err)
		}
	}
	if se.Hint() == "" {
		t.Error("StartError has no hint")
	}
}

func TestWaitHealthyTimeout(t *testing.T) {
	m := tiny(t)
	ctx := context.Background()
	inst, err := Start(ctx, m, StartOptions{Env: map[string]string{"MODE": "unhealthy"}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(time.Second)
	_, err = inst.WaitHealthy(ctx, 500*time.Millisecond)
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("WaitHealthy: got %v, want a StartError", err)
	}
	// The last answer is in the error, body included, with the log tail.
	for _, want := range []string{"did not answer 200 within 500ms", "503 Service Unavailable", "database unreachable", "listening on"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("WaitHealthy error lacks %q:\n%v", want, err)
		}
	}
}

func TestStartMissingBinary(t *testing.T) {
	m := *tiny(t)
	m.Run = []string{"bin/not-built"}
	_, err := Start(context.Background(), &m, StartOptions{})
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(se.Hint(), "was the service built") {
		t.Errorf("Start of a missing binary: got %v, want a StartError hinting at the build", err)
	}
}

func TestStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	m := tiny(t)
	ctx := context.Background()
	inst, err := Start(ctx, m, StartOptions{Env: map[string]string{"MODE": "ignore-term"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inst.WaitHealthy(ctx, 30*time.Second); err != nil {
		inst.Stop(time.Second)
		t.Fatal(err)
	}
	if n := len(inst.Processes()); n != 2 {
		t.Errorf("Processes: got %d, want 2 (the service and its child)", n)
	}
	pid := inst.PID()
	err = inst.Stop(300 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Stop: got %v, want an error saying it was killed", err)
	}
	if code, _ := inst.Wait(ctx); code != -1 {
		t.Errorf("exit code after SIGKILL = %d, want -1", code)
	}
	assertGroupGone(t, pid)
}

func TestTerminateAndWait(t *testing.T) {
	m := tiny(t)
	ctx := context.Background()
	inst, err := Start(ctx, m, StartOptions{Env: map[string]string{"MODE": "spawn"}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(time.Second)
	if _, err := inst.WaitHealthy(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := inst.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// SIGINT is not handled by tiny: it dies of it.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if code, err := inst.Wait(wctx); err != nil || code != -1 {
		t.Errorf("Wait = %d, %v; want -1 (killed by a signal)", code, err)
	}
	// Its child outlives it until Stop kills the group.
	pid := inst.PID()
	if len(GroupProcesses(pid)) == 0 {
		t.Error("the child died with its parent; the test cannot see Stop kill it")
	}
	inst.Stop(time.Second)
	assertGroupGone(t, pid)
}

// parentOfTiny is the test binary re-run as a stand-in for showdown: it
// starts the service of manifest file, prints its pid and waits to be killed.
func parentOfTiny(file string) {
	m, ps := Load(file)
	if len(ps) > 0 {
		fmt.Println("error:", ps)
		os.Exit(1)
	}
	inst, err := Start(context.Background(), m, StartOptions{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(inst.PID())
	time.Sleep(time.Minute) // killed long before
	inst.Stop(time.Second)
}

func TestServiceDiesWithShowdown(t *testing.T) {
	m := tiny(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe)
	parent.Env = append(os.Environ(), "SERVICE_TEST_PARENT="+m.File)
	stdout, _ := parent.StdoutPipe()
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	var pid int
	if _, err := fmt.Fscan(stdout, &pid); err != nil || pid <= 0 {
		t.Fatalf("reading the service's pid from the parent: %v", err)
	}
	if len(GroupProcesses(pid)) == 0 {
		t.Fatalf("service %d not running", pid)
	}
	// SIGKILL leaves the parent no chance to clean up: Pdeathsig must.
	parent.Process.Kill()
	parent.Wait()
	assertGroupGone(t, pid)
	// Nor to remove the service's TMPDIR: the next showdown does.
	left := filepath.Join(os.TempDir(), fmt.Sprintf("showdown-%d-tiny-*", parent.Process.Pid))
	if dirs, _ := filepath.Glob(left); len(dirs) != 1 {
		t.Fatalf("%d folders %s after the parent was killed, want its service's one", len(dirs), left)
	}
	removeStaleTmp()
	if dirs, _ := filepath.Glob(left); len(dirs) != 0 {
		t.Errorf("%v still there after removeStaleTmp", dirs)
	}
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// assertGroupGone fails unless no live process is left in group pgid.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	var left []int
	for range 50 {
		if left = GroupProcesses(pgid); len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("processes left in group %d: %v", pgid, left)
}

// TestBuildPrebuilt: with SHOWDOWN_PREBUILT=1 an artifact carried from
// elsewhere runs unbuilt (no toolchain is called), and a missing one is
// an error that says what to carry.
func TestBuildPrebuilt(t *testing.T) {
	root := t.TempDir()
	m, err := copyTiny(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(PrebuiltEnv, "1")
	m.BuildSteps = [][]string{{"no-such-build-tool-xyz"}}
	if _, err := m.Build(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "no artifact") {
		t.Fatalf("no artifact: got %v, want an error naming it", err)
	}
	art := filepath.Join(m.Dir, m.Artifact)
	if err := os.MkdirAll(filepath.Dir(art), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(art, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := m.Build(context.Background(), nil)
	if err != nil || !res.Cached || res.ArtifactBytes == 0 {
		t.Errorf("prebuilt: %+v, %v; want the carried artifact, unbuilt", res, err)
	}
}
