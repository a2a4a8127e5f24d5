package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/k8s"
	"github.com/showdownlab/showdown/load"
)

func TestK8sRender(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // a substring of stdout
		stderr string // a substring of stderr
	}{
		// A ready plan renders, with one generator Job per level.
		{"ready plan", []string{"render", "../../plans/api-showdown.yaml", "--start", "2026-11-23T08:00:00Z"}, exitOK, "kind: Job", ""},
		// No plan: a usage error with a hint.
		{"no plan", []string{"render"}, exitUsage, "", "one plan expected"},
		// A bad start instant is a usage error.
		{"bad start", []string{"render", "../../plans/smoke.yaml", "--start", "8am"}, exitUsage, "", "--start"},
		// No subcommand: the list of them, and a usage error.
		{"none", nil, exitUsage, "", "render"},
		// An unknown subcommand is a usage error.
		{"unknown", []string{"deploy"}, exitUsage, "", "unknown k8s command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, out, errb := svcTestState(context.Background(), nil)
			got := run(st, append([]string{"k8s"}, tc.args...))
			if got != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", got, tc.code, errb)
			}
			if !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stdout %.300q, stderr %q: want %q and %q in them", out, errb, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestK8sShards runs the generator pods' entrypoint in-process: three
// shards of one open-model attack with one start instant, collected with
// pack as the controller does, merged: the totals are the whole rate.
func TestK8sShards(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	const n = 3
	startAt := time.Now().Add(500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	codes := make([]int, n)
	logs := make([]*bytes.Buffer, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			st, _, errb := svcTestState(context.Background(), map[string]string{"JOB_COMPLETION_INDEX": string(rune('0' + i))})
			logs[i] = errb
			codes[i] = run(st, []string{"k8s", "shard", "--count", "3", "--start-at", startAt, "--out", dir, "--hold", "0s",
				"--", "--rate", "300", "--duration", "2s", srv.URL})
		}(i)
	}
	wg.Wait()
	var results []*load.Result
	for i := 0; i < n; i++ {
		if codes[i] != exitOK {
			t.Fatalf("shard %d: exit %d\n%s", i+1, codes[i], logs[i])
		}
		shardDir := filepath.Join(dir, "shard-"+string(rune('1'+i)))
		if b, err := os.ReadFile(filepath.Join(shardDir, k8s.DoneFile)); err != nil || string(b) != "ok\n" {
			t.Fatalf("shard %d: done marker %q, %v", i+1, b, err)
		}
		st, out, errb := svcTestState(context.Background(), nil)
		if code := run(st, []string{"k8s", "pack", "--done", "--release", shardDir}); code != exitOK {
			t.Fatalf("pack shard %d: exit %d: %s", i+1, code, errb)
		}
		copyDir := filepath.Join(t.TempDir(), "copy")
		if err := k8s.Unpack(out, copyDir); err != nil {
			t.Fatal(err)
		}
		r, err := load.ReadDir(copyDir)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	m, err := load.Merge(results...)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Summary.Total.Samples; got != hits.Load() || got < 570 || got > 600 {
		t.Errorf("merged %d samples, server saw %d, want both about 600 (300/s for 2 s)", got, hits.Load())
	}
	if len(m.Summary.Shards) != n {
		t.Errorf("merged shards %v, want %d", m.Summary.Shards, n)
	}
}

// TestK8sWarmup runs the warm-up pod's entrypoint in-process against a
// local service: it drives the load, applies the lab's rule each second
// (package warmup's tests check when it stops), writes the record for the
// controller and marks it done. On a busy machine the latency may never
// settle, so the test accepts a warm-up that ran its whole --max.
func TestK8sWarmup(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	st, _, errb := svcTestState(context.Background(), nil)
	t0 := time.Now()
	if code := run(st, []string{"k8s", "warmup", "--max", "15s", "--auto", "--out", dir, "--hold", "0", "--", "--rate", "100", srv.URL}); code != exitOK {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	b, err := os.ReadFile(filepath.Join(dir, "warmup.json"))
	if err != nil {
		t.Fatal(err)
	}
	var wu struct {
		Auto, Steady bool
		Seconds      float64
		Requests     int64
		Metric       string
		Series       []float64
	}
	if err := json.Unmarshal(b, &wu); err != nil {
		t.Fatal(err)
	}
	if !wu.Auto || wu.Metric != "p50_ms" || wu.Requests == 0 || len(wu.Series) < 10 {
		t.Errorf("warm-up record %s, want an automatic warm-up's p50 curve", b)
	}
	if wu.Steady && (wu.Seconds >= 15 || len(wu.Series) < 10) || !wu.Steady && wu.Seconds < 14 {
		t.Errorf("warm-up record %s after %s: steady %v but %.1f s", b, time.Since(t0).Round(time.Second), wu.Steady, wu.Seconds)
	}
	if _, err := os.Stat(filepath.Join(dir, k8s.DoneFile)); err != nil {
		t.Errorf("no %s: %v", k8s.DoneFile, err)
	}
}

// TestK8sPackNotFinished: a shard still running answers with its own exit
// code, which the controller takes for "ask again", not for a failed check.
func TestK8sPackNotFinished(t *testing.T) {
	st, _, errb := svcTestState(context.Background(), nil)
	if code := run(st, []string{"k8s", "pack", "--done", t.TempDir()}); code != exitNotFinished || code == exitCheckFailed {
		t.Errorf("exit %d, want %d (not finished)\n%s", code, exitNotFinished, errb)
	}
}
