package noise

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"sync"
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
// of its own on 127.0.0.1, each of whose connections is served on a
// thread pinned to serverCPU (negative: not pinned), and returns the
// generator's send lateness p99 and the server's latency. a is the
// generator, with the caller's settings (nil: the engine's defaults).
func MeasureLatency(ctx context.Context, a *load.Attacker, serverCPU int, rate float64, d time.Duration) (Latency, error) {
	if rate <= 0 {
		rate = FloorRate
	}
	if d <= 0 {
		d = FloorSeconds
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Latency{}, fmt.Errorf("noise: trivial server: %w", err)
	}
	srv := &trivialServer{ln: ln, cpu: serverCPU}
	go srv.serve()
	defer srv.close()
	if a == nil {
		a = load.NewAttacker()
	}
	res, err := a.Attack(ctx, &load.Target{URL: "http://" + ln.Addr().String() + "/"}, load.OpenModel{Rate: rate, Duration: d})
	if err != nil {
		return Latency{}, fmt.Errorf("noise: latency floor: %w", err)
	}
	row, _ := res.Row("")
	if row.Samples == 0 || row.Errors > 0 {
		return Latency{}, fmt.Errorf("noise: latency floor: %d samples, %d errors (%s)", row.Samples, row.Errors, row.ErrorReasons())
	}
	return Latency{Rate: rate, Seconds: res.Summary.DurationSeconds, Samples: row.Samples, LatenessP99Ms: res.Summary.Lateness.P99,
		P50Ms: row.Latency.P50, P99Ms: row.Latency.P99, ServerCPU: srv.pinned()}, ctx.Err()
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
