package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFixture copies the report package's run fixture into a temporary
// folder, so the test may write into it.
func copyFixture(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "internal", "report", "testdata", "run"))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReportCommand(t *testing.T) {
	dir := copyFixture(t)
	st, out, errb := testState(context.Background())
	if c := run(st, []string{"report", dir}); c != exitOK {
		t.Fatalf("exit %d: %s", c, errb)
	}
	for _, name := range []string{"report.html", "summary.md"} {
		p := filepath.Join(dir, name)
		if !strings.Contains(out.String(), p) {
			t.Errorf("output %q does not name %s", out, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 1000 {
			t.Errorf("%s: only %d bytes", name, len(b))
		}
	}
	// --format json to standard output
	st, out, errb = testState(context.Background())
	if c := run(st, []string{"report", "--format", "json", dir}); c != exitOK {
		t.Fatalf("exit %d: %s", c, errb)
	}
	var v struct {
		Workloads []struct{ Headline string }
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || len(v.Workloads) != 2 || !strings.Contains(v.Workloads[0].Headline, "go-stdlib") {
		t.Errorf("json: %v, %+v", err, v)
	}
	// a stricter headline: nobody keeps p99 under 1 µs
	st, out, errb = testState(context.Background())
	if c := run(st, []string{"report", "--format", "md", "--acceptable-p99", "1us", dir}); c != exitOK || !strings.Contains(out.String(), "no implementation kept p99 ≤ 0.00ms") {
		t.Errorf("exit %d, stderr %s; summary:\n%s", c, errb, out)
	}
	// --format csv --out FILE
	csvPath := filepath.Join(t.TempDir(), "r.csv")
	st, _, errb = testState(context.Background())
	if c := run(st, []string{"report", "--format=csv", "--out", csvPath, dir}); c != exitOK {
		t.Fatalf("exit %d: %s", c, errb)
	}
	if b, _ := os.ReadFile(csvPath); strings.Count(string(b), "\n") != 17 {
		t.Errorf("csv: want a header and 16 rows (2x2x2x2), got\n%s", b)
	}
}

func TestReportCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		// no folder
		{"no args", []string{"report"}, exitUsage, "one results folder"},
		// an unknown format
		{"bad format", []string{"report", "--format", "pdf", "x"}, exitUsage, "want html, md, json, csv or terminal"},
		// --out alone
		{"out without format", []string{"report", "--out", "x.html", "x"}, exitUsage, "--out needs --format"},
		// a negative latency
		{"bad threshold", []string{"report", "--acceptable-p99", "-1s", "x"}, exitUsage, "must be positive"},
		// a folder that does not exist
		{"missing folder", []string{"report", "/nonexistent/results"}, exitFailure, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, errb := testState(context.Background())
			if c := run(st, tc.args); c != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", c, errb, tc.code, tc.want)
			}
		})
	}
}

func TestCompareCommand(t *testing.T) {
	dir := copyFixture(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		// want is in stdout for exit 0, in stderr otherwise
		want string
	}{
		// implementations inside one run
		{"between", []string{"compare", "--between", "go-stdlib,node-http", dir}, exitOK, "service peak RSS"},
		// a folder with itself: every change is ~
		{"same folder", []string{"compare", dir, dir}, exitOK, "p=1.000 n=2+2"},
		// JSON
		{"json", []string{"compare", "--json", dir, dir}, exitOK, `"significant": false`},
		// one folder only
		{"one folder", []string{"compare", dir}, exitUsage, "at least two"},
		// a selector that matches nothing
		{"bad selector", []string{"compare", "--between", "go-stdlib,java-spring", dir}, exitUsage, "matches no implementation"},
		// a malformed --between
		{"three selectors", []string{"compare", "--between", "a,b,c", dir}, exitUsage, "two selectors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, out, errb := testState(context.Background())
			c := run(st, tc.args)
			got := out.String()
			if tc.code != exitOK {
				got = errb.String()
			}
			if c != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("exit %d, output:\n%s\nstderr: %s\nwant exit %d and %q", c, out, errb, tc.code, tc.want)
			}
		})
	}
}

// TestReportRejudges: showdown report judges an interleaved run's
// verdict again with this version's estimator, and says so; with
// --as-recorded it keeps the run's own verdict.
func TestReportRejudges(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "noisy-day")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "internal", "report", "testdata", "noisy-day"))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		again bool
	}{
		// the default: judged again
		{[]string{"report", "--format", "md", dir}, true},
		// the verdict as the run recorded it
		{[]string{"report", "--format", "md", "--as-recorded", dir}, false},
	} {
		st, out, errb := testState(context.Background())
		if c := run(st, tc.args); c != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, c, errb)
		}
		md := out.String()
		if got := strings.Contains(md, "judged again with this version's estimator"); got != tc.again {
			t.Errorf("%v: says judged again %v, want %v", tc.args, got, tc.again)
		}
		if !strings.Contains(md, "- at 50 users: node-http ") {
			t.Errorf("%v: no verdict line for node-http:\n%s", tc.args, md)
		}
	}
}
