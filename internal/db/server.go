package db

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// testHook, when set by a test, is called at each phase of a start
// ("init", "spawned", "ready") with the pid of the process just started.
var testHook func(phase string, pid int)

func hook(phase string, pid int) {
	if testHook != nil {
		testHook(phase, pid)
	}
}

// server is one database server process in a private directory: the part
// PostgreSQL and MariaDB share.
type server struct {
	engine   string // "PostgreSQL" or "MariaDB", for messages
	o        options
	dir      string // the private directory, removed by stop
	logPath  string // the server's log, inside dir
	cred     *syscall.Credential
	stopSig  syscall.Signal                    // clean shutdown signal
	command  func(port int) (string, []string) // binary and arguments for a port
	ready    func(ctx context.Context, port int) error
	bindFail []string // log fragments that mean the port was taken
	sockets  []string // Unix sockets the server creates, made 0700 once it answers

	mu      sync.Mutex
	port    int
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd has exited
	removed bool
}

// The lifecycle of a server, which Postgres and MariaDB embed: one
// owner, where each engine had its own copy forwarding to the server.

// Port is the server's TCP port on 127.0.0.1; it stays the same across
// Down and Up.
func (s *server) Port() int { return s.getPort() }

// Dir is the server's private directory (data, socket, log).
func (s *server) Dir() string { return s.dir }

// PID is the server's main process (PostgreSQL's postmaster, whose
// children are the backends; mariadbd), or 0 while down.
func (s *server) PID() int { return s.pid() }

// Down stops the server (PostgreSQL's fast shutdown, MariaDB's normal
// one) but keeps its data and port, for outage tests.
func (s *server) Down(ctx context.Context) error { return s.down() }

// Up starts the server again on the same port and waits until it answers.
func (s *server) Up(ctx context.Context) error { return s.up(ctx) }

// Restart is Down then Up.
func (s *server) Restart(ctx context.Context) error {
	if err := s.down(); err != nil {
		return err
	}
	return s.up(ctx)
}

// Crash kills the server with SIGKILL (PostgreSQL's postmaster and then
// its backends, as a host crash would) and keeps data and port; Up starts
// it again and the engine recovers from its log (PostgreSQL's write-ahead
// log, InnoDB's redo log).
func (s *server) Crash() error { return s.crash() }

// runAs returns the credential to run a server as when showdown is root
// (the named system user), or nil when showdown is not root.
func runAs(name string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, &MissingError{
			What:    fmt.Sprintf("system user %q (running as root, showdown runs the database as %s)", name, name),
			Looked:  "the user database",
			Install: "useradd --system --user-group --no-create-home " + name + " (or run showdown as an ordinary user)",
		}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// privatePrefixes name the private directories of both engines.
var privatePrefixes = []string{"showdown-pg-", "showdown-mariadb-"}

// ownerFile, inside a private directory, names the process that made it:
// "PID START", START being field 22 of /proc/PID/stat.
const ownerFile = "owner"

// begin makes a new server's two passwords, the service's and the
// harness's own, and its private directory (makeDir with prefix): the
// first steps of StartPostgres and StartMariaDB, which defer stopUnless
// before it so that a start that fails leaves nothing behind.
func (s *server) begin(prefix string) (service, admin string, err error) {
	if service, err = secret(); err != nil {
		return "", "", err
	}
	if admin, err = secret(); err != nil {
		return "", "", err
	}
	return service, admin, s.makeDir(prefix)
}

// stopUnless stops the server and removes its directory unless started.
func (s *server) stopUnless(started *bool) {
	if !*started {
		_ = s.stop()
	}
}

// makeDir removes what crashed runs left under parent (removeStale), then
// creates the private directory there, owned by cred's user, and records
// this process as its owner.
func (s *server) makeDir(prefix string) error {
	for _, d := range removeStale(s.o.parent) {
		if s.o.log != nil {
			fmt.Fprintf(s.o.log, "showdown: removed %s, left behind by a run that is gone\n", d)
		}
	}
	dir, err := os.MkdirTemp(s.o.parent, prefix)
	if err != nil {
		return fmt.Errorf("%s: create directory: %w", s.engine, err)
	}
	s.dir = dir
	s.logPath = filepath.Join(dir, "server.log")
	start, _ := startTime(os.Getpid())
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(fmt.Sprintf("%d %s\n", os.Getpid(), start)), 0o600); err != nil {
		return fmt.Errorf("%s: %w", s.engine, err)
	}
	if err := s.own(dir); err != nil {
		return err
	}
	if s.cred != nil {
		// The server's user must reach the directory through its parents.
		for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
			st, err := os.Stat(p)
			if err == nil && !traversable(st, s.cred) {
				return fmt.Errorf("%s: directory %s is not traversable by uid %d (mode %v); choose another parent (WithDir)",
					s.engine, p, s.cred.Uid, st.Mode().Perm())
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	return nil
}

// removeStale removes the private directories under parent whose owner
// process is gone (a run that crashed or was killed: its servers died with
// it, its directory stayed) and returns them. It keeps a directory whose
// owner lives, one with no owner file (being made right now, or by an
// older showdown) and one that a running process still names.
func removeStale(parent string) []string {
	var removed []string
	for _, prefix := range privatePrefixes {
		dirs, _ := filepath.Glob(filepath.Join(parent, prefix+"*"))
		for _, d := range dirs {
			b, err := os.ReadFile(filepath.Join(d, ownerFile))
			if err != nil {
				continue
			}
			var owner proc
			if n, _ := fmt.Sscanf(string(b), "%d %s", &owner.pid, &owner.start); n != 2 || owner.pid <= 0 || owner.alive() {
				continue
			}
			if len(processesNaming(d+string(filepath.Separator))) > 0 {
				continue
			}
			if os.RemoveAll(d) == nil {
				removed = append(removed, d)
			}
		}
	}
	return removed
}

// processesNaming lists the pids whose command line contains s.
func processesNaming(s string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// traversable reports whether the user of cred may pass through directory st.
func traversable(st os.FileInfo, cred *syscall.Credential) bool {
	perm := st.Mode().Perm()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		switch {
		case sys.Uid == cred.Uid:
			return perm&0o100 != 0
		case sys.Gid == cred.Gid:
			return perm&0o010 != 0
		}
	}
	return perm&0o001 != 0
}

// own gives path to the server's user when running as root.
func (s *server) own(path string) error {
	if s.cred == nil {
		return nil
	}
	if err := os.Chown(path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
		return fmt.Errorf("%s: chown %s: %w", s.engine, path, err)
	}
	return nil
}

// writeFile writes a file in the private directory, readable by the server.
func (s *server) writeFile(name, content string) (string, error) {
	p := filepath.Join(s.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		return "", err
	}
	return p, s.own(p)
}

// procAttr puts a child in its own process group, kills it when showdown
// dies and runs it as the server's user.
func (s *server) procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}
}

