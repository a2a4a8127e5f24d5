package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/showdownlab/showdown/internal/located"
)

// BuildResult says what a build did.
type BuildResult struct {
	// Cached is true when the sources and build steps had not changed since
	// the last successful build, so nothing ran.
	Cached bool
	// Duration is how long the build steps took (near zero when cached).
	Duration time.Duration
	// ArtifactBytes is the size of the artifact (a file, or a folder's
	// files summed); 0 when the manifest names none.
	ArtifactBytes int64
}

// BuildError is a failed build step, with the tail of its output.
type BuildError struct {
	Service string
	Step    []string
	Err     error
	Tail    string
	// Dir is the service folder the step ran in.
	Dir string
	// At locates the step in the manifest (file, line, field such as
	// "build[1]").
	At located.Error
}

// Error names the step in the manifest, the service and the cause, then
// the output's tail.
func (e *BuildError) Error() string {
	at := e.At
	at.Msg = fmt.Sprintf("build of %s failed: %s: %v", e.Service, strings.Join(e.Step, " "), e.Err)
	msg := at.Msg
	if at.File != "" {
		msg = at.Error()
	}
	if e.Tail != "" {
		msg += "\n" + indent(e.Tail, "  | ")
	}
	return msg
}

// Unwrap returns the cause.
func (e *BuildError) Unwrap() error { return e.Err }

// Hint says how to reproduce the failure by hand.
func (e *BuildError) Hint() string {
	var ee *exec.Error
	if errors.As(e.Err, &ee) {
		return fmt.Sprintf("%s is not installed or not on PATH; install it (see scripts/setup.sh)", e.Step[0])
	}
	dir := e.Dir
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, dir); err == nil && !strings.HasPrefix(rel, "..") {
			dir = rel
		}
	}
	return fmt.Sprintf("reproduce it with: cd %s && %s", dir, strings.Join(e.Step, " "))
}

// stampDir is where build stamps live, outside the source tree so a build
// leaves no stray files in the checkout.
func stampDir() string {
	if d := os.Getenv("SHOWDOWN_CACHE"); d != "" {
		return filepath.Join(d, "build")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "showdown", "build")
	}
	return filepath.Join(os.TempDir(), "showdown-cache", "build")
}

// stampFile is the stamp of m: one per service folder.
func (m *Manifest) stampFile() string {
	sum := sha256.Sum256([]byte(m.Dir))
	return filepath.Join(stampDir(), m.Name+"-"+hex.EncodeToString(sum[:6])+".stamp")
}

