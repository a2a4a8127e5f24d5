package main

import (
	"context"
	"strings"
	"testing"
)

// TestAAUsage: showdown aa refuses what it cannot run with exit 2 and a
// hint, before starting anything (an unknown service, a bad precision,
// half a placement).
func TestAAUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"aa", "--service", "no-such-stack"}, `unknown service "no-such-stack"`},
		{[]string{"aa", "--precision", "300"}, "precision must be between"},
		{[]string{"aa", "--service-cpus", "0"}, "--service-cpus and --generator-cpus go together"},
		{[]string{"aa", "extra"}, "unexpected arguments"},
	} {
		st, _, errb := testState(context.Background())
		if code := run(st, tc.args); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", tc.args, code, errb)
		}
		if !strings.Contains(errb.String(), tc.want) || !strings.Contains(errb.String(), "hint:") {
			t.Errorf("%v: stderr %q, want %q and a hint", tc.args, errb, tc.want)
		}
	}
}
