package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults of the lifecycle.
const (
	// DefaultHealthTimeout bounds WaitHealthy when given no timeout.
	DefaultHealthTimeout = 60 * time.Second
	// DefaultStopTimeout is how long Stop waits after SIGTERM before SIGKILL
	// (the contract gives a service 10 s to drain).
	DefaultStopTimeout = 15 * time.Second
	// logTailBytes is how much of a service's output is kept for errors.
	logTailBytes = 256 << 10
)

// StartOptions configures Start.
type StartOptions struct {
	// Env sets the common variables (DATABASE_URL, MYSQL_URL, DB_POOL_SIZE,
	// LOG_REQUESTS, HOST) and knob overrides; an empty value unsets a
	// variable. PORT is always set from Port.
	Env map[string]string
	// Port is the port to listen on; 0 picks a free loopback port.
	Port int
	// Log receives the service's stdout and stderr (nil discards them; the
	// tail is kept for errors either way).
	Log io.Writer
}

// Instance is a running service process and the process group it leads.
type Instance struct {
	m       *Manifest
	cmd     *exec.Cmd
	url     string
	started time.Time
	tail    *lockedTail
	tmp     string // the service's own TMPDIR, removed when it has exited

	done     chan struct{} // closed when the leader has exited
	exitCode int
	waitErr  error
	copied   chan struct{} // closed when the output pipe is drained

	stopOnce sync.Once
	stopErr  error
}

// Start starts m's run argv in its folder with exactly the common
// environment, PATH, HOME, LANG, JAVA_HOME and the knobs, in a new process
// group that dies with showdown. It returns once the process has started;
// call WaitHealthy next. If showdown itself is killed (SIGKILL, no Stop),
// the kernel kills the service process (Pdeathsig); processes it spawned
// are its own to end (node:cluster workers exit with their primary).
func Start(ctx context.Context, m *Manifest, opts StartOptions) (*Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	port := opts.Port
	if port == 0 {
		p, err := FreePort()
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", m.Name, err)
		}
		port = p
	}
	set := map[string]string{"HOST": "127.0.0.1"}
	for k, v := range opts.Env {
		set[k] = v
	}
	set["PORT"] = strconv.Itoa(port)
	// A TMPDIR of its own, removed once it has exited: what a service
	// leaves there when it is killed (Python's multiprocess metrics, a
	// crash's temporary files) does not pile up in /tmp.
	// Its name carries showdown's pid, so that a later showdown removes
	// the folders of one that was killed before it could.
	staleTmpOnce.Do(removeStaleTmp)
	tmp, err := os.MkdirTemp("", fmt.Sprintf("showdown-%d-%s-", os.Getpid(), m.Name))
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", m.Name, err)
	}
	set["TMPDIR"] = tmp
	env := m.environ(false, set)
	host := "127.0.0.1"
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOST="); ok && h != "0.0.0.0" && h != "" && h != "::" {
			host = h
		}
	}

	r, w, err := os.Pipe()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	cmd := exec.Command(lookPath(m.Run[0], m.Dir, env), m.Run[1:]...)
	cmd.Args[0] = m.Run[0]
	cmd.Dir = m.Dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = w, w
	// Setpgid: Stop reaches everything the service spawns. Pdeathsig: the
	// service dies with showdown even when showdown is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	i := &Instance{
		m:      m,
		cmd:    cmd,
		url:    "http://" + net.JoinHostPort(host, strconv.Itoa(port)),
		tail:   &lockedTail{t: newTail(logTailBytes)},
		tmp:    tmp,
		done:   make(chan struct{}),
		copied: make(chan struct{}),
	}
	i.started = time.Now()
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		os.RemoveAll(tmp)
		return nil, &StartError{Service: m.Name, Reason: err.Error(), Advice: startHint(m, err)}
	}
	out := io.Writer(i.tail)
	if opts.Log != nil {
		out = io.MultiWriter(i.tail, opts.Log)
	}
	go func() {
		defer close(i.copied)
		defer r.Close()
		_, _ = io.Copy(out, r)
	}()
	go func() {
		err := cmd.Wait()
		i.exitCode = cmd.ProcessState.ExitCode()
		if err != nil && !errors.As(err, new(*exec.ExitError)) {
			i.waitErr = err
		}
		os.RemoveAll(i.tmp)
		close(i.done)
	}()
	return i, nil
}

var staleTmpOnce sync.Once

// removeStaleTmp removes the services' TMPDIRs (showdown-PID-NAME-*) left
// by showdown processes that no longer exist: killed with SIGKILL, they
// could not remove them.
func removeStaleTmp() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "showdown-*-*-*"))
	for _, d := range dirs {
		rest, _ := strings.CutPrefix(filepath.Base(d), "showdown-")
		digits, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(digits)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}

func startHint(m *Manifest, err error) string {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		if len(m.BuildSteps) > 0 {
			return fmt.Sprintf("%s was not found: was the service built? (showdown verify --service %s builds it)", m.Run[0], m.Name)
		}
		return fmt.Sprintf("%s was not found: install it or fix run in %s", m.Run[0], m.File)
	}
	return "check run in " + m.File
}

// FreePort returns a TCP port free on the loopback interface right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("no free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartError is a service that did not start or did not become healthy.
type StartError struct {
	Service string
	Reason  string // what went wrong
	Tail    string // the last lines of the service's output
	Advice  string // what to do
}

