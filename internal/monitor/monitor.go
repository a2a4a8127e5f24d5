// Package monitor samples the resource use of a process and all of its
// descendants: CPU as a delta over each interval (not the lifetime average
// that ps prints), resident memory, OS threads, open file descriptors and
// context switches; and it counts the TCP connections a tree holds to
// given ports (Connections), a service's database connections.
//
// A service is often more than one process (Node in cluster mode, a
// PostgreSQL postmaster and its backends), so a Sampler follows the whole
// tree below its root pid and sums it. Readings come from gopsutil.
package monitor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/showdownlab/showdown/internal/proctree"
)

// DefaultInterval is the sampling period used when none is given.
const DefaultInterval = time.Second

// ErrGone is returned when the root process no longer exists.
var ErrGone = errors.New("monitor: process is gone")

// Sample is one reading of a process tree.
//
// results.ResourceSample mirrors it field for field, on purpose: the
// results model may not import the sampler (a report would link /proc
// code; importRules in internal/imports_test.go), so the lab converts
// one to the other (results.ResourceSample(s)), a conversion that stops
// compiling the day the two differ. A field added here is added there.
type Sample struct {
	// Time is when the reading was taken.
	Time time.Time
	// Interval is the time since the previous reading; zero for the first.
	Interval time.Duration
	// Processes counts the root and its live descendants.
	Processes int
	// CPUPercent is the CPU time (user+system) the tree used during the
	// interval, as a percentage of one core: 200 means two cores busy.
	// It is zero for the first reading, which has no interval.
	CPUPercent float64
	// CPUSeconds is the user+system CPU time of the live processes of the
	// tree since they started.
	CPUSeconds float64
	// RSSBytes is the sum of the resident set sizes. Pages shared between
	// processes of the tree (forked workers) are counted once per process,
	// as ps and top do.
	RSSBytes uint64
	// Threads counts OS threads across the tree.
	Threads int
	// FDs counts open file descriptors across the tree.
	FDs int
	// CtxSwitches counts voluntary and involuntary context switches during
	// the interval.
	CtxSwitches uint64
}

// procCounters are the cumulative counters of one process at one reading.
type procCounters struct {
	cpu      float64
	switches uint64
}

// Sampler reads a process tree. It keeps the previous reading to turn
// cumulative counters into per-interval deltas; it is not safe for
// concurrent use.
type Sampler struct {
	root      int32
	recursive bool
	prev      map[int32]procCounters
	prevTime  time.Time
	procs     map[int32]*process.Process
	buf       []byte
}

// Option configures a Sampler.
type Option func(*Sampler)

// RootOnly makes the Sampler read only the root process, not its
// descendants (for the load generator itself).
func RootOnly() Option { return func(s *Sampler) { s.recursive = false } }

// NewSampler returns a Sampler for pid and its descendants.
func NewSampler(pid int, opts ...Option) *Sampler {
	s := &Sampler{root: int32(pid), recursive: true, procs: map[int32]*process.Process{}, buf: make([]byte, 4096)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Sample takes one reading. It returns ErrGone once the root has exited.
func (s *Sampler) Sample(ctx context.Context) (Sample, error) {
	now := time.Now()
	pids, err := s.tree(ctx)
	if err != nil {
		return Sample{}, err
	}
	cur := make(map[int32]procCounters, len(pids))
	out := Sample{Time: now}
	var cpuDelta float64
	for _, p := range pids {
		t, err := p.TimesWithContext(ctx)
		if err != nil {
			continue // exited between listing and reading
		}
		c := procCounters{cpu: t.User + t.System}
		if mem, err := p.MemoryInfoWithContext(ctx); err == nil {
			out.RSSBytes += mem.RSS
		}
		if sw, ok := ctxSwitches(p.Pid, s.buf); ok {
			c.switches = sw
		}
		if n, err := p.NumThreadsWithContext(ctx); err == nil {
			out.Threads += int(n)
		}
		if n, err := p.NumFDsWithContext(ctx); err == nil {
			out.FDs += int(n)
		}
		out.Processes++
		out.CPUSeconds += c.cpu
		cur[p.Pid] = c
		if prev, seen := s.prev[p.Pid]; seen {
			cpuDelta += c.cpu - prev.cpu
			out.CtxSwitches += c.switches - prev.switches
		} else if s.prev != nil {
			// Started during the interval: all its time is new.
			cpuDelta += c.cpu
			out.CtxSwitches += c.switches
		}
	}
	if out.Processes == 0 {
		return Sample{}, ErrGone
	}
	if s.prev != nil {
		out.Interval = now.Sub(s.prevTime)
		if secs := out.Interval.Seconds(); secs > 0 {
			out.CPUPercent = 100 * cpuDelta / secs
			if out.CPUPercent < 0 {
				out.CPUPercent = 0
			}
		}
	}
	s.prev, s.prevTime = cur, now
	return out, nil
}

// tree returns the root and, unless RootOnly, its live descendants.
// Process handles are kept between readings so gopsutil's per-process
// state (creation time) is read once.
func (s *Sampler) tree(ctx context.Context) ([]*process.Process, error) {
	root, err := s.handle(ctx, s.root)
	if err != nil {
		return nil, ErrGone
	}
	if running, err := root.IsRunningWithContext(ctx); err != nil || !running {
		return nil, ErrGone
	}
	// An exited process whose parent has not reaped it yet is a zombie:
	// it holds no resources and will not run again.
	if st, err := root.StatusWithContext(ctx); err == nil && len(st) > 0 && st[0] == process.Zombie {
		return nil, ErrGone
	}
	out := []*process.Process{root}
	if !s.recursive {
		return out, nil
	}
	live := map[int32]bool{s.root: true}
	for _, pid := range proctree.Descendants(s.root) {
		h, err := s.handle(ctx, pid)
		if err != nil {
			continue
		}
		live[pid] = true
		out = append(out, h)
	}
	for pid := range s.procs {
		if !live[pid] {
			delete(s.procs, pid)
		}
	}
	return out, nil
}

func (s *Sampler) handle(ctx context.Context, pid int32) (*process.Process, error) {
	if p, ok := s.procs[pid]; ok {
		return p, nil
	}
	p, err := process.NewProcessWithContext(ctx, pid)
	if err != nil {
		return nil, err
	}
	s.procs[pid] = p
	return p, nil
}

// Run samples pid's tree every interval, calling fn with each reading,
// until ctx is done (it returns nil) or the root exits (ErrGone). The first
// reading is taken at once; fn gets it too, with zero CPUPercent.
func Run(ctx context.Context, pid int, interval time.Duration, fn func(Sample), opts ...Option) error {
	if interval <= 0 {
		interval = DefaultInterval
	}
	s := NewSampler(pid, opts...)
	if _, err := process.NewProcessWithContext(ctx, int32(pid)); err != nil {
		return fmt.Errorf("monitor: no process %d: %w", pid, err)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		smp, err := s.Sample(ctx)
		if err != nil {
			return err
		}
		fn(smp)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tree returns pid and its descendants, parents first: the processes a
// sample of pid covers.
func Tree(pid int) []int32 {
	return append([]int32{int32(pid)}, proctree.Descendants(int32(pid))...)
}
