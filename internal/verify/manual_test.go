//go:build manual

package verify

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestManualService runs the suite against a service command it starts
// itself, without databases, printing every failure, skip and note:
//
//	SHOWDOWN_CMD="node server.js" SHOWDOWN_DIR=$PWD/services/node-http \
//	  go test -tags manual -count=1 -run Manual -v ./internal/verify
//
// SHOWDOWN_WORKLOADS (default "string") names the workloads to check; the
// command inherits the environment (set DATABASE_URL, MYSQL_URL there).
func TestManualService(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := strings.Fields(os.Getenv("SHOWDOWN_CMD"))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = os.Getenv("SHOWDOWN_DIR")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	done := make(chan int, 1)
	go func() { cmd.Wait(); done <- cmd.ProcessState.ExitCode() }()
	workloads := strings.Split(os.Getenv("SHOWDOWN_WORKLOADS"), ",")
	if workloads[0] == "" {
		workloads = []string{"string"}
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for i := 0; i < 600; i++ {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	Run(context.Background(), Target{
		BaseURL: base, Workloads: workloads,
		Terminate: func() error { return cmd.Process.Signal(syscall.SIGTERM) },
		Exited: func(ctx context.Context) (int, error) {
			select {
			case c := <-done:
				return c, nil
			case <-ctx.Done():
				return -1, ctx.Err()
			}
		},
	}, func(r Result) {
		if r.Status != Pass || r.Detail != "" {
			t.Logf("%s %s: %s", r.Status, r.Check, r.Detail)
		}
	})
}
