package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/machine"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/internal/verify"
	"github.com/showdownlab/showdown/workloads"
)

// tinyTree writes a showdown tree holding one service, "tiny-bad": the
// test program of internal/service, which answers /health and nothing of
// the contract, so every contract check fails.
func tinyTree(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH")
	}
	root := svcTree(t, map[string]string{"tiny-bad": `name: tiny-bad
language: go
workloads: [string]
build: [[go, build, -o, bin/server, .]]
sources: ["*.go", go.mod]
run: [bin/server]
artifact: bin/server
`})
	for _, f := range []string{"main.go", "go.mod"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "internal", "service", "testdata", "tiny", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, "services", "tiny-bad", f), data, 0o644)
	}
	t.Setenv("SHOWDOWN_ROOT", "")
	t.Setenv("SHOWDOWN_CACHE", t.TempDir())
	return root
}

func TestVerifyUsage(t *testing.T) {
	root := tinyTree(t)
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		// Nothing to check.
		{"no target", nil, "--service or --url is required"},
		// Both ways at once.
		{"both", []string{"--service", "tiny-bad", "--url", "http://127.0.0.1:1"}, "exclude each other"},
		// --url alone cannot know the workloads.
		{"url without workload", []string{"--url", "http://127.0.0.1:1"}, "--url needs --workload"},
		// Not a URL.
		{"bad url", []string{"--url", "127.0.0.1:1", "--workload", "string"}, "is not an http:// base URL"},
		// A workload the contract does not have.
		{"unknown workload", []string{"--service", "tiny-bad", "--workload", "string,bnak"}, `unknown workload "bnak"`},
		// A service not under services/.
		{"unknown service", []string{"--service", "cobol-cics"}, `unknown service "cobol-cics" (known: tiny-bad)`},
		// A workload the service does not serve.
		{"unserved workload", []string{"--service", "tiny-bad", "--workload", "bank"}, "tiny-bad does not serve workload bank"},
		// A flag that does not exist.
		{"bad flag", []string{"--servcie", "x"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, _, errb := svcTestState(context.Background(), map[string]string{"SHOWDOWN_ROOT": root})
			if code := run(st, append([]string{"verify"}, tt.args...)); code != exitUsage {
				t.Errorf("exit code = %d, want %d (usage)\nstderr:\n%s", code, exitUsage, errb)
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, errb)
			}
		})
	}
}

// healthyURL extracts the service's URL from verify's progress output.
var healthyURL = regexp.MustCompile(`healthy at (http://\S+) after`)

