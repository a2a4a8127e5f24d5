// Package cgroup limits a service's CPU and memory and pins it to CPUs:
// the way the sources' small boxes did (1 vCPU, 1 GiB), on one machine.
//
// A Group is a child of the control group showdown itself runs in (read
// from /proc/self/cgroup), never elsewhere, and showdown never moves
// itself. The service enters the group before it runs a single instruction
// of its own: Wrap prefixes its command with a tiny shell that writes its
// own pid into the group and then execs the service, so the pid the
// harness watches is the service's. CPU pinning uses taskset, which works
// the same on every kernel and is inherited by every thread and child.
//
// cgroup v1 (separate cpu and memory hierarchies) and v2 (one unified
// hierarchy) are both supported. On v2 a non-root group that holds
// processes cannot hand controllers to children ("no internal processes"),
// so when showdown runs in such a group the limits cannot be applied
// without moving it; New then says so in Applied.Notes instead of failing,
// and reports carry the note.
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Root is where cgroup hierarchies are mounted.
var Root = "/sys/fs/cgroup"

// Limits are what a plan asks for one process tree.
type Limits struct {
	// CPUs pins the tree to these CPUs, in taskset's list form ("0",
	// "0-1", "0,2"); empty leaves placement to the kernel.
	CPUs string
	// CPUQuota caps CPU time in cores (1.0 = one core's worth per
	// period, spread over any CPUs); 0 means no cap.
	CPUQuota float64
	// MemoryBytes caps resident memory; the kernel's OOM killer ends the
	// tree past it. 0 means no cap.
	MemoryBytes int64
}