// SourceHash hashes the build steps and the names and contents of every
// file the source globs match, in a stable order.
func (m *Manifest) SourceHash() (string, error) {
	h := sha256.New()
	for _, step := range m.BuildSteps {
		fmt.Fprintf(h, "step %q\n", step)
	}
	files, err := m.sourceFiles()
	if err != nil {
		return "", err
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(m.Dir, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %q %d\n", f, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sourceFiles lists the files (slash paths relative to Dir) the source
// globs match; a glob matching a folder takes every file below it.
func (m *Manifest) sourceFiles() ([]string, error) {
	set := map[string]bool{}
	for _, g := range m.Sources {
		g = path.Clean(filepath.ToSlash(g))
		// Walk only below the glob's literal prefix, so "src/**/*.java"
		// never descends into node_modules or target.
		base := g
		for strings.ContainsAny(base, "*?[") {
			base = path.Dir(base)
		}
		start := filepath.Join(m.Dir, filepath.FromSlash(base))
		if _, err := os.Stat(start); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(m.Dir, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel != "." && !m.descend(g, rel) {
					return fs.SkipDir
				}
				return nil
			}
			if globMatch(g, rel) || underMatch(g, rel) {
				set[rel] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	files := make([]string, 0, len(set))
	for f := range set {
		files = append(files, f)
	}
	sort.Strings(files)
	return files, nil
}

// descend reports whether folder rel may hold files matching g. Build
// outputs, dependencies and VCS folders are skipped unless g names them.
func (m *Manifest) descend(g, rel string) bool {
	name := path.Base(rel)
	if (name == "node_modules" || name == ".git" || (m.Artifact != "" && rel == path.Clean(filepath.ToSlash(m.Artifact)))) &&
		!strings.Contains(g, name) {
		return false
	}
	gs, rs := strings.Split(g, "/"), strings.Split(rel, "/")
	for i, r := range rs {
		if i >= len(gs) {
			return true // below a folder the glob matched as a whole
		}
		if gs[i] == "**" {
			return true
		}
		if ok, _ := path.Match(gs[i], r); !ok {
			return false
		}
	}
	return true
}

// underMatch reports whether some parent folder of rel matches g (a glob
// naming a folder takes its whole tree).
func underMatch(g, rel string) bool {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if globMatch(g, d) {
			return true
		}
	}
	return false
}

// globMatch matches a slash path against a glob where "**" is any number of
// path segments (including none) and other patterns follow path.Match.
func globMatch(g, name string) bool {
	return matchSegs(strings.Split(g, "/"), strings.Split(name, "/"))
}

func matchSegs(gs, ns []string) bool {
	for len(gs) > 0 {
		if gs[0] == "**" {
			for i := 0; i <= len(ns); i++ {
				if matchSegs(gs[1:], ns[i:]) {
					return true
				}
			}
			return false
		}
		if len(ns) == 0 {
			return false
		}
		if ok, _ := path.Match(gs[0], ns[0]); !ok {
			return false
		}
		gs, ns = gs[1:], ns[1:]
	}
	return len(ns) == 0
}

// Cached reports whether a build would be skipped: the stamp holds the
// current source hash and the artifact exists.
func (m *Manifest) Cached() bool {
	hash, err := m.SourceHash()
	if err != nil {
		return false
	}
	return m.cached(hash)
}

func (m *Manifest) cached(hash string) bool {
	stamp, err := os.ReadFile(m.stampFile())
	if err != nil || strings.TrimSpace(string(stamp)) != hash {
		return false
	}
	if m.Artifact != "" {
		if _, err := os.Stat(filepath.Join(m.Dir, m.Artifact)); err != nil {
			return false
		}
	}
	return true
}

// PrebuiltEnv, set to 1, makes Build use a service's artifact as it is,
// unbuilt and unchecked against its sources, and fail where there is none:
// for a machine without the toolchains that runs artifacts built and
// carried from another.
const PrebuiltEnv = "SHOWDOWN_PREBUILT"

// Build runs the build steps in Dir, writing their output to log (may be
// nil). It skips them when the sources and steps hash to the stamp of the
// last successful build and the artifact is still there; with PrebuiltEnv
// it runs none.
func (m *Manifest) Build(ctx context.Context, log io.Writer) (BuildResult, error) {
	var res BuildResult
	// Two showdown processes building one folder at once would corrupt
	// its artifact (a half-written jar): builds of a folder take turns.
	unlock, err := m.lockBuild(ctx)
	if err != nil {
		return res, err
	}
	defer unlock()
	if os.Getenv(PrebuiltEnv) == "1" && m.Artifact != "" {
		// A machine without the toolchains (a lent benchmark machine) runs
		// what was built elsewhere and carried here.
		if _, err := os.Stat(filepath.Join(m.Dir, m.Artifact)); err != nil {
			return res, hintError{fmt.Errorf("%s=1 and %s has no artifact %s", PrebuiltEnv, m.Name, m.Artifact),
				"build it where its toolchain is (showdown verify --service " + m.Name + ") and carry " + filepath.Join(m.Dir, m.Artifact)}
		}
		res.Cached = true
		res.ArtifactBytes = m.ArtifactBytes()
		return res, nil
	}
	hash, err := m.SourceHash()
	if err != nil {
		return res, fmt.Errorf("build of %s: hashing sources: %w", m.Name, err)
	}
	if m.cached(hash) {
		res.Cached = true
		res.ArtifactBytes = m.ArtifactBytes()
		return res, nil
	}
	if log == nil {
		log = io.Discard
	}
	start := time.Now()
	if err := m.runSteps(ctx, log, "build", m.BuildSteps); err != nil {
		return res, err
	}
	res.Duration = time.Since(start)
	if m.Artifact != "" {
		if _, err := os.Stat(filepath.Join(m.Dir, m.Artifact)); err != nil {
			return res, hintError{fmt.Errorf("build of %s succeeded but its artifact %s is missing", m.Name, m.Artifact),
				"fix the manifest's artifact or build steps in " + m.File}
		}
	}
	res.ArtifactBytes = m.ArtifactBytes()
	if err := os.MkdirAll(stampDir(), 0o755); err == nil {
		_ = os.WriteFile(m.stampFile(), []byte(hash+"\n"), 0o644)
	}
	return res, nil
}

// BuildImageInputs runs the manifest's image_build steps in the service
// folder (after Build, which it does not run): what the image recipe
// copies beyond the build's own output. Nothing is cached here; the steps'
// tools keep their own caches.
func (m *Manifest) BuildImageInputs(ctx context.Context, log io.Writer) error {
	if len(m.ImageSteps) == 0 {
		return nil
	}
	unlock, err := m.lockBuild(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if log == nil {
		log = io.Discard
	}
	return m.runSteps(ctx, log, "image_build", m.ImageSteps)
}

// runSteps runs each argv of steps in the service folder with the build
// environment, stopping at the first that fails.
func (m *Manifest) runSteps(ctx context.Context, log io.Writer, field string, steps [][]string) error {
	env := m.environ(true, nil)
	for i, step := range steps {
		tail := newTail(64 << 10)
		w := io.MultiWriter(log, tail)
		cmd := exec.CommandContext(ctx, step[0], step[1:]...)
		cmd.Dir = m.Dir
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = w, w
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		// On cancellation kill the whole group: mvn and npm spawn children.
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			f := fmt.Sprintf("%s[%d]", field, i)
			return &BuildError{Service: m.Name, Step: step, Err: err, Tail: tail.Last(30), Dir: m.Dir,
				At: located.Error{File: m.File, Line: m.lines[f], Field: f}}
		}
	}
	return nil
}

// lockBuild takes an exclusive flock on the service folder itself,
// waiting for another build of the same folder to finish: every process
// building it takes turns, whatever its cache, and no lock file is left.
func (m *Manifest) lockBuild(ctx context.Context) (unlock func(), err error) {
	f, err := os.Open(m.Dir)
	if err != nil {
		return nil, fmt.Errorf("build of %s: %w", m.Name, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("build of %s: lock: %w", m.Name, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ArtifactBytes returns the artifact's size: a file's size, or the sum of
// the files in a folder; 0 when there is none.
func (m *Manifest) ArtifactBytes() int64 {
	if m.Artifact == "" {
		return 0
	}
	var n int64
	_ = filepath.WalkDir(filepath.Join(m.Dir, m.Artifact), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	buf []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// Last returns the last n lines.
func (t *tail) Last(n int) string {
	return lastLines(t.buf, n)
}

// maxTailLine is the longest line a log tail shows in full.
const maxTailLine = 500

func lastLines(b []byte, n int) string {
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	// A stack trace logged as one JSON line would drown the rest.
	for i, l := range lines {
		if len(l) > maxTailLine {
			lines[i] = strings.ToValidUTF8(l[:maxTailLine], "") + fmt.Sprintf("... (%d bytes)", len(l))
		}
	}
	return strings.Join(lines, "\n")
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