// Error names the service and the reason, then its output's tail.
func (e *StartError) Error() string {
	msg := fmt.Sprintf("%s did not start: %s", e.Service, e.Reason)
	if e.Tail != "" {
		msg += "\nlast lines of its output:\n" + indent(e.Tail, "  | ")
	}
	return msg
}

// Hint returns the advice.
func (e *StartError) Hint() string { return e.Advice }

// URL returns the service's base URL, e.g. "http://127.0.0.1:PORT".
func (i *Instance) URL() string { return i.url }

// PID returns the process id of the service, which is also its process
// group id.
func (i *Instance) PID() int { return i.cmd.Process.Pid }

// Manifest returns the manifest the instance was started from.
func (i *Instance) Manifest() *Manifest { return i.m }

// Signal sends sig to the service process (not its group).
func (i *Instance) Signal(sig os.Signal) error {
	select {
	case <-i.done:
		return os.ErrProcessDone
	default:
	}
	return i.cmd.Process.Signal(sig)
}

// Exited returns a channel closed when the service process has exited.
func (i *Instance) Exited() <-chan struct{} { return i.done }

// Wait waits until the service process exits or ctx is done, and returns
// its exit code (-1 when killed by a signal).
func (i *Instance) Wait(ctx context.Context) (exitCode int, err error) {
	select {
	case <-i.done:
		return i.exitCode, i.waitErr
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// LogTail returns the last n lines the service wrote.
func (i *Instance) LogTail(n int) string { return i.tail.Last(n) }

// drainedTail waits briefly for the output pipe to be drained after the
// process exited, then returns the last n lines.
func (i *Instance) drainedTail(n int) string {
	select {
	case <-i.copied:
	case <-time.After(500 * time.Millisecond):
	}
	return i.LogTail(n)
}

// WaitHealthy polls GET /health until it answers 200 and returns the time
// from process start to that answer: the startup time. It fails, with the
// service's log tail, when the process exits first, when timeout (0 means
// DefaultHealthTimeout) passes, or when ctx is done.
func (i *Instance) WaitHealthy(ctx context.Context, timeout time.Duration) (startup time.Duration, err error) {
	if timeout <= 0 {
		timeout = DefaultHealthTimeout
	}
	deadline := time.Now().Add(timeout)
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
	}
	defer client.CloseIdleConnections()
	last := "no answer yet"
	wait := 20 * time.Millisecond
	for {
		select {
		case <-i.done:
			return 0, i.startError(fmt.Sprintf("it exited with code %d before /health answered 200", i.exitCode),
				"run it by hand to see why: cd "+i.m.Dir+" && "+strings.Join(i.m.Run, " "))
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, i.url+"/health", nil)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(i.started), nil
			}
			last = "last answer: " + resp.Status
			if b := strings.TrimSpace(string(body)); b != "" {
				last += " " + strings.ToValidUTF8(b[:min(len(b), 200)], "")
			}
		} else {
			last = "last error: " + err.Error()
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if time.Now().After(deadline) {
			return 0, i.startError(fmt.Sprintf("GET %s/health did not answer 200 within %s (%s)", i.url, timeout, last),
				"a service must answer GET /health with 200 once ready and its databases answer; see workloads/README.md")
		}
		select {
		case <-time.After(wait):
		case <-i.done:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		wait = min(wait*3/2, 250*time.Millisecond)
	}
}

func (i *Instance) startError(reason, hint string) error {
	return &StartError{Service: i.m.Name, Reason: reason, Tail: i.drainedTail(30), Advice: hint}
}

// Stop stops the service: SIGTERM to the service, up to timeout (0 means
// DefaultStopTimeout) for it to exit, then SIGKILL to its whole process
// group, which is killed in any case so nothing it spawned survives. It is
// idempotent; it reports an error when the service had to be killed.
func (i *Instance) Stop(timeout time.Duration) error {
	i.stopOnce.Do(func() {
		if timeout <= 0 {
			timeout = DefaultStopTimeout
		}
		pgid := i.cmd.Process.Pid
		select {
		case <-i.done:
		default:
			_ = i.cmd.Process.Signal(syscall.SIGTERM)
			t := time.NewTimer(timeout)
			select {
			case <-i.done:
				t.Stop()
			case <-t.C:
				i.stopErr = fmt.Errorf("%s did not exit within %s of SIGTERM; killed", i.m.Name, timeout)
			}
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-i.done:
		case <-time.After(10 * time.Second):
			if i.stopErr == nil {
				i.stopErr = fmt.Errorf("%s (pid %d) survived SIGKILL", i.m.Name, pgid)
			}
		}
		select {
		case <-i.copied:
		case <-time.After(2 * time.Second):
		}
		// Again, for what the processes it spawned wrote after it exited.
		os.RemoveAll(i.tmp)
	})
	return i.stopErr
}

// Processes returns the pids of the live (not zombie) processes in the
// service's process group: the service and everything it spawned.
func (i *Instance) Processes() []int { return GroupProcesses(i.cmd.Process.Pid) }

// GroupProcesses returns the pids of the live (not zombie) processes whose
// process group is pgid, read from /proc.
func GroupProcesses(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		s := string(stat)
		j := strings.LastIndexByte(s, ')')
		if j < 0 {
			continue
		}
		f := strings.Fields(s[j+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// lockedTail is a tail safe for a writer and readers at once.
type lockedTail struct {
	mu sync.Mutex
	t  *tail
}

func (l *lockedTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Write(p)
}

func (l *lockedTail) Last(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Last(n)
}