// Applied records what was actually put in place, for the results.
type Applied struct {
	// Mechanism names how: "cgroup v1", "cgroup v2", "taskset", "none",
	// or a combination such as "taskset + cgroup v1".
	Mechanism   string   `json:"mechanism"`
	CPUs        string   `json:"cpus,omitempty"`
	CPUQuota    float64  `json:"cpu_quota,omitempty"`
	MemoryBytes int64    `json:"memory_bytes,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// Group is a set of cgroup directories (one per v1 hierarchy, or one v2
// directory) that a service's process tree runs in.
type Group struct {
	applied Applied
	// procs are the cgroup.procs files the wrapped command writes its pid to.
	procs []string
	// dirs were created by New and are removed by Remove, deepest last.
	dirs []string
}

// New creates a group called name (made unique with showdown's pid) with
// the given limits. Limits the machine cannot apply are recorded in
// Applied().Notes rather than returned as errors; an error means the
// request itself was invalid.
func New(name string, l Limits) (*Group, error) {
	if l.CPUQuota < 0 || l.MemoryBytes < 0 {
		return nil, fmt.Errorf("cgroup: negative limit (cpu %v, memory %d)", l.CPUQuota, l.MemoryBytes)
	}
	g := &Group{}
	var mech []string
	if l.CPUs != "" {
		if _, err := os.Stat("/usr/bin/taskset"); err == nil {
			g.applied.CPUs = l.CPUs
			mech = append(mech, "taskset")
		} else {
			g.note("CPU pinning %q not applied: taskset not found (apt-get install util-linux)", l.CPUs)
		}
	}
	if l.CPUQuota > 0 || l.MemoryBytes > 0 {
		leaf := fmt.Sprintf("showdown-%d-%s", os.Getpid(), sanitize(name))
		var err error
		if isV2() {
			err = g.makeV2(leaf, l)
			if err == nil {
				mech = append(mech, "cgroup v2")
			}
		} else {
			err = g.makeV1(leaf, l)
			if err == nil {
				mech = append(mech, "cgroup v1")
			}
		}
		if err != nil {
			_ = g.Remove()
			g.dirs, g.procs = nil, nil
			g.applied.CPUQuota, g.applied.MemoryBytes = 0, 0
			g.note("CPU quota and memory limit not applied: %v", err)
		}
	}
	if len(mech) == 0 {
		mech = []string{"none"}
	}
	g.applied.Mechanism = strings.Join(mech, " + ")
	return g, nil
}

func (g *Group) note(format string, args ...any) {
	g.applied.Notes = append(g.applied.Notes, fmt.Sprintf(format, args...))
}

// Applied returns what was put in place.
func (g *Group) Applied() Applied { return g.applied }

// Wrap returns argv prefixed so that the process joins the group and is
// pinned before the service starts. The service keeps the shell's pid
// (exec), so signals and sampling reach it directly.
func (g *Group) Wrap(argv []string) []string {
	if g == nil || (len(g.procs) == 0 && g.applied.CPUs == "") {
		return argv
	}
	var script strings.Builder
	for _, p := range g.procs {
		// Paths are built by New from sanitized names: no quotes inside.
		fmt.Fprintf(&script, "echo $$ > '%s' || exit 126; ", p)
	}
	script.WriteString(`exec "$@"`)
	out := []string{"/bin/sh", "-c", script.String(), "sh"}
	if g.applied.CPUs != "" {
		out = append(out, "/usr/bin/taskset", "-c", g.applied.CPUs)
	}
	return append(out, argv...)
}

// Remove deletes the group's directories. The processes in them must have
// exited; Remove waits briefly for the kernel to notice.
func (g *Group) Remove() error {
	if g == nil {
		return nil
	}
	var errs []error
	for i := len(g.dirs) - 1; i >= 0; i-- {
		var err error
		for try := 0; try < 20; try++ {
			if err = os.Remove(g.dirs[i]); err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	g.dirs = nil
	return errors.Join(errs...)
}

func isV2() bool {
	_, err := os.Stat(filepath.Join(Root, "cgroup.controllers"))
	return err == nil
}

// ownPaths maps each v1 controller (and "" for v2) to the path of
// showdown's own group within that hierarchy.
func ownPaths() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, sc.Err()
}

func (g *Group) makeV1(leaf string, l Limits) error {
	own, err := ownPaths()
	if err != nil {
		return err
	}
	type ctl struct {
		controller string
		files      [][2]string
	}
	var ctls []ctl
	if l.CPUQuota > 0 {
		const period = 100000 // microseconds
		ctls = append(ctls, ctl{"cpu", [][2]string{
			{"cpu.cfs_period_us", strconv.Itoa(period)},
			{"cpu.cfs_quota_us", strconv.Itoa(int(l.CPUQuota * period))},
		}})
	}
	if l.MemoryBytes > 0 {
		ctls = append(ctls, ctl{"memory", [][2]string{
			{"memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)},
		}})
	}
	for _, c := range ctls {
		base, ok := own[c.controller]
		if !ok {
			return fmt.Errorf("no cgroup v1 %s hierarchy in /proc/self/cgroup", c.controller)
		}
		dir := filepath.Join(Root, c.controller, base, leaf)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
		g.dirs = append(g.dirs, dir)
		for _, f := range c.files {
			if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0o644); err != nil {
				return fmt.Errorf("write %s: %w", filepath.Join(dir, f[0]), err)
			}
		}
		if c.controller == "memory" {
			// Without this, swap would let the tree grow past the
			// limit; it fails where swap accounting is off, which is fine.
			_ = os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(strconv.FormatInt(l.MemoryBytes, 10)), 0o644)
		}
		g.procs = append(g.procs, filepath.Join(dir, "cgroup.procs"))
	}
	g.applied.CPUQuota, g.applied.MemoryBytes = l.CPUQuota, l.MemoryBytes
	return nil
}

func (g *Group) makeV2(leaf string, l Limits) error {
	own, err := ownPaths()
	if err != nil {
		return err
	}
	base := filepath.Join(Root, own[""])
	var want []string
	if l.CPUQuota > 0 {
		want = append(want, "cpu")
	}
	if l.MemoryBytes > 0 {
		want = append(want, "memory")
	}
	sub, _ := os.ReadFile(filepath.Join(base, "cgroup.subtree_control"))
	enabled := strings.Fields(string(sub))
	for _, c := range want {
		if contains(enabled, c) {
			continue
		}
		if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+"+c), 0o644); err != nil {
			return fmt.Errorf("enable the %s controller for children of %s: %w (on cgroup v2 a group that holds processes cannot delegate controllers; run showdown in its own delegated group, e.g. systemd-run --scope -p Delegate=yes)", c, base, err)
		}
	}
	dir := filepath.Join(base, leaf)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	g.dirs = append(g.dirs, dir)
	if l.CPUQuota > 0 {
		const period = 100000
		v := fmt.Sprintf("%d %d", int(l.CPUQuota*period), period)
		if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(v), 0o644); err != nil {
			return fmt.Errorf("write cpu.max: %w", err)
		}
	}
	if l.MemoryBytes > 0 {
		v := strconv.FormatInt(l.MemoryBytes, 10)
		if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(v), 0o644); err != nil {
			return fmt.Errorf("write memory.max: %w", err)
		}
		_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0o644)
	}
	g.procs = append(g.procs, filepath.Join(dir, "cgroup.procs"))
	g.applied.CPUQuota, g.applied.MemoryBytes = l.CPUQuota, l.MemoryBytes
	return nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
