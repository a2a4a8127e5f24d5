package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/showdownlab/showdown/load"
)

func testState(ctx context.Context) (*state, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &state{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(string) string { return "" }}, &out, &errb
}

func hello(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(500)
		}
		io.WriteString(w, "hello")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAttackUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"http://x/"}, "choose a model"},                                                           // no model
		{[]string{"--rate", "10", "--users", "2", "--duration", "1s", "http://x/"}, "exclude"},              // both models
		{[]string{"--rate", "10", "http://x/"}, "needs one"},                                                // open model without duration
		{[]string{"--rate", "ten", "--duration", "1s", "http://x/"}, "want a positive number"},              // bad rate
		{[]string{"--rate", "0", "--duration", "1s", "http://x/"}, "want a positive number"},                // rate 0 without stages
		{[]string{"--rate", "0", "--stages", "1s:0", "http://x/"}, "every rate is 0"},                       // stages may start at 0, not stay there
		{[]string{"--users", "2", "--duration", "1s", "--fail-if", "p99~1s", "http://x/"}, "OP: < <= > >="}, // bad threshold lists the syntax
		{[]string{"--users", "2", "--duration", "1s", "https://x/"}, "https is not supported"},              // no TLS
		{[]string{"--users", "2", "--duration", "1s"}, "nothing to attack"},                                 // no URL
		{[]string{"--users", "2", "--duration", "1s", "--shard", "3/2", "http://x/"}, "shard"},              // bad shard
	}
	for _, tt := range tests {
		st, _, errb := testState(context.Background())
		if got := run(st, append([]string{"attack"}, tt.args...)); got != exitUsage {
			t.Errorf("attack %v: exit %d, want %d (stderr %s)", tt.args, got, exitUsage, errb)
		}
		if !strings.Contains(errb.String(), tt.want) {
			t.Errorf("attack %v: stderr %q does not mention %q", tt.args, errb, tt.want)
		}
	}
}

func TestAttackEndToEnd(t *testing.T) {
	srv := hello(t)
	dir := t.TempDir()
	st, out, errb := testState(context.Background())
	code := run(st, []string{"attack", srv.URL + "/", "--rate", "100/s", "--duration", "1s", "--out", dir,
		"--latency", "--fail-if", "errors>0", "--fail-if", "GET /:p99>1m"})
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errb)
	}
	for _, want := range []string{"Label", "Samples", "Throughput/s", "GET /", "Detailed percentile spectrum", "threshold errors>0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{load.SummaryFile, load.TimeseriesFile, load.LatencyLogFile, load.ServiceLogFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	s, err := load.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Options["rate"] != "100/s" || s.Total.Samples+s.Dropped != 100 {
		t.Errorf("summary options %v, samples %d + dropped %d", s.Options, s.Total.Samples, s.Dropped)
	}
}

func TestAttackThresholdCrossed(t *testing.T) {
	srv := hello(t)
	st, out, errb := testState(context.Background())
	code := run(st, []string{"attack", "--users", "2", "--iterations", "5", "--fail-if", "errors>10%", srv.URL + "/fail"})
	if code != exitThresholds {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitThresholds, errb)
	}
	if !strings.Contains(out.String(), "status 500") || !strings.Contains(errb.String(), "threshold crossed: errors>10%") {
		t.Errorf("stdout %s\nstderr %s", out, errb)
	}
}

func TestAttackRefused(t *testing.T) {
	srv := hello(t)
	url := srv.URL
	srv.Close()
	st, out, errb := testState(context.Background())
	code := run(st, []string{"attack", "--users", "3", "--duration", "300ms", url})
	if code != exitFailure || strings.Count(errb.String(), "refused") != 1 {
		t.Errorf("exit %d, stderr %q; want exit %d and one line about refused connections", code, errb, exitFailure)
	}
	if strings.Count(out.String(), "refused") != 1 {
		t.Errorf("stdout should count refusals on one line:\n%s", out)
	}
}

// TestAttackScenarioRefused: a scenario whose target refuses every
// connection is named by its file and its base URL, not as if the file
// were the address.
func TestAttackScenarioRefused(t *testing.T) {
	srv := hello(t)
	url := srv.URL
	srv.Close()
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte("steps:\n  - name: hello\n    url: /hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _, errb := testState(context.Background())
	code := run(st, []string{"attack", "--users", "2", "--duration", "300ms", "--scenario", file, "--base-url", url})
	want := "every connection to the steps of " + file + " (base URL " + url + ") was refused"
	if code != exitFailure || !strings.Contains(errb.String(), want) {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errb, exitFailure, want)
	}
}

