package noise

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/showdownlab/showdown/load"
)

// The host's latency floor is measured at FloorRate for FloorSeconds:
// a rate no generator and no server is busy at, long enough for a p99 of
// a few hundred samples.
const (
	FloorRate    = 200.0
	FloorSeconds = 3 * time.Second
)

// Latency is this host's own latency floor: what the generator's send
// lateness and a trivial server's latency (from the intended send time)
// are at a trivial rate, where neither is loaded. On a quiet machine both
// are tens of microseconds; on a virtual machine whose timer wake-ups
// are delayed by steal time and other tenants they reach milliseconds,
// and every latency measured there contains them. (A Latency converts
// to results.HostFloor.)
type Latency struct {
	Rate          float64 `json:"rate"`
	Seconds       float64 `json:"seconds"`
	Samples       int64   `json:"samples"`
	LatenessP99Ms float64 `json:"lateness_p99_ms"`
	P50Ms         float64 `json:"p50_ms"`
	P99Ms         float64 `json:"p99_ms"`
	ServerCPU     int     `json:"server_cpu"`
}

// MeasureLatency runs the engine in the open model at rate (0:
// FloorRate) for d (0: FloorSeconds) against a trivial HTTP/1.1 server
// on 127.0.0.1, a process of its own (this program started again)
// pinned to serverCPU (negative: not pinned), and returns the
// generator's send lateness p99 and the server's latency. a is the
// generator, with the caller's settings (nil: the engine's defaults).
func MeasureLatency(ctx context.Context, a *load.Attacker, serverCPU int, rate float64, d time.Duration) (Latency, error) {
	if rate <= 0 {
		rate = FloorRate
	}
	if d <= 0 {
		d = FloorSeconds
	}
	srv, err := startTrivial(serverCPU)
	if err != nil {
		return Latency{}, err
	}
	defer srv.stop()
	if a == nil {
		a = load.NewAttacker()
	}
	res, err := a.Attack(ctx, &load.Target{URL: "http://" + srv.addr + "/"}, load.OpenModel{Rate: rate, Duration: d})
	if err != nil {
		return Latency{}, fmt.Errorf("noise: latency floor: %w", err)
	}
	row, _ := res.Row("")
	if row.Samples == 0 || row.Errors > 0 {
		return Latency{}, fmt.Errorf("noise: latency floor: %d samples, %d errors (%s)", row.Samples, row.Errors, row.ErrorReasons())
	}
	return Latency{Rate: rate, Seconds: res.Summary.DurationSeconds, Samples: row.Samples, LatenessP99Ms: res.Summary.Lateness.P99,
		P50Ms: row.Latency.P50, P99Ms: row.Latency.P99, ServerCPU: srv.cpu}, ctx.Err()
}

// trivialEnv, set in a process's environment, makes it the trivial
// server (this package's init): a process of its own, because in the
// generator's the engine's event loops hold every P of the runtime
// (raw syscalls), and a server goroutine there waited for the
// scheduler's 10 ms preemption: a floor a hundred times the rounds'
// own lateness (bench/README.md, "Where the constants come from").
const trivialEnv = "SHOWDOWN_TRIVIAL_SERVER"

// trivialProcess is the trivial server's process, pinned to cpu (-1:
// not pinned), listening on addr.
type trivialProcess struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	addr string
	cpu  int
}

// startTrivial starts this program again as the trivial server, on cpu
// when taskset can pin it there (as the lab pins a service), and waits
// for its address.
func startTrivial(cpu int) (*trivialProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("noise: trivial server: %w", err)
	}
	argv := []string{exe}
	pinned := -1
	if _, err := os.Stat("/usr/bin/taskset"); err == nil && cpu >= 0 {
		argv = append([]string{"/usr/bin/taskset", "-c", fmt.Sprint(cpu)}, argv...)
		pinned = cpu
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), trivialEnv+"=1")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("noise: trivial server: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("noise: trivial server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("noise: trivial server: %w", err)
	}
	p := &trivialProcess{cmd: cmd, in: in, cpu: pinned}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("noise: trivial server said nothing: %w", err)
	}
	p.addr = strings.TrimSpace(line)
	return p, nil
}

// stop ends the trivial server (its stdin closed) and waits for it.
func (p *trivialProcess) stop() {
	p.in.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

func init() {
	if os.Getenv(trivialEnv) == "" {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "noise: trivial server:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	srv := &trivialServer{ln: ln, cpu: -1}
	srv.serve()
	os.Exit(0)
}

// trivialServer answers every request on a connection with a fixed
// 200, each connection on a thread of its own pinned to cpu: the least
// a service can do, on the service's CPU. A thread it could not pin
// (the CPU outside the process's set) serves unpinned, and unpinned says
// so.
type trivialServer struct {
	ln       net.Listener
	cpu      int
	mu       sync.Mutex
	unpinned bool
	cs       []net.Conn
}

func (s *trivialServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.cs = append(s.cs, c)
		s.mu.Unlock()
		go s.conn(c)
	}
}

var okResponse = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")

// conn serves c from a thread pinned to s.cpu. The goroutine ends locked
// to its thread, so Go ends the thread and no other goroutine inherits
// the pinning.
func (s *trivialServer) conn(c net.Conn) {
	defer c.Close()
	if s.cpu >= 0 {
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(s.cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			s.mu.Lock()
			s.unpinned = true
			s.mu.Unlock()
		}
	}
	r := bufio.NewReader(c)
	for {
		// Requests without a body: a header block ends each.
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(bytes.TrimRight(line, "\r\n")) == 0 {
				break
			}
		}
		if _, err := c.Write(okResponse); err != nil {
			return
		}
	}
}

// pinned is the CPU every connection was served on; -1 when not pinned.
func (s *trivialServer) pinned() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unpinned || s.cpu < 0 {
		return -1
	}
	return s.cpu
}

func (s *trivialServer) close() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cs {
		c.Close()
	}
}