func TestVerifyFailingService(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts a service")
	}
	root := tinyTree(t)
	st, out, errb := svcTestState(context.Background(), map[string]string{"SHOWDOWN_ROOT": root})
	code := run(st, []string{"verify", "--service", "tiny-bad"})
	if code != exitCheckFailed {
		t.Fatalf("exit code = %d, want %d (check failed)\nstdout:\n%s\nstderr:\n%s", code, exitCheckFailed, out, errb)
	}
	for _, want := range []string{"building tiny-bad", "starting tiny-bad", "healthy at"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks progress %q:\n%s", want, errb)
		}
	}
	// Every result is one line; a failure has its request and response
	// indented below it; the summary is the last line, in the shape CI reads.
	o := out.String()
	if !regexp.MustCompile(`(?m)^PASS health -> 200 \S+ \([0-9.]+[µm]?s\)$`).MatchString(o) {
		t.Errorf("no PASS line for the health check:\n%s", o)
	}
	if !regexp.MustCompile(`(?m)^FAIL string/uppercase hello -> 200 HELLO \(.*\)\n(    .*\n)*    request:\n      POST /uppercase`).MatchString(o) {
		t.Errorf("no FAIL line with its request for uppercase:\n%s", o)
	}
	lines := strings.Split(strings.TrimSpace(o), "\n")
	if !regexp.MustCompile(`^\d+ passed, [1-9]\d* failed, \d+ skipped$`).MatchString(lines[len(lines)-1]) {
		t.Errorf("last line %q is not the summary", lines[len(lines)-1])
	}
	// The service is stopped: its port no longer answers.
	if m := healthyURL.FindStringSubmatch(errb.String()); m != nil {
		assertClosed(t, m[1])
	}

	// --url checks a running service without hooks: the same failures,
	// and the outage and shutdown checks are skipped.
	ms, _ := service.Discover(root)
	inst, err := service.Start(context.Background(), ms[0], service.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(time.Second)
	if _, err := inst.WaitHealthy(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	st, out, errb = svcTestState(context.Background(), nil)
	if code := run(st, []string{"verify", "--url", inst.URL(), "--workload", "string"}); code != exitCheckFailed {
		t.Errorf("--url: exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitCheckFailed, out, errb)
	}
	if !strings.Contains(out.String(), "SKIP shutdown/") {
		t.Errorf("--url: the shutdown checks are not skipped:\n%s", out)
	}
}

func TestVerifyAll(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts a service")
	}
	root := tinyTree(t)
	// A service whose build tool does not exist, and a manifest with a typo.
	for name, text := range map[string]string{
		"nobuild": "name: nobuild\nlanguage: x\nworkloads: [string]\nbuild: [[no-such-tool-h8]]\nsources: [x]\nrun: [x]\n",
		"typo":    "name: typo\nlanguage: x\nworkloads: [string]\nrun: [x]\nknbos: {}\n",
	} {
		os.MkdirAll(filepath.Join(root, "services", name), 0o755)
		os.WriteFile(filepath.Join(root, "services", name, "showdown.yaml"), []byte(text), 0o644)
	}
	st, out, errb := svcTestState(context.Background(), map[string]string{"SHOWDOWN_ROOT": root})
	code := run(st, []string{"verify", "--service", "all", "--workload", "string"})
	// The broken ones make it a failure, yet tiny-bad was still checked.
	if code != exitFailure {
		t.Errorf("exit code = %d, want %d\nstderr:\n%s", code, exitFailure, errb)
	}
	for _, want := range []string{
		"typo/showdown.yaml:5: knbos: unknown field",
		"build of nobuild failed",
		"hint: no-such-tool-h8 is not installed",
		"could not build or start: nobuild",
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb)
		}
	}
	if !strings.Contains(out.String(), "FAIL tiny-bad: string/uppercase hello") {
		t.Errorf("stdout lacks tiny-bad's results, named after it:\n%s", out)
	}
}

// cancelOnWrite cancels a context at the first write: the first result.
type cancelOnWrite struct {
	once   sync.Once
	cancel func()
	buf    bytes.Buffer
	mu     sync.Mutex
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.once.Do(c.cancel)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func TestVerifyInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts a service")
	}
	root := tinyTree(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _, errb := svcTestState(ctx, map[string]string{"SHOWDOWN_ROOT": root})
	out := &cancelOnWrite{cancel: cancel}
	st.stdout = out
	if code := run(st, []string{"verify", "--service", "tiny-bad"}); code != exitInterrupted {
		t.Errorf("exit code = %d, want %d (interrupted)\nstderr:\n%s", code, exitInterrupted, errb)
	}
	m := healthyURL.FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("the service never became healthy:\n%s", errb)
	}
	assertClosed(t, m[1])
}

// assertClosed fails when something still listens at base URL u.
func assertClosed(t *testing.T, u string) {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", pu.Host, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after verify returned", u)
	}
}

// sharedDatabases starts one PostgreSQL and one MariaDB for the whole
// conformance test; verify prepares (drops and recreates) the workloads'
// tables before each service, which resets them between services.
type sharedDatabases struct {
	mu  sync.Mutex
	s   db.Servers
	err error
}

func (d *sharedDatabases) start(ctx context.Context, progress io.Writer, engines []workloads.Engine) (*stack.Databases, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	postgres, mariadb := slices.Contains(engines, workloads.Postgres), slices.Contains(engines, workloads.MySQL)
	if postgres && d.s.Postgres == nil && d.err == nil {
		fmt.Fprintln(progress, "starting postgres (shared)")
		d.s.Postgres, d.err = db.StartPostgres(ctx, db.WithStatementStats())
	}
	if mariadb && d.s.MariaDB == nil && d.err == nil {
		fmt.Fprintln(progress, "starting mariadb (shared)")
		d.s.MariaDB, d.err = db.StartMariaDB(ctx)
	}
	if d.err != nil {
		return nil, d.err
	}
	return stack.Use(d.s, stack.DatabaseOptions{Progress: progress}), nil
}

