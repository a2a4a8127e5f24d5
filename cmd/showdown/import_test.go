package main

import (
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/load"
)

func TestImportJMX(t *testing.T) {
	dir := t.TempDir()
	plan := "../../internal/jmx/testdata/string.jmx"
	out := filepath.Join(dir, "string.yaml")
	st, stdout, stderr := testState(context.Background())
	// -J sets the plan's properties (${__P(threads,100)}, ${__P(loops,10000)}).
	if code := run(st, []string{"import", "jmx", "--out", out, "-J", "threads=3", "-J", "loops=4", plan}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout.String(), "--users 3 --ramp-up 10s --iterations 4") {
		t.Errorf("stdout lacks the attack command: %s", stdout)
	}
	for _, f := range []string{out, filepath.Join(dir, "string.load.yaml")} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	// The scenario runs: 3 users x 4 iterations of POST /uppercase, all
	// checked against $.v.
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/uppercase" || string(b) != `{"s":"hello"}` || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(400)
			return
		}
		hits.Add(1)
		io.WriteString(w, `{"v":"HELLO"}`)
	}))
	defer srv.Close()
	st, stdout, stderr = testState(context.Background())
	code := run(st, []string{"attack", "--scenario", out, "--base-url", srv.URL, "--users", "3", "--iterations", "4",
		"--fail-if", "errors>0%"})
	if code != exitOK || hits.Load() != 12 {
		t.Errorf("attack: exit %d, %d good requests, want 0 and 12\n%s%s", code, hits.Load(), stdout, stderr)
	}
}

func TestImportJMXStrict(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string // in stdout+stderr
	}{
		// Untranslatable elements are listed with their line; --strict refuses.
		{[]string{"import", "jmx", "--strict", "../../internal/jmx/testdata/unsupported.jmx"}, exitFailure, "unsupported.jmx:102: IfController"},
		// A file that is not a JMeter plan.
		{[]string{"import", "jmx", "../../internal/jmx/testdata/clients.csv"}, exitFailure, "not a JMeter plan"},
		// Properties with no default where the plan needs a constant:
		// each named with the -J that sets it, nothing written.
		{[]string{"import", "jmx", "../../internal/jmx/testdata/properties.jmx"}, exitUsage, "-J NUM_USERS=... -J HOST=... -J PORT=..."},
		// Set with -J, the plan translates; TOKEN is left to attack --var.
		{[]string{"import", "jmx", "-J", "HOST=127.0.0.1", "-J", "PORT=8080", "-J", "NUM_USERS=2", "../../internal/jmx/testdata/properties.jmx"}, exitOK, "--var TOKEN=VALUE: property TOKEN has no default"},
		// Only jmx is known.
		{[]string{"import", "k6", "x.js"}, exitUsage, "want: showdown import jmx PLAN.jmx"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		st, stdout, stderr := testState(context.Background())
		code := run(st, append(tt.args[:len(tt.args):len(tt.args)], "--out", filepath.Join(dir, "x.yaml")))
		all := stdout.String() + stderr.String()
		if code != tt.code || !strings.Contains(all, tt.want) {
			t.Errorf("%v: exit %d, want %d; output lacks %q:\n%s", tt.args, code, tt.code, tt.want, all)
		}
		if tt.code != exitOK {
			if _, err := os.Stat(filepath.Join(dir, "x.yaml")); err == nil {
				t.Errorf("%v: wrote a scenario", tt.args)
			}
		}
	}
}

// TestImportJMXUnsetProperty imports a plan whose request reads a property
// with no default and runs it with the value given to attack --var.
func TestImportJMXUnsetProperty(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "properties.yaml")
	st, stdout, stderr := testState(context.Background())
	args := []string{"import", "jmx", "--out", out, "-J", "HOST=127.0.0.1", "-J", "PORT=1", "-J", "NUM_USERS=2", "../../internal/jmx/testdata/properties.jmx"}
	if code := run(st, args); code != exitOK {
		t.Fatalf("import: exit %d: %s%s", code, stdout, stderr)
	}
	var good atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" || r.Header.Get("X-Token") != "s3cret" {
			w.WriteHeader(401)
			return
		}
		good.Add(1)
	}))
	defer srv.Close()
	st, stdout, stderr = testState(context.Background())
	code := run(st, []string{"attack", "--scenario", out, "--base-url", srv.URL, "--users", "2", "--iterations", "5",
		"--var", "TOKEN=s3cret", "--fail-if", "errors>0%"})
	if code != exitOK || good.Load() != 10 {
		t.Errorf("attack: exit %d, %d good requests, want 0 and 10\n%s%s", code, good.Load(), stdout, stderr)
	}
}

// TestImportJMXShaping imports a plan paced by a Throughput Shaping Timer:
// the report says what the timer became, and what is written loads again:
// the scenario, the load section in a plan, and the printed attack command
// as the open model of the timer's stages.
func TestImportJMXShaping(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "shaping.yaml")
	st, stdout, stderr := testState(context.Background())
	if code := run(st, []string{"import", "jmx", "--strict", "--out", out, "../../internal/jmx/testdata/shaping.jmx"}); code != exitOK {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"Translated into the load:",
		`kg.apc.jmeter.timers.VariableThroughputTimer "jp@gc - Throughput Shaping Timer" → open model, 5 stages, 0 to 250 iterations/s`,
		"so JMeter would have held 250 iterations/s",
		"--rate 0 --stages 10s:250,20s:250,1s:125,10s:125,5s:0 --arrivals even --connections 100",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout.String(), "Not translated") {
		t.Errorf("something was not translated:\n%s", stdout)
	}
	// The load section is a plan's: it parses and validates in one.
	loadYAML, err := os.ReadFile(filepath.Join(dir, "shaping.load.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	planText := "name: shaped\nimplementations: [go-stdlib]\nworkloads: [{name: string, scenario: " + out + "}]\n" + string(loadYAML)
	p, err := plan.ParsePlan(filepath.Join(dir, "plan.yaml"), []byte(planText), plan.Catalog{"go-stdlib": {"string"}}, plan.MachineOf(2))
	if err != nil {
		t.Fatalf("the load section does not load in a plan: %v\n%s", err, planText)
	}
	if l := p.Load; l.Model != "open" || len(l.Levels) != 1 || l.Levels[0] != 250 || time.Duration(l.Duration) != 46*time.Second ||
		l.Spacing() != load.Even || l.Pool() != 100 {
		t.Errorf("plan load %+v, want open at 250/s for 46s, even, 100 connections", l)
	}
	// The printed command parses into the timer's open model, with the
	// written scenario.
	line := stdout.String()[strings.Index(stdout.String(), "showdown attack ")+len("showdown attack "):]
	line, _, _ = strings.Cut(line, "\n")
	fs := flag.NewFlagSet("attack", flag.ContinueOnError)
	var f attackFlags
	f.define(fs)
	if err := fs.Parse(strings.Fields(line)); err != nil {
		t.Fatal(err)
	}
	ap, err := f.plan(fs.Args())
	if err != nil {
		t.Fatalf("showdown attack %s: %v", line, err)
	}
	m, ok := ap.model.(load.OpenModel)
	if !ok || m.Rate != 0 || len(m.Stages) != 5 || m.Stages[0] != (load.Stage{Duration: 10 * time.Second, Target: 250}) || m.Connections != 100 || m.Arrivals != load.Even {
		t.Errorf("showdown attack %s: model %+v", line, ap.model)
	}
}
