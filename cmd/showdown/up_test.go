package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/service"
)

// lockedBuffer is a writer a test may read while the command writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUp brings go-stdlib up with PostgreSQL and the bank data, answers
// /health and a bank request on the printed URL, and after the interrupt
// leaves no service or database process behind and the port free.
func TestUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds go-stdlib and starts PostgreSQL (skipped with -short)")
	}
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	port, err := service.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var out, errb lockedBuffer
	st := &state{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string {
			if k == "SHOWDOWN_ROOT" {
				return root
			}
			return ""
		}}
	done := make(chan int, 1)
	go func() {
		done <- run(st, []string{"up", "--service", "go-stdlib", "--workload", "string,bank", "--port", strconv.Itoa(port)})
	}()

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(5 * time.Minute)
	for !strings.Contains(out.String(), "up; Ctrl-C") {
		select {
		case code := <-done:
			if strings.Contains(errb.String(), "not installed") || strings.Contains(errb.String(), "scripts/setup.sh") {
				t.Skipf("a database is absent: %s", errb.String())
			}
			t.Fatalf("up ended with %d before it was up:\n%s\n%s", code, out.String(), errb.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not up after 5 minutes:\n%s\n%s", out.String(), errb.String())
		}
	}
	printed := out.String()
	if !strings.Contains(printed, "go-stdlib: "+base+" ") {
		t.Errorf("the base URL %s is not printed:\n%s", base, printed)
	}
	var pids []int
	for _, m := range regexp.MustCompile(`pid (\d+)`).FindAllStringSubmatch(printed, -1) {
		pid, _ := strconv.Atoi(m[1])
		pids = append(pids, pid)
	}
	if len(pids) != 2 {
		t.Fatalf("want the pids of PostgreSQL and go-stdlib, got %v:\n%s", pids, printed)
	}

	c := &http.Client{Timeout: 10 * time.Second}
	for _, rq := range []struct{ method, path string }{
		{"GET", "/health"},          // the service is healthy
		{"POST", "/client/new/100"}, // the bank answers from PostgreSQL
	} {
		req, _ := http.NewRequest(rq.method, base+rq.path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", rq.method, rq.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Errorf("%s %s: %d %s", rq.method, rq.path, resp.StatusCode, body)
		}
	}

	interrupt()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after the interrupt, want 0:\n%s", code, errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("up did not stop within a minute of the interrupt")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d is still there after up returned (kill 0: %v)", pid, err)
		}
	}
	if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Errorf("port %d still taken: %v", port, err)
	} else {
		l.Close()
	}
}

// TestConnectionBudget: a plan whose services alive at once and the
// harness need more connections than the databases accept is refused
// (exit 2) with the numbers, before anything is built or started.
func TestConnectionBudget(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("name: big\nimplementations: [go-stdlib]\nworkloads: [bank]\nload: {levels: [10]}\nenv: {DB_POOL_SIZE: \"97\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		// up --plan keeps every implementation alive at once.
		{[]string{"up", "--plan", "../../plans/stacks.yaml"}, "13 services × 20 + 4 harness = 264 > max_connections 100"},
		// --env applies to the one service.
		{[]string{"up", "--service", "node-http", "--workload", "bank", "--env", "WORKERS=6"}, "node-http 6 processes × 20 + 4 harness = 124 > max_connections 100"},
		// run checks at validation time (--check included).
		{[]string{"run", "--check", big}, "go-stdlib 97 + 4 harness = 101 > max_connections 100"},
	} {
		// A cancelled context: were the check to pass, nothing would
		// stay up waiting for Ctrl-C.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		st, stdout, stderr := testState(ctx)
		code := run(st, tt.args)
		if code != exitUsage || !strings.Contains(stderr.String(), tt.want) || !strings.Contains(stderr.String(), "hint: set DB_POOL_SIZE to") {
			t.Errorf("%v: exit %d, want %d with %q:\n%s%s", tt.args, code, exitUsage, tt.want, stdout, stderr)
		}
	}
}