func TestAttackInterrupted(t *testing.T) {
	srv := hello(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	st, _, errb := testState(ctx)
	code := run(st, []string{"attack", "--users", "2", "--duration", "1m", "--out", dir, srv.URL})
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitInterrupted, errb)
	}
	s, err := load.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted || s.Total.Samples == 0 {
		t.Errorf("summary interrupted=%v samples=%d", s.Interrupted, s.Total.Samples)
	}
}

// TestMergeShards runs three shards as separate attacks and merges them.
func TestMergeShards(t *testing.T) {
	srv := hello(t)
	base := t.TempDir()
	var dirs []string
	for _, sh := range []string{"1/3", "2/3", "3/3"} {
		dir := filepath.Join(base, strings.ReplaceAll(sh, "/", "of"))
		dirs = append(dirs, dir)
		st, _, errb := testState(context.Background())
		if code := run(st, []string{"attack", "--users", "7", "--iterations", "3", "--shard", sh, "--out", dir, srv.URL}); code != exitOK {
			t.Fatalf("shard %s: exit %d: %s", sh, code, errb)
		}
	}
	st, out, errb := testState(context.Background())
	merged := filepath.Join(base, "merged")
	if code := run(st, append(dirs, "--out", merged, "--fail-if", "errors>0")); code != exitUsage {
		t.Errorf("merge without the command name should be unknown: %d", code)
	}
	if code := run(st, append(append([]string{"merge"}, dirs...), "--out", merged)); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, errb)
	}
	s, err := load.ReadSummary(merged)
	if err != nil {
		t.Fatal(err)
	}
	if s.Total.Samples != 21 || s.Users != 7 || len(s.Shards) != 3 {
		t.Errorf("merged samples %d users %d shards %v; want 21, 7, 3 shards\n%s", s.Total.Samples, s.Users, s.Shards, out)
	}
}

func TestAttackScenario(t *testing.T) {
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /thing", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"id":"%d"}`, n.Add(1))
	})
	mux.HandleFunc("GET /thing/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"id":%q}`, r.PathValue("id"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	st, out, errb := testState(context.Background())
	code := run(st, []string{"attack", "--scenario", "testdata/attack-scenario.yaml", "--base-url", srv.URL,
		"--var", "size=3", "--users", "3", "--iterations", "4", "--out", dir, "--fail-if", "read:errors>0"})
	if code != exitOK {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errb)
	}
	s, err := load.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Labels) != 3 || s.Total.Samples != 36 || s.Total.Errors != 0 {
		t.Errorf("labels %d, samples %d, errors %d (%+v); want 3 labels, 36 samples, no errors", len(s.Labels), s.Total.Samples, s.Total.Errors, s.Total.Reasons)
	}
	// A broken scenario is a usage error naming the file.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("steps:\n  - name: x\n    methd: GET\n"), 0o644)
	st, _, errb = testState(context.Background())
	if code := run(st, []string{"attack", "--scenario", bad, "--users", "1", "--iterations", "1"}); code != exitUsage || !strings.Contains(errb.String(), "bad.yaml:") {
		t.Errorf("bad scenario: exit %d, stderr %s", code, errb)
	}
}

