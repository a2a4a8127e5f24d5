package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/load"
)

func TestDemo(t *testing.T) {
	dir := t.TempDir()
	st, out, errb := testState(context.Background())
	if code := run(st, []string{"demo", "--duration", "300ms", "--out", dir}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, sub := range []string{"open", "closed"} {
		s, err := load.ReadSummary(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		if s.Model != sub || s.Total.Samples == 0 || s.Total.Errors != 0 {
			t.Errorf("%s: model %q, %d samples, %d errors", sub, s.Model, s.Total.Samples, s.Total.Errors)
		}
	}
	if !strings.Contains(out.String(), "Open model") || !strings.Contains(out.String(), "Closed model") {
		t.Errorf("output:\n%s", out)
	}
}
