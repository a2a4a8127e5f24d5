// Package neighbour is a noisy neighbour for testing how showdown measures
// on a disturbed machine: a child process pinned to given CPUs that
// hogs them (a CPU and memory-bandwidth loop over a buffer larger than
// the caches) for a share of every 10 ms that drifts at random between 0
// and 100% over seconds, as a shared host's load does, and that ends by
// itself at its deadline or when its parent dies.
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
	// DefaultDuty is the neighbour's mean intensity: the share of time
	// it is busy, averaged over its drift.
	DefaultDuty = 0.5
	// DefaultMinPeriod and DefaultMaxPeriod bound the time between two
	// turns of its intensity, drawn uniformly between them. The intensity
	// (the busy share of each Slice) moves in a straight line from one
	// turn to the next, to a fresh random value, so the machine drifts:
	// slowly within a round, a long way over a level or a start. That is
	// the disturbance interleaved rounds are meant to cancel and
	// sequential starts cannot: five sequential 6 s starts of go-stdlib
	// vary by a CV of 20% or more under it (bench/README.md). On/off
	// stretches were tried first: of 0.5-8 s they gave those starts a CV
	// of only 4.1%, while of 1-30 s (CV 23-28%) every round whose arms
	// straddled a switch moved the round's ratio by up to half, a
	// disturbance no method cancels and no machine shows.
	DefaultMinPeriod = 5 * time.Second
	DefaultMaxPeriod = 20 * time.Second
	// Slice is the unit of its duty cycle: busy for intensity × Slice,
	// then asleep for the rest, so every arm measured at one intensity
	// shares its CPU alike.
	Slice = 10 * time.Millisecond
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
	// Duty is its mean busy share (0 < Duty <= 1): each turn's
	// intensity is drawn uniformly from [0, 2·Duty] (within [0, 1]).
	Duty float64 `json:"duty"`
	// MinPeriod and MaxPeriod bound the time between two turns of its
	// intensity.
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
	opts Options
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
	n := &Neighbour{opts: o, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(n.done)
	}()
	return n, nil
}

// Options are the neighbour's options, defaults filled in.
func (n *Neighbour) Options() Options { return n.opts }

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

// hog pins its thread to cpu and works for a drifting share of every
// Slice: the intensity moves linearly between random turns.
func hog(cpu int, o Options, seed uint64, deadline time.Time, stop *atomic.Bool) {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	buf := make([]uint64, o.MemoryBytes/8)
	var x uint64 = seed | 1
	draw := func() float64 { return min(1, 2*o.Duty*rng.Float64()) }
	from, to := draw(), draw()
	turnAt := time.Now()
	span := o.period(rng)
	for !stop.Load() && time.Now().Before(deadline) {
		now := time.Now()
		if now.Sub(turnAt) >= span {
			from, to, turnAt, span = to, draw(), now, o.period(rng)
		}
		level := from + (to-from)*float64(now.Sub(turnAt))/float64(span)
		end := now.Add(time.Duration(level * float64(Slice)))
		for time.Now().Before(end) {
			// A cache line per write, across the whole buffer.
			for i := 0; i < 1<<10; i++ {
				j := (x >> 7) % uint64(len(buf))
				buf[j] += x
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		if rest := Slice - time.Since(now); rest > 0 {
			time.Sleep(rest)
		}
	}
	sink.Store(x)
}

// period draws the time to the next turn of the intensity.
func (o Options) period(rng *rand.Rand) time.Duration {
	return o.MinPeriod + time.Duration(rng.Int64N(int64(o.MaxPeriod-o.MinPeriod)+1))
}

var sink atomic.Uint64

// StartOn starts a neighbour on cpus for a run of at most a day, its turns
// between turns[0] and turns[1] apart (no turns: the defaults). It returns
// how to stop it and its turns' span in words ("2s-20s").
func StartOn(cpus []int, turns []time.Duration) (stop func(), span string, err error) {
	o := Options{CPUs: cpus, Max: 24 * time.Hour}
	if len(turns) == 2 {
		o.MinPeriod, o.MaxPeriod = turns[0], turns[1]
	}
	n, err := Start(o)
	if err != nil {
		return nil, "", err
	}
	return n.Stop, fmt.Sprintf("%v-%v", n.opts.MinPeriod, n.opts.MaxPeriod), nil
}