// hostileServer starts the load package's copy of the project's hostile
// HTTP server (load/testdata/hostile-server.py) in mode on a free port.
func hostileServer(t *testing.T, mode string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("python3", "../../load/testdata/hostile-server.py", fmt.Sprint(port), mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal("the hostile server needs python3: ", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.Contains(line, "hostile server on") {
		t.Fatalf("hostile server %s did not start: %q, %v", mode, line, err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/", port)
}

// TestAttackHostile runs showdown attack against every misbehaviour of the
// hostile server: each run ends normally, writes its results, and names
// the reason of its errors there.
func TestAttackHostile(t *testing.T) {
	tests := []struct {
		mode   string
		args   []string // model flags
		reason string   // of every sample, or "" for none
	}{
		{"chunk-overflow", []string{"--rate", "20", "--duration", "300ms"}, load.ReasonChunkTooLarge}, // chunk size 7fffffffffffffff
		{"huge-length", []string{"--users", "2", "--iterations", "2"}, load.ReasonTimeout},            // Content-Length 99999999999, 3 bytes sent
		{"header-flood", []string{"--rate", "20", "--duration", "300ms"}, load.ReasonTooManyHeaders},  // 200,000 header fields
		{"long-line", []string{"--users", "2", "--iterations", "2"}, load.ReasonLineTooLong},          // a 1 MiB line
		{"early-hints", []string{"--rate", "20", "--duration", "300ms"}, ""},                          // 103 then 200
		{"garbage", []string{"--users", "2", "--iterations", "2"}, load.ReasonStatusLine},             // not HTTP
		{"close-early", []string{"--rate", "20", "--duration", "300ms"}, load.ReasonClosed},           // no answer
		{"slow-body", []string{"--rate", "20", "--duration", "300ms"}, load.ReasonTimeout},            // a byte a second
		{"bad-chunk", []string{"--users", "2", "--iterations", "2"}, load.ReasonChunkSize},            // chunk size not hex
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			url := hostileServer(t, tt.mode)
			dir := t.TempDir()
			st, out, errb := testState(context.Background())
			// A short timeout only where it is the expected reason, so a
			// busy machine cannot turn a slow answer into a timeout.
			timeout := "5s"
			if tt.reason == load.ReasonTimeout {
				timeout = "400ms"
			}
			args := append([]string{"attack", "--timeout", timeout, "--out", dir, url}, tt.args...)
			if code := run(st, args); code != exitOK {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errb)
			}
			s, err := load.ReadSummary(dir)
			if err != nil {
				t.Fatal(err)
			}
			tot := s.Total
			switch {
			case tot.Samples == 0:
				t.Errorf("no samples")
			case tt.reason == "" && tot.Errors != 0:
				t.Errorf("errors %+v", tot.Reasons)
			case tt.reason != "" && (len(tot.Reasons) != 1 || tot.Reasons[0].Reason != tt.reason || tot.Errors != tot.Samples):
				t.Errorf("reasons %+v of %d samples, want all %q", tot.Reasons, tot.Samples, tt.reason)
			}
			if tt.reason != "" && !strings.Contains(out.String(), tt.reason) {
				t.Errorf("the printed summary does not name %q:\n%s", tt.reason, out)
			}
		})
	}
}

func TestAttackLimitFlags(t *testing.T) {
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 3<<10))
	}))
	defer big.Close()
	tests := []struct {
		flags  []string
		reason string // of every sample, or ""
	}{
		{nil, ""}, // 3 KiB is within the default
		{[]string{"--max-body", "2KiB"}, load.ReasonBodyTooLarge},         // refused, read and counted
		{[]string{"--max-headers", "1"}, load.ReasonTooManyHeaders},       // the server sends 3 fields
		{[]string{"--max-header-bytes", "64"}, load.ReasonHeaderTooLarge}, // and more than 64 bytes of them
	}
	for _, tt := range tests {
		st, out, errb := testState(context.Background())
		dir := t.TempDir()
		args := append([]string{"attack", "--users", "1", "--iterations", "3", "--out", dir, big.URL}, tt.flags...)
		if code := run(st, args); code != exitOK {
			t.Fatalf("%v: exit %d\nstdout %s\nstderr %s", tt.flags, code, out, errb)
		}
		s, err := load.ReadSummary(dir)
		if err != nil {
			t.Fatal(err)
		}
		if tot := s.Total; (tt.reason == "" && tot.Errors != 0) || (tt.reason != "" && (tot.Errors != 3 || tot.Reasons[0].Reason != tt.reason)) {
			t.Errorf("%v: %d errors %+v, want reason %q", tt.flags, tot.Errors, tot.Reasons, tt.reason)
		}
	}
	st, _, errb := testState(context.Background())
	if code := run(st, []string{"attack", "--users", "1", "--iterations", "1", "--max-body", "lots", big.URL}); code != exitUsage || !strings.Contains(errb.String(), "8MiB") {
		t.Errorf("--max-body lots: exit %d, stderr %s; want a usage error with an example", code, errb)
	}
}

// TestAttackOutNotEmpty: --out refuses a folder that holds anything,
// unless --force.
func TestAttackOutNotEmpty(t *testing.T) {
	srv := hello(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("x"), 0o644)
	st, _, errb := testState(context.Background())
	if code := run(st, []string{"attack", "--users", "1", "--iterations", "1", "--out", dir, srv.URL}); code != exitUsage || !strings.Contains(errb.String(), "--force") {
		t.Errorf("non-empty --out: exit %d, stderr %s; want a usage error naming --force", code, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, load.SummaryFile)); err == nil {
		t.Error("results were written into the non-empty folder")
	}
	st, _, errb = testState(context.Background())
	if code := run(st, []string{"attack", "--users", "1", "--iterations", "1", "--out", dir, "--force", srv.URL}); code != exitOK {
		t.Fatalf("--force: exit %d, stderr %s", code, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, load.SummaryFile)); err != nil {
		t.Errorf("--force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "precious.txt")); err != nil {
		t.Errorf("--force removed other files: %v", err)
	}
}
