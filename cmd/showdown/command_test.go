package main

import (
	"context"
	"strings"
	"testing"
)

func TestHelpDispatch(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		wantOut    string // in stdout
		wantErr    string // in stderr
		notWantOut string // must not be in stdout
	}{
		// No arguments: the usage, and a usage exit code.
		{nil, exitUsage, "Usage: showdown <command>", "", ""},
		// help alone: the usage, exit 0.
		{[]string{"help"}, exitOK, "Commands:", "", ""},
		// help of a known command: its flags (on stderr), exit 0.
		{[]string{"help", "attack"}, exitOK, "", "Usage: showdown attack", ""},
		// help version: version is built in, not registered.
		{[]string{"help", "version"}, exitOK, "Usage: showdown version", "", ""},
		// help of an unknown command: say so and exit 2, like `showdown NAME`.
		{[]string{"help", "nosuch"}, exitUsage, "", `unknown command "nosuch"`, "Commands:"},
		// --help with an unknown command behaves the same.
		{[]string{"--help", "nosuch"}, exitUsage, "", `unknown command "nosuch"`, "Commands:"},
		// An unknown command itself.
		{[]string{"nosuch"}, exitUsage, "", `unknown command "nosuch"`, ""},
	}
	for _, tc := range tests {
		st, out, errb := testState(context.Background())
		got := run(st, tc.args)
		if got != tc.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, got, tc.code, errb.String())
		}
		if !strings.Contains(out.String(), tc.wantOut) {
			t.Errorf("%q: stdout %q lacks %q", tc.args, out.String(), tc.wantOut)
		}
		if !strings.Contains(errb.String(), tc.wantErr) {
			t.Errorf("%q: stderr %q lacks %q", tc.args, errb.String(), tc.wantErr)
		}
		if tc.notWantOut != "" && strings.Contains(out.String(), tc.notWantOut) {
			t.Errorf("%q: stdout has %q", tc.args, tc.notWantOut)
		}
	}
}