func (s *server) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "LANG=C", "TZ=UTC", "HOME=" + s.dir}
}

// run runs a one-shot tool (initdb, mariadb-install-db) to completion; if
// ctx ends first its whole process group is killed.
func (s *server) run(ctx context.Context, bin string, args ...string) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = s.dir
	cmd.Env = s.env()
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = s.procAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := spawn(cmd); err != nil {
		return fmt.Errorf("%s: %s: %w", s.engine, filepath.Base(bin), err)
	}
	hook("init", cmd.Process.Pid)
	err := cmd.Wait()
	// Whatever happened, leave nothing of that group behind.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %s: %w", s.engine, filepath.Base(bin), ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("%s: %s failed: %w\n%s", s.engine, filepath.Base(bin), err, tail(out.Bytes(), 2000))
	}
	return nil
}

// spawn starts cmd from one OS thread that lives as long as showdown.
// Subtleness ahead: Linux sends Pdeathsig when the *thread* that forked the
// child exits, not the process, and Go may end a thread (one a goroutine
// locked and never unlocked). Forking from a thread locked for good means
// the signal comes only when showdown itself dies.
func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread stays
			for r := range spawnCh {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawnCh <- spawnReq{cmd, done}
	return <-done
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnReq
)

// proc names one process by pid and start time, so that a pid reused by
// another process is never mistaken for it.
type proc struct {
	pid   int
	start string
}

// startTime is field 22 of /proc/pid/stat, "" if pid does not exist.
func startTime(pid int) (start string, ppid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return "", 0
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[19], ppid
}

// children lists the processes whose parent is pid.
func children(pid int) []proc {
	var out []proc
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ppid := startTime(c); ppid == pid && st != "" {
			out = append(out, proc{c, st})
		}
	}
	return out
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// alive reports whether the same process still exists.
func (p proc) alive() bool {
	st, _ := startTime(p.pid)
	return st != "" && st == p.start
}

// kill sends SIGKILL to the process if it is still the same one.
func (p proc) kill() {
	if p.alive() {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

// secret returns a new random password: 24 characters of the URL-safe
// base64 alphabet, so it needs no quoting in a URL, a DSN or SQL.
func secret() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// freePort returns a loopback TCP port nobody listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startFresh starts the server on a free port, trying another one when
// someone takes the chosen port between choosing and binding.
func (s *server) startFresh(ctx context.Context) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var port int
		if port, err = freePort(); err != nil {
			return fmt.Errorf("%s: find a free port: %w", s.engine, err)
		}
		s.mu.Lock()
		s.port = port
		s.mu.Unlock()
		if err = s.up(ctx); err == nil || !s.portTaken() {
			return err
		}
	}
	return err
}

// portTaken reports whether the log says the last start could not bind.
func (s *server) portTaken() bool {
	b, _ := os.ReadFile(s.logPath)
	b = []byte(tail(b, 4000))
	for _, f := range s.bindFail {
		if bytes.Contains(b, []byte(f)) {
			return true
		}
	}
	return false
}

