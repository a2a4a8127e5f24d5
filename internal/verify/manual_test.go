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
	if os.Getenv("SHOWDOWN_CMD") == "" {
		t.Skip("set SHOWDOWN_CMD (and SHOWDOWN_DIR) to the service command to check")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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
	listening := false
	for i := 0; i < 600 && !listening; i++ {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			listening = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !listening {
		t.Fatalf("%s did not listen on port %d within 60 s", os.Getenv("SHOWDOWN_CMD"), port)
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
		switch {
		case r.Status == Fail:
			t.Errorf("%s %s: %s\nrequest:\n%s\nresponse:\n%s", r.Status, r.Check, r.Detail, r.Request, r.Response)
		case r.Status != Pass || r.Detail != "":
			t.Logf("%s %s: %s", r.Status, r.Check, r.Detail)
		}
	})
}
