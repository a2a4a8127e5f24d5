package db

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/showdownlab/showdown/workloads"
)

// TestWrittenNames: every workload's written.sql names its queries as
// METHOD /path STATUS, and the workloads that write have one.
func TestWrittenNames(t *testing.T) {
	for _, w := range workloads.Names {
		qs, err := workloads.Queries(w, WrittenFile)
		if errors.Is(err, fs.ErrNotExist) {
			if _, reset := workloads.FS.ReadFile(w + "/reset.sql"); reset == nil {
				t.Errorf("%s writes rows (it has reset.sql) but has no %s", w, WrittenFile)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for name := range qs {
			if _, _, _, err := ParseWrittenName(name); err != nil {
				t.Errorf("%s/%s: %v", w, WrittenFile, err)
			}
		}
	}
	for _, bad := range []string{"POST /user", "POST user 201", "POST /user ok", "POST /user 42"} {
		if _, _, _, err := ParseWrittenName(bad); err == nil {
			t.Errorf("ParseWrittenName(%q) accepted it", bad)
		}
	}
}

// TestWrittenCounts counts the bank's rows after the test seed: three
// clients, three transfers (the deposits are not transfers).
func TestWrittenCounts(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	if _, err := Prepare(ctx, "bank", s, PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	seedBank(contract(t, s, "bank"))
	got, err := Written(ctx, "bank", s)
	if err != nil {
		t.Fatal(err)
	}
	if got["POST /client/new/{balance} 200"] != 3 || got["POST /transaction 200"] != 3 || len(got) != 2 {
		t.Errorf("counts %v, want 3 clients and 3 transfers", got)
	}
	if got, err := Written(ctx, "string", s); got != nil || err != nil {
		t.Errorf("string: %v, %v; want nothing counted", got, err)
	}
}