func (d *sharedDatabases) stop() {
	if d.s.Postgres != nil {
		d.s.Postgres.Stop()
	}
	if d.s.MariaDB != nil {
		d.s.MariaDB.Stop()
	}
}

// toolchainMissing says why a service's toolchain is absent, or "" when
// it is there. Only a truly absent toolchain skips a service.
func toolchainMissing(m *service.Manifest) string {
	need := func(tools ...string) string {
		for _, tool := range tools {
			if _, err := exec.LookPath(tool); err != nil {
				return tool + " not on PATH"
			}
		}
		return ""
	}
	switch m.Language {
	case "java":
		if why := need("mvn"); why != "" {
			return why
		}
		if home, _ := service.FindJDK(service.MinJava); home == "" {
			return "no JDK >= 21 (JAVA_HOME, java on PATH, /usr/lib/jvm)"
		}
		return ""
	case "javascript", "typescript", "node":
		return need("node", "npm")
	case "go":
		return need("go")
	case "rust":
		return need("cargo")
	case "python":
		return need("python3")
	}
	if len(m.Run) > 0 && !strings.Contains(m.Run[0], "/") {
		return need(m.Run[0])
	}
	return ""
}

// conformanceLanes is how many stacks TestConformance verifies at once,
// each lane with a PostgreSQL and a MariaDB of its own (the suite
// stops, hangs and restarts its databases, so two stacks never share
// one). Most of a verify is waiting: for a hung database's timeout
// (three checks of 2.5-5.5 s for go-stdlib), a start, a recovery; two
// lanes halve the wall time on two CPUs (go test -parallel is
// GOMAXPROCS, so a one-CPU machine still runs them one at a time).
const conformanceLanes = 2

// laneKey is the context key of a conformance subtest's databases.
type laneKey struct{}

// TestConformance runs 'showdown verify --service NAME' end to end, in
// process, for every implementation under services/, against real
// PostgreSQL and MariaDB servers, each pair shared by the stacks of one
// lane (conformanceLanes): each stack must pass the whole suite. It is
// the project's heaviest test (a few minutes, most of it the Java build
// and start).
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance test builds and starts every service (skipped with -short)")
	}
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := service.Discover(root)
	if err != nil {
		t.Errorf("invalid manifests:\n%v", err)
	}
	names := map[string]bool{}
	for _, m := range ms {
		names[m.Name] = true
	}
	for _, want := range []string{"go-gin", "go-stdlib", "java-helidon", "java-micronaut", "java-quarkus", "java-spring", "node-express", "node-fastify", "node-http", "python-django", "python-fastapi", "rust-actix", "rust-axum"} {
		if !names[want] {
			t.Errorf("service %s not discovered under %s/services", want, root)
		}
	}

	prebuildOnce(t, ms)
	// Cleanup, not defer: the parallel subtests run after this function
	// returns, and the databases must outlive them.
	lanes := make(chan *sharedDatabases, conformanceLanes)
	for range conformanceLanes {
		shared := &sharedDatabases{}
		t.Cleanup(shared.stop)
		lanes <- shared
	}
	prev := verifyDatabases
	verifyDatabases = func(ctx context.Context, progress io.Writer, engines []workloads.Engine) (*stack.Databases, error) {
		return ctx.Value(laneKey{}).(*sharedDatabases).start(ctx, progress, engines)
	}
	t.Cleanup(func() { verifyDatabases = prev })

	for _, m := range ms {
		t.Run(m.Name, func(t *testing.T) {
			if why := toolchainMissing(m); why != "" {
				t.Skipf("toolchain absent: %s", why)
			}
			t.Parallel()
			shared := <-lanes
			defer func() { lanes <- shared }()
			start := time.Now()
			before, _ := machine.ReadStat()
			st, out, errb := svcTestState(context.WithValue(context.Background(), laneKey{}, shared), map[string]string{"SHOWDOWN_ROOT": root})
			code := run(st, []string{"verify", "--service", m.Name, "--health-timeout", "5m"})
			t.Logf("%s: %s in %s; progress:\n%s", m.Name, lastLine(out.String()), time.Since(start).Round(time.Second), progressLines(errb.String()))
			if code != exitOK {
				var fails []string
				for _, l := range strings.Split(out.String(), "\n") {
					if !strings.HasPrefix(l, "PASS ") {
						fails = append(fails, l)
					}
				}
				// stderr quotes the service's last lines (a failed check's,
				// a failed start's); the machine's line tells a timing
				// cause from a bug.
				t.Errorf("showdown verify --service %s: exit code %d, want 0\nfailures:\n%s\nstderr:\n%s\n%s",
					m.Name, code, strings.Join(fails, "\n"), errb, machine.Since(before))
			}
		})
	}
}

