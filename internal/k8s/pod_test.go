package k8s

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteInitDB(t *testing.T) {
	dir := t.TempDir()
	if err := WriteInitDB(dir, "mysql", []string{"sku"}, 1, 2500, true); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	// The image runs them in name order: db.PrepareSteps' order.
	want := "10-sku-0-drop.sql 10-sku-1-schema.sql 10-sku-2-rows.sql 10-sku-3-index.sql 10-sku-4-analyze.sql"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("files %s, want %s", got, want)
	}
	rows, _ := os.ReadFile(filepath.Join(dir, "10-sku-2-rows.sql"))
	if got := strings.Count(string(rows), "INSERT INTO"); got != 3 {
		t.Errorf("%d INSERTs for 2,500 rows, want 3 of at most 1,000", got)
	}
	if got := strings.Count(string(rows), "\n("); got != 2500 {
		t.Errorf("%d rows, want 2500", got)
	}
	// PostgreSQL's tables go to the services' role, as db.Prepare does.
	pg := t.TempDir()
	if err := WriteInitDB(pg, "postgres", []string{"bank"}, 1, 0, true); err != nil {
		t.Fatal(err)
	}
	drop, _ := os.ReadFile(filepath.Join(pg, "10-bank-0-drop.sql"))
	owner, _ := os.ReadFile(filepath.Join(pg, "10-bank-2-owner.sql"))
	if !strings.Contains(string(drop), "DROP TABLE IF EXISTS client CASCADE;") || !strings.Contains(string(owner), "ALTER TABLE client OWNER TO showdown;") {
		t.Errorf("bank's drop and owner steps:\n%s\n%s", drop, owner)
	}
	// A workload on the wrong engine is refused.
	if err := WriteInitDB(t.TempDir(), "postgres", []string{"sku"}, 1, 10, true); err == nil {
		t.Error("sku on postgres accepted")
	}
}

func TestPackUnpack(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "summary.json"), []byte(`{"v":1}`), 0o644)
	os.WriteFile(filepath.Join(src, DoneFile), []byte("ok\n"), 0o644)
	var buf bytes.Buffer
	if err := Pack(&buf, src); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := Unpack(&buf, dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "summary.json")); string(b) != `{"v":1}` {
		t.Errorf("copied summary.json = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dst, DoneFile)); err == nil {
		t.Error("the marker was copied")
	}
	// An entry leaving the folder is refused.
	var evil bytes.Buffer
	tw := tar.NewWriter(&evil)
	tw.WriteHeader(&tar.Header{Name: "../escape", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	tw.Write([]byte("x"))
	tw.Close()
	if err := Unpack(&evil, t.TempDir()); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("got %v, want a refusal", err)
	}
}

func TestServicePID(t *testing.T) {
	proc := t.TempDir()
	for pid, stat := range map[string]string{
		"1":  "1 (pause) S 0 1 1",       // the pod's pause process
		"7":  "7 (server) S 0 7 7",      // the service: ppid 0
		"9":  "9 (worker (x)) S 7 7 7",  // its child
		"12": "12 (showdown) S 0 12 12", // the sampler itself
		"x":  "not a pid",
	} {
		os.MkdirAll(filepath.Join(proc, pid), 0o755)
		os.WriteFile(filepath.Join(proc, pid, "stat"), []byte(stat), 0o644)
	}
	if got, err := ServicePID(proc, 12); err != nil || got != 7 {
		t.Errorf("ServicePID = %d, %v; want 7", got, err)
	}
	if _, err := ServicePID(t.TempDir(), 12); err == nil {
		t.Error("an empty namespace gave a pid")
	}
}

// TestMarkDone: a run's folder gets its DoneFile, "ok" or the run's
// error, made if it is not there; the verdict is returned.
func TestMarkDone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shard-1")
	for _, tc := range []struct {
		err  error
		want string
	}{{nil, "ok"}, {errors.New("attack: 3 errors"), "attack: 3 errors"}} {
		verdict, err := MarkDone(dir, tc.err)
		if err != nil || verdict != tc.want {
			t.Fatalf("MarkDone(%v) = %q, %v; want %q", tc.err, verdict, err, tc.want)
		}
		b, err := os.ReadFile(filepath.Join(dir, DoneFile))
		if err != nil || string(b) != tc.want+"\n" {
			t.Errorf("DoneFile %q, %v; want %q", b, err, tc.want+"\n")
		}
	}
}

// TestWaitForStart: no instant starts at once, an instant passed starts
// at once, and an interrupt ends the wait for one to come.
func TestWaitForStart(t *testing.T) {
	if err := WaitForStart(context.Background(), time.Time{}); err != nil {
		t.Errorf("no instant: %v", err)
	}
	if err := WaitForStart(context.Background(), time.Now().Add(-time.Second)); err != nil {
		t.Errorf("an instant passed: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitForStart(ctx, time.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted: %v, want context.Canceled", err)
	}
}
