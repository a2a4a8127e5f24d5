// Package neighbour is a noisy neighbour for testing how showdown measures
// on a disturbed machine: a child process pinned to given CPUs that
// switches at random between hogging them (a CPU and memory-bandwidth
// loop over a buffer larger than the caches) and sleeping, and that ends
// by itself at its deadline or when its parent dies.
//
// The child is this same executable started again with the options in
// an environment variable; the package's init runs it there, so any
// binary that imports the package (showdown, a test binary) can start
// one.
package neighbour

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Defaults of Options.
const (
	// DefaultDuty is the share of time the neighbour is busy.
	DefaultDuty = 0.5
	// DefaultMinPeriod and DefaultMaxPeriod bound one busy stretch, drawn
	// uniformly between them (idle ones scaled by the duty): from a
	// fraction of a round to longer than a 6 s level, so rounds and whole
	// levels alike catch a random share of it. Five sequential 6 s starts
	// of go-stdlib varied by 4.1% with these, 5.1% with 0.1-1.5 s
	// stretches, 0.6% without a neighbour (bench/README.md).
	DefaultMinPeriod = 500 * time.Millisecond
	DefaultMaxPeriod = 8 * time.Second
	// DefaultMax ends a neighbour whoever forgets to stop it.
	DefaultMax = time.Hour
	// DefaultMemoryBytes is each busy thread's buffer: past the last-level
	// cache, so it takes memory bandwidth as well as CPU.
	DefaultMemoryBytes = 64 << 20
)

// envVar carries the options to the child.
const envVar = "SHOWDOWN_NEIGHBOUR"

// Options configure a neighbour.
type Options struct {
	// CPUs are the CPUs it hogs, one thread each.
	CPUs []int `json:"cpus"`
	// Duty is the busy share of its time (0 < Duty <= 1).
	Duty float64 `json:"duty"`
	// MinPeriod and MaxPeriod bound a busy stretch; idle stretches are
	// scaled so the busy share is Duty.
	MinPeriod time.Duration `json:"min_period"`
	MaxPeriod time.Duration `json:"max_period"`
	// Max is how long it runs at most.
	Max time.Duration `json:"max"`
	// MemoryBytes is each thread's buffer.
	MemoryBytes int `json:"memory_bytes"`
	// Seed makes its on/off pattern repeatable (0: from the clock).
	Seed uint64 `json:"seed"`
}

func (o *Options) defaults() {
	if o.Duty <= 0 || o.Duty > 1 {
		o.Duty = DefaultDuty
	}
	if o.MinPeriod <= 0 {
		o.MinPeriod = DefaultMinPeriod
	}
	if o.MaxPeriod < o.MinPeriod {
		o.MaxPeriod = max(DefaultMaxPeriod, o.MinPeriod)
	}
	if o.Max <= 0 {
		o.Max = DefaultMax
	}
	if o.MemoryBytes <= 0 {
		o.MemoryBytes = DefaultMemoryBytes
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
}

// Neighbour is a running noisy neighbour.
type Neighbour struct {
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
}

// Start starts a neighbour with o.
func Start(o Options) (*Neighbour, error) {
	if len(o.CPUs) == 0 {
		return nil, errors.New("neighbour: no CPUs to disturb")
	}
	o.defaults()
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("neighbour: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envVar+"="+string(b))
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	// Killed with its parent's thread at the latest; its own deadline and
	// parent check end it otherwise.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("neighbour: %w", err)
	}
	n := &Neighbour{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(n.done)
	}()
	return n, nil
}

// PID is the neighbour's process id.
func (n *Neighbour) PID() int { return n.cmd.Process.Pid }

// Done is closed when the neighbour has ended.
func (n *Neighbour) Done() <-chan struct{} { return n.done }

// Stop ends the neighbour and waits for it.
func (n *Neighbour) Stop() {
	n.once.Do(func() {
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.done:
		case <-time.After(2 * time.Second):
			_ = n.cmd.Process.Kill()
			<-n.done
		}
	})
}

func init() {
	v := os.Getenv(envVar)
	if v == "" {
		return
	}
	var o Options
	if err := json.Unmarshal([]byte(v), &o); err != nil {
		fmt.Fprintln(os.Stderr, "neighbour:", err)
		os.Exit(2)
	}
	o.defaults()
	run(o)
	os.Exit(0)
}

// run is the neighbour's own process: one hogging thread per CPU until
// its deadline, or its parent is gone.
func run(o Options) {
	parent := os.Getppid()
	deadline := time.Now().Add(o.Max)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i, cpu := range o.CPUs {
		wg.Go(func() { hog(cpu, o, o.Seed+uint64(i), deadline, &stop) })
	}
	for !stop.Load() {
		time.Sleep(100 * time.Millisecond)
		if time.Now().After(deadline) || os.Getppid() != parent {
			stop.Store(true)
		}
	}
	wg.Wait()
}

// hog pins its thread to cpu and alternates busy and idle stretches.
func hog(cpu int, o Options, seed uint64, deadline time.Time, stop *atomic.Bool) {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	buf := make([]uint64, o.MemoryBytes/8)
	var x uint64 = seed | 1
	for !stop.Load() && time.Now().Before(deadline) {
		busy := o.MinPeriod + time.Duration(rng.Int64N(int64(o.MaxPeriod-o.MinPeriod)+1))
		end := time.Now().Add(busy)
		for time.Now().Before(end) && !stop.Load() {
			// A cache line per write, across the whole buffer.
			for i := 0; i < 1<<14; i++ {
				j := (x >> 7) % uint64(len(buf))
				buf[j] += x
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		idle := time.Duration(float64(busy) * (1 - o.Duty) / o.Duty * (0.5 + rng.Float64()))
		time.Sleep(idle)
	}
	sink.Store(x)
}

var sink atomic.Uint64