var prebuilt sync.Once

// prebuildOnce builds every stack once per test binary, for whichever of
// TestFaults and TestConformance runs first: from a fresh clone the
// builds then overlap, one language per CPU, instead of each coming
// serially inside the first test that starts its stack.
func prebuildOnce(t *testing.T, ms []*service.Manifest) {
	prebuilt.Do(func() { prebuild(t, ms) })
}

// prebuild builds every stack before the suite runs, languages side by
// side, one per CPU (a language's builds take turns: they share its
// toolchain's local store), as the lab builds a plan's: rust's long link
// then overlaps a Maven build instead of waiting for it. Each verify
// below finds its build cached; a build that fails here fails there
// again, with its log.
func prebuild(t *testing.T, ms []*service.Manifest) {
	start := time.Now()
	lanes := map[string][]*service.Manifest{}
	var order []string
	for _, m := range ms {
		if toolchainMissing(m) != "" {
			continue
		}
		if _, ok := lanes[m.Language]; !ok {
			order = append(order, m.Language)
		}
		lanes[m.Language] = append(lanes[m.Language], m)
	}
	work := make(chan []*service.Manifest)
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), len(order)) {
		wg.Go(func() {
			for lane := range work {
				for _, m := range lane {
					if _, err := m.Build(context.Background(), io.Discard); err != nil {
						t.Logf("%s: build failed (its verify says why): %v", m.Name, err)
					}
				}
			}
		})
	}
	for _, lang := range order {
		work <- lanes[lang]
	}
	close(work)
	wg.Wait()
	t.Logf("built %d stacks in %d languages side by side in %s", len(ms), len(order), time.Since(start).Round(time.Second))
}

// progressLines keeps verify's own progress lines (building, starting,
// healthy after), not the service output quoted below them.
func progressLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" && !strings.HasPrefix(l, " ") {
			keep = append(keep, "  "+l)
		}
	}
	return strings.Join(keep, "\n")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestTallyFormat(t *testing.T) {
	var b bytes.Buffer
	tl := &tally{w: &b}
	for _, r := range []verify.Result{
		// A common check: no workload.
		{Check: "health -> 200 {status:ok}", Status: verify.Pass, Elapsed: 1234 * time.Microsecond},
		// A skip says why on its line.
		{Check: "outage/503 while down", Status: verify.Skip, Detail: "needs DatabaseDown", Elapsed: 0},
		// A failure: detail, request and response indented below.
		{Workload: "bank", Check: "bank/transfer insufficient funds -> 409", Status: verify.Fail, Detail: "status 200, want 409",
			Request: "POST /transaction HTTP/1.1\n\n{\"from\":1}", Response: "HTTP/1.1 200 OK\n\n{}", Elapsed: 1500 * time.Millisecond},
		// A check name without its workload gets it.
		{Workload: "sku", Check: "known id -> 200", Status: verify.Pass, Elapsed: 3 * time.Millisecond},
	} {
		tl.report("", r)
	}
	b.WriteString(tl.summary() + "\n")
	want := `PASS health -> 200 {status:ok} (1ms)
SKIP outage/503 while down (0s): needs DatabaseDown
FAIL bank/transfer insufficient funds -> 409 (1.5s)
    status 200, want 409
    request:
      POST /transaction HTTP/1.1

      {"from":1}
    response:
      HTTP/1.1 200 OK

      {}
PASS sku/known id -> 200 (3ms)
2 passed, 1 failed, 1 skipped
`
	if got := b.String(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}