// up starts the server process on s.port and waits until it answers.
func (s *server) up(ctx context.Context) error {
	s.mu.Lock()
	if s.removed {
		s.mu.Unlock()
		return fmt.Errorf("%s: already stopped and removed", s.engine)
	}
	s.reapLocked()
	if s.cmd != nil {
		s.mu.Unlock()
		return nil // already up
	}
	port := s.port
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("%s: open log: %w", s.engine, err)
	}
	bin, args := s.command(port)
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.dir
	cmd.Env = s.env()
	var w io.Writer = logf
	if s.o.log != nil {
		w = io.MultiWriter(logf, s.o.log)
		// Backends inherit the pipe; do not wait on them forever.
		cmd.WaitDelay = 2 * time.Second
	}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = s.procAttr()
	if err := spawn(cmd); err != nil {
		logf.Close()
		s.mu.Unlock()
		return fmt.Errorf("%s: start %s: %w", s.engine, bin, err)
	}
	done := make(chan struct{})
	s.cmd, s.done = cmd, done
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
	s.mu.Unlock()
	hook("spawned", cmd.Process.Pid)

	if err := s.waitReady(ctx, port, done); err != nil {
		_ = s.down()
		return err
	}
	for _, sock := range s.sockets {
		if err := os.Chmod(sock, 0o700); err != nil {
			_ = s.down()
			return fmt.Errorf("%s: socket: %w", s.engine, err)
		}
	}
	hook("ready", cmd.Process.Pid)
	return nil
}

// waitReady polls a real connection until the server answers, the process
// exits, ctx ends or the start timeout passes.
func (s *server) waitReady(ctx context.Context, port int, done <-chan struct{}) error {
	deadline := time.Now().Add(s.o.startTimeout)
	var last error
	for {
		select {
		case <-done:
			return fmt.Errorf("%s exited while starting on port %d; log %s ends with:\n%s", s.engine, port, s.logPath, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("%s: start cancelled: %w", s.engine, ctx.Err())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer on port %d within %v (last error: %v); log %s ends with:\n%s",
				s.engine, port, s.o.startTimeout, last, s.logPath, s.logTail())
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = s.ready(pctx, port)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-done:
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// down stops the server process (clean shutdown, then SIGKILL to its whole
// process group after DefaultStopTimeout) and keeps its directory.
func (s *server) down() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd, s.done = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	pid := cmd.Process.Pid
	// A paused server (Pause) handles no signal but SIGKILL until thawed.
	_ = syscall.Kill(pid, syscall.SIGCONT)
	for _, k := range children(pid) {
		_ = syscall.Kill(k.pid, syscall.SIGCONT)
	}
	_ = syscall.Kill(pid, s.stopSig)
	var err error
	select {
	case <-done:
	case <-time.After(DefaultStopTimeout):
		err = fmt.Errorf("%s (pid %d) did not shut down within %v; killed", s.engine, pid, DefaultStopTimeout)
		// PostgreSQL's backends run in sessions of their own: the
		// postmaster's group does not hold them, so kill them one by one.
		kids := children(pid)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		for _, k := range kids {
			k.kill()
		}
		<-done
	}
	// Whatever is left of the group goes with it.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return err
}

// crash kills the server process with SIGKILL, then whatever it had
// started (PostgreSQL's backends, in sessions of their own, would outlive
// their postmaster and keep the shared memory a new one needs), and keeps
// the directory and port for up.
func (s *server) crash() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd, s.done = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("%s is not running", s.engine)
	}
	pid := cmd.Process.Pid
	// Stopped, the postmaster forks no backend between the list of its
	// children and the kill (orphans would be reparented, out of reach,
	// and keep the shared memory a new server refuses to share).
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	kids := children(pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	for _, k := range kids {
		k.kill()
	}
	<-done
	for deadline := time.Now().Add(DefaultStopTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		left := 0
		for _, k := range kids {
			if k.alive() && !zombie(k.pid) {
				left++
			}
		}
		if left == 0 {
			return nil
		}
	}
	return fmt.Errorf("%s: processes of pid %d outlived SIGKILL", s.engine, pid)
}

// stop stops the server and removes its directory; later calls do nothing.
func (s *server) stop() error {
	err := s.down()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed || s.dir == "" {
		s.removed = true
		return err
	}
	s.removed = true
	if rerr := os.RemoveAll(s.dir); rerr != nil && err == nil {
		err = fmt.Errorf("%s: remove %s: %w", s.engine, s.dir, rerr)
	}
	return err
}

// reapLocked forgets a server process that died on its own (a crash, a
// kill from outside), killing what is left of its group, so that pid
// reports 0 and up starts it again. s.mu must be held.
func (s *server) reapLocked() {
	if s.cmd == nil {
		return
	}
	select {
	case <-s.done:
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		s.cmd, s.done = nil, nil
	default:
	}
}

func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *server) getPort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

func (s *server) logTail() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return tail(b, 3000)
}

// tail returns the last n bytes of b, from a line start when possible.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), "\n")
}

// lookPath finds the first of names on PATH, then in dirs.
func lookPath(names []string, dirs []string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	for _, d := range dirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", errors.New("not found")
}
