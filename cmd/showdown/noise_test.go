package main

import (
	"context"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/stats"
)

func TestNoise(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		code    int
		wantOut string
		wantErr string
	}{
		// Too short to give a spread.
		{[]string{"noise", "--seconds", "2"}, exitUsage, "", "want 3 to 3600"},
		// Not a CPU list.
		{[]string{"noise", "--cpus", "zero"}, exitUsage, "", `--cpus "zero"`},
		// A stray argument.
		{[]string{"noise", "60"}, exitUsage, "", `unexpected argument "60"`},
		// A real probe on CPU 0: one row, the rule's threshold and the host's floor.
		{[]string{"noise", "--seconds", "3", "--cpus", "0"}, exitOK, "| 0 | ", ""},
	} {
		st, out, errb := testState(context.Background())
		if got := run(st, tc.args); got != tc.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, got, tc.code, errb.String())
		}
		if !strings.Contains(out.String(), tc.wantOut) || !strings.Contains(errb.String(), tc.wantErr) {
			t.Errorf("%q: stdout %q, stderr %q; want %q and %q", tc.args, out.String(), errb.String(), tc.wantOut, tc.wantErr)
		}
		// The host's own p99 floor is named.
		if tc.code == exitOK && !strings.Contains(out.String(), "this host's own p99 floor: ") {
			t.Errorf("%q: stdout %q does not name this host's own p99 floor", tc.args, out.String())
		}
		// The bound stated is the trend rule's own (stats.DefaultTrend),
		// whatever its value.
		if want := "a rise under " + pct(stats.DefaultTrend.MaxRise) + " per 10 s"; tc.code == exitOK && !strings.Contains(out.String(), want) {
			t.Errorf("%q: stdout %q does not state the rule's threshold %q", tc.args, out.String(), want)
		}
	}
}
