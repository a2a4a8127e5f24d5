package db

import (
	"os"
	"reflect"
	"syscall"
	"testing"

	"github.com/showdownlab/showdown/workloads"
)

func TestSplitSQL(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		// One statement, no semicolon.
		{"SELECT 1", []string{"SELECT 1"}},
		// Comments go, statements split.
		{"-- hi; there\nCREATE TABLE a (x int); -- trailing\nCREATE TABLE b (y int);\n", []string{"CREATE TABLE a (x int)", "CREATE TABLE b (y int)"}},
		// A semicolon or dashes inside quotes stay.
		{"SELECT 'a;--b'; SELECT 2", []string{"SELECT 'a;--b'", "SELECT 2"}},
		// Only comments: nothing to run.
		{"-- nothing\n\n", nil},
	}
	for _, tt := range tests {
		if got := splitSQL(tt.src); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitSQL(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestTablesOf(t *testing.T) {
	for _, w := range []struct {
		name string
		want []string
	}{{"bank", []string{"client", "transaction"}}, {"users", []string{"users"}}, {"sku", []string{"purch_sku_master"}}} {
		stmts, err := readSQL(w.name, "schema.sql")
		if err != nil {
			t.Fatal(err)
		}
		if got := tablesOf(stmts); !reflect.DeepEqual(got, w.want) {
			t.Errorf("%s: tables %v, want %v", w.name, got, w.want)
		}
	}
}

func TestParseQueries(t *testing.T) {
	tests := []struct {
		src     string
		want    map[string]string
		wantErr bool
	}{
		// Two blocks with comments and a trailing semicolon.
		{"-- header\n\n-- name: a\n-- what a does\nSELECT 1;\n\n-- name: b\nSELECT\n  2\n", map[string]string{"a": "SELECT 1", "b": "SELECT\n  2"}, false},
		// A block without SQL.
		{"-- name: a\n-- name: b\nSELECT 1", nil, true},
		// The same name twice.
		{"-- name: a\nSELECT 1\n-- name: a\nSELECT 2", nil, true},
		// No blocks at all.
		{"SELECT 1", nil, true},
	}
	for _, tt := range tests {
		got, err := workloads.ParseQueries("x.sql", tt.src)
		if (err != nil) != tt.wantErr || !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseQueries(%q) = %q, %v; want %q, error %v", tt.src, got, err, tt.want, tt.wantErr)
		}
	}
	// Every workload's audit and queries files parse.
	for _, f := range []string{"bank/audit.sql", "users/audit.sql", "bank/queries.sql", "users/queries.sql", "sku/queries.sql"} {
		w, file, _ := cut(f)
		if _, err := workloads.Queries(w, file); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func cut(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func TestTraversable(t *testing.T) {
	cred := &syscall.Credential{Uid: 4242, Gid: 4343}
	tests := []struct {
		mode     os.FileMode
		uid, gid uint32
		want     bool
	}{
		{0o755, 0, 0, true},     // anyone may pass
		{0o700, 0, 0, false},    // root's private directory, like t.TempDir()
		{0o700, 4242, 0, true},  // the user's own
		{0o750, 0, 4343, true},  // through the user's group
		{0o075, 4242, 0, false}, // the owner bits rule for the owner
	}
	for _, tt := range tests {
		d := t.TempDir()
		if err := os.Chmod(d, tt.mode); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		sys.Uid, sys.Gid = tt.uid, tt.gid
		if got := traversable(st, cred); got != tt.want {
			t.Errorf("traversable(mode %v, uid %d, gid %d) = %v, want %v", tt.mode, tt.uid, tt.gid, got, tt.want)
		}
	}
}
