package stack

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
)

// RevisionError is why a stack's folder at a git revision cannot be
// read: the folder is not in a repository, the revision does not exist
// there, or the folder did not exist at it. Msg names both; Hint says
// what to do.
type RevisionError struct {
	Msg, Hint string
}

func (e *RevisionError) Error() string { return e.Msg }

// Revision is a stack's folder at a git revision, materialised.
type Revision struct {
	// Dir is the copy of the folder at Commit, named as the folder is.
	Dir string
	// Commit is the full hash the revision resolved to.
	Commit string
}

// Materialise copies the stack folder at git revision rev (`git archive`
// of that folder at the commit, unpacked) into a folder of its own under
// the cache (SHOWDOWN_CACHE/revisions, else the user's cache), keyed by
// the commit and the folder: a commit's files never change, so a copy is
// made once and reused, its build cached like any stack's. No worktree
// is added to the repository, so none is left behind; the copies are
// the cache's (`rm -rf` of revisions/ reclaims them).
func Materialise(folder, rev string) (Revision, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return Revision{}, &RevisionError{Msg: fmt.Sprintf("git is not on PATH: revision %s of %s cannot be read", rev, folder), Hint: "install git, or name the folder without rev"}
	}
	if st, err := os.Stat(folder); err != nil || !st.IsDir() {
		return Revision{}, &RevisionError{Msg: fmt.Sprintf("there is no folder %s to read revision %s of", folder, rev), Hint: "path is relative to the plan's folder"}
	}
	top, err := git(folder, "rev-parse", "--show-toplevel")
	if err != nil {
		return Revision{}, &RevisionError{Msg: fmt.Sprintf("%s is not in a git repository, so it has no revision %s", folder, rev),
			Hint: "rev reads a commit of a folder tracked by git: commit the folder in a repository (git init; git add; git commit), or drop rev"}
	}
	commit, err := git(folder, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || commit == "" {
		return Revision{}, &RevisionError{Msg: fmt.Sprintf("revision %s does not exist in %s (the repository of %s)", rev, top, folder),
			Hint: fmt.Sprintf("rev takes a commit, a tag, a branch or HEAD~N: git -C %s log --oneline lists the commits", top)}
	}
	realTop, err1 := filepath.EvalSymlinks(top)
	realFolder, err2 := filepath.EvalSymlinks(folder)
	rel, err3 := filepath.Rel(realTop, realFolder)
	if err := errors.Join(err1, err2, err3); err != nil {
		return Revision{}, err
	}
	rel = filepath.ToSlash(rel)
	object := commit + ":"
	if rel != "." {
		object += rel
	}
	if kind, err := git(top, "cat-file", "-t", object); err != nil || kind != "tree" {
		return Revision{}, &RevisionError{Msg: fmt.Sprintf("%s did not exist at revision %s (%s) of %s", rel, rev, commit[:12], top),
			Hint: fmt.Sprintf("git -C %s log --oneline -- %s lists the commits that have it", top, rel)}
	}
	sum := sha256.Sum256([]byte(realTop + "\x00" + rel))
	base := filepath.Join(cacheDir(), "revisions")
	dest := filepath.Join(base, commit[:12]+"-"+hex.EncodeToString(sum[:4]))
	out := Revision{Dir: filepath.Join(dest, filepath.Base(folder)), Commit: commit}
	if _, err := os.Stat(out.Dir); err == nil {
		return out, nil // made by an earlier run: a commit's files do not change
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return Revision{}, err
	}
	tmp, err := os.MkdirTemp(base, ".tmp-")
	if err != nil {
		return Revision{}, err
	}
	defer os.RemoveAll(tmp)
	args := []string{"-C", top, "archive", "--format=tar", commit}
	if rel != "." {
		args = append(args, "--", rel)
	}
	cmd := exec.Command("git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return Revision{}, err
	}
	if err := cmd.Start(); err != nil {
		return Revision{}, err
	}
	uerr := untar(pipe, rel, filepath.Join(tmp, filepath.Base(folder)))
	_, _ = io.Copy(io.Discard, pipe)
	if err := cmd.Wait(); err != nil {
		return Revision{}, fmt.Errorf("git archive of %s at %s: %v: %s", rel, commit[:12], err, strings.TrimSpace(stderr.String()))
	}
	if uerr != nil {
		return Revision{}, fmt.Errorf("unpacking %s at %s: %w", rel, commit[:12], uerr)
	}
	if err := os.Rename(tmp, dest); err != nil {
		if _, serr := os.Stat(out.Dir); serr == nil {
			return out, nil // another run made it meanwhile
		}
		return Revision{}, err
	}
	return out, nil
}

// untar writes the entries of a tar stream under prefix (a folder of the
// repository, "." for all) into dir, without the prefix.
func untar(r io.Reader, prefix, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(h.Name, "/")
		if prefix != "." {
			if name == prefix {
				continue
			}
			var ok bool
			if name, ok = strings.CutPrefix(name, prefix+"/"); !ok {
				continue
			}
		}
		to := filepath.Join(dir, filepath.FromSlash(name))
		if !strings.HasPrefix(to, dir+string(filepath.Separator)) {
			return fmt.Errorf("entry %q leaves the folder", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(to, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, to)
		case tar.TypeReg:
			var f *os.File
			if f, err = os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777|0o600); err == nil {
				_, err = io.Copy(f, tr)
				err = errors.Join(err, f.Close())
			}
		}
		if err != nil {
			return err
		}
	}
}

// git runs git in dir and returns its output, trimmed.
func git(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}

// cacheDir is showdown's cache: SHOWDOWN_CACHE, else the user's cache
// folder's showdown/ (where builds keep their stamps too).
func cacheDir() string {
	if d := os.Getenv("SHOWDOWN_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "showdown")
	}
	return filepath.Join(os.TempDir(), "showdown-cache")
}

// Discover returns the stacks a resolved plan runs: those under root's
// services/, those it names by folder, and its arms at a revision from
// their copies (Implementation.RevDir), each under its arm's name.
func Discover(root string, p *plan.Plan) ([]*service.Manifest, error) {
	ms, err := service.Discover(root, p.Folders()...)
	if err != nil {
		return ms, err
	}
	for _, im := range p.Implementations {
		if im.Rev == "" || slices.ContainsFunc(ms, func(m *service.Manifest) bool { return m.Name == im.Service }) {
			continue
		}
		m, err := service.LoadAs(im.RevDir, im.Service)
		if err != nil {
			return ms, fmt.Errorf("%s (revision %s of %s): %w", im.Service, im.Rev, im.RevDir, err)
		}
		ms = append(ms, m)
	}
	return ms, nil
}
