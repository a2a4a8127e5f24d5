// Package images builds a container image per implementation and one for
// showdown itself, with COPY-only Containerfiles (images/), so they build
// where no container can run: static binaries on scratch, everything else
// on a minimal Debian file system made locally and imported.
package images

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/service"
)

// Defaults of a Builder.
const (
	// DefaultRegistry and DefaultTag name images REGISTRY/NAME:TAG, as
	// showdown k8s expects them.
	DefaultRegistry = "localhost/showdown"
	DefaultTag      = "latest"
	// DefaultSuite is the Debian release of the base file system.
	DefaultSuite = "bookworm"
	// ShowdownImage is the name of showdown's own image.
	ShowdownImage = "showdown"
)

// jlinkModules are the JDK modules a Spring Boot service on Tomcat with
// JDBC, JMX metrics and TLS needs; the rest of the JDK stays out.
var jlinkModules = []string{"java.base", "java.compiler", "java.desktop", "java.instrument", "java.logging", "java.management",
	"java.naming", "java.net.http", "java.prefs", "java.rmi", "java.scripting", "java.security.jgss", "java.sql",
	"java.xml", "jdk.crypto.ec", "jdk.jfr", "jdk.management", "jdk.net", "jdk.unsupported", "jdk.zipfs"}

// Tool is the image builder found on this machine.
type Tool struct {
	Name string // podman, buildah or docker
	Path string
}

// FindTool returns the first of podman, buildah and docker on PATH.
func FindTool() (Tool, error) {
	for _, n := range []string{"podman", "buildah", "docker"} {
		if p, err := exec.LookPath(n); err == nil {
			return Tool{Name: n, Path: p}, nil
		}
	}
	return Tool{}, errors.New("none of podman, buildah or docker is installed (hint: apt-get install podman, or bash scripts/setup.sh)")
}

func (t Tool) cmd(ctx context.Context, log io.Writer, args ...string) error {
	c := exec.CommandContext(ctx, t.Path, args...)
	var tail bytes.Buffer
	w := io.Writer(&tail)
	if log != nil {
		w = io.MultiWriter(log, &tail)
	}
	c.Stdout, c.Stderr = w, w
	if err := c.Run(); err != nil {
		out := tail.String()
		if len(out) > 2000 {
			out = "..." + out[len(out)-2000:]
		}
		return fmt.Errorf("%s %s: %w\n%s", t.Name, strings.Join(args, " "), err, out)
	}
	return nil
}

// Build builds the image ref from containerfile with context dir.
func (t Tool) Build(ctx context.Context, log io.Writer, containerfile, dir, ref string, args map[string]string) error {
	a := []string{"build"}
	if t.Name == "buildah" {
		a = []string{"bud"}
	}
	a = append(a, "-f", containerfile, "-t", ref)
	for k, v := range args {
		a = append(a, "--build-arg", k+"="+v)
	}
	return t.cmd(ctx, log, append(a, dir)...)
}

// Exists reports whether the image ref is in local storage.
func (t Tool) Exists(ctx context.Context, ref string) bool {
	args := []string{"image", "exists", ref}
	if t.Name != "podman" {
		args = []string{"image", "inspect", ref}
		if t.Name == "buildah" {
			args = []string{"inspect", "--type", "image", ref}
		}
	}
	return exec.CommandContext(ctx, t.Path, args...).Run() == nil
}

// Import makes an image of a root file system tarball.
func (t Tool) Import(ctx context.Context, log io.Writer, tarball, ref string) error {
	if t.Name == "buildah" {
		return errors.New("buildah cannot import a tarball; install podman")
	}
	return t.cmd(ctx, log, "import", tarball, ref)
}

// Push copies ref to dest (a registry reference).
func (t Tool) Push(ctx context.Context, log io.Writer, ref, dest string) error {
	if t.Name == "docker" {
		if err := t.cmd(ctx, log, "tag", ref, dest); err != nil {
			return err
		}
		return t.cmd(ctx, log, "push", dest)
	}
	return t.cmd(ctx, log, "push", ref, dest)
}

// Info is what an image's inspection says.
type Info struct {
	Size       int64
	Entrypoint []string
	User       string
	Env        []string
}

// Inspect reads an image's size, entrypoint and user.
func (t Tool) Inspect(ctx context.Context, ref string) (Info, error) {
	args := []string{"image", "inspect", ref}
	if t.Name == "buildah" {
		args = []string{"inspect", "--type", "image", ref}
	}
	out, err := exec.CommandContext(ctx, t.Path, args...).Output()
	if err != nil {
		return Info{}, fmt.Errorf("%s %s: %w", t.Name, strings.Join(args, " "), err)
	}
	if t.Name == "buildah" {
		var b struct {
			OCIv1 struct {
				Config struct {
					Entrypoint []string
					User       string
					Env        []string
				} `json:"config"`
			}
		}
		err := json.Unmarshal(out, &b)
		c := b.OCIv1.Config
		return Info{Entrypoint: c.Entrypoint, User: c.User, Env: c.Env}, err
	}
	var list []struct {
		Size   int64
		Config struct {
			Entrypoint []string
			User       string
			Env        []string
		}
	}
	if err := json.Unmarshal(out, &list); err != nil || len(list) != 1 {
		return Info{}, fmt.Errorf("%s image inspect %s: unexpected output (%v)", t.Name, ref, err)
	}
	c := list[0].Config
	return Info{Size: list[0].Size, Entrypoint: c.Entrypoint, User: c.User, Env: c.Env}, nil
}

// Image is one built image.
type Image struct {
	Name          string   `json:"name"`
	Ref           string   `json:"ref"`
	Recipe        string   `json:"recipe"`
	Bytes         int64    `json:"image_bytes"`
	ArtifactBytes int64    `json:"artifact_bytes"`
	Entrypoint    []string `json:"entrypoint"`
	User          string   `json:"user"`
	Seconds       float64  `json:"build_seconds"`
	Pushed        string   `json:"pushed,omitempty"`
}

// Builder builds images from a showdown source tree.
type Builder struct {
	Root          string // the repository root
	Tool          Tool
	Registry, Tag string
	// Log receives the tools' output; nil discards it.
	Log io.Writer
	// Suite is the Debian release of the base (DefaultSuite).
	Suite string
}

// Ref is the local reference of image name.
func (b *Builder) Ref(name string) string {
	reg, tag := b.Registry, b.Tag
	if reg == "" {
		reg = DefaultRegistry
	}
	if tag == "" {
		tag = DefaultTag
	}
	return strings.TrimSuffix(reg, "/") + "/" + name + ":" + tag
}

// BaseRef is the local reference of the Debian base image.
func (b *Builder) BaseRef() string {
	return strings.TrimSuffix(DefaultRegistry, "/") + "/base:" + b.suite()
}

func (b *Builder) suite() string {
	if b.Suite == "" {
		return DefaultSuite
	}
	return b.Suite
}

func (b *Builder) log() io.Writer {
	if b.Log == nil {
		return io.Discard
	}
	return b.Log
}

// Recipe names how an implementation's image is made: "static" (a Go
// binary on scratch), "java" (jlinked runtime on the Debian base) or
// "node" (node and the service's files on the Debian base).
func Recipe(m *service.Manifest) (string, error) {
	switch m.Language {
	case "go":
		return "static", nil
	case "java":
		return "java", nil
	case "javascript", "typescript":
		return "node", nil
	}
	return "", fmt.Errorf("%s: no image recipe for language %q (known: go, java, javascript)", m.Name, m.Language)
}

// Build builds the image of one implementation, or of showdown when m is
// nil, and inspects it.
func (b *Builder) Build(ctx context.Context, m *service.Manifest) (*Image, error) {
	t0 := time.Now()
	stage, err := os.MkdirTemp("", "showdown-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	img := &Image{Name: ShowdownImage, Recipe: "showdown"}
	if m != nil {
		img.Name = m.Name
		if img.Recipe, err = Recipe(m); err != nil {
			return nil, err
		}
	}
	img.Ref = b.Ref(img.Name)
	args := map[string]string{}
	switch img.Recipe {
	case "showdown":
		err = b.goBuild(ctx, b.Root, "./cmd/showdown", filepath.Join(stage, "showdown"))
		if err == nil {
			img.ArtifactBytes = size(filepath.Join(stage, "showdown"))
			err = copyTree(filepath.Join(b.Root, "workloads"), filepath.Join(stage, "workloads"), func(p string) bool { return !strings.HasSuffix(p, ".go") })
		}
	case "static":
		err = b.goBuild(ctx, m.Dir, ".", filepath.Join(stage, "server"))
		img.ArtifactBytes = size(filepath.Join(stage, "server"))
	case "java":
		err = b.stageJava(ctx, m, stage)
		img.ArtifactBytes = treeSize(filepath.Join(stage, "app"))
	case "node":
		err = b.stageNode(ctx, m, stage)
		img.ArtifactBytes = treeSize(filepath.Join(stage, "app"))
	}
	if err == nil && (img.Recipe == "java" || img.Recipe == "node") {
		err = b.EnsureBase(ctx)
		args["BASE"] = b.BaseRef()
	}
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", img.Name, err)
	}
	file := filepath.Join(b.Root, "images", img.Recipe+".Containerfile")
	if err := b.Tool.Build(ctx, b.log(), file, stage, img.Ref, args); err != nil {
		return nil, fmt.Errorf("image %s: %w", img.Name, err)
	}
	info, err := b.Tool.Inspect(ctx, img.Ref)
	if err != nil {
		return nil, err
	}
	img.Bytes, img.Entrypoint, img.User = info.Size, info.Entrypoint, info.User
	img.Seconds = time.Since(t0).Seconds()
	return img, nil
}

// goBuild builds a static, stripped Go binary of pkg in dir.
func (b *Builder) goBuild(ctx context.Context, dir, pkg, out string) error {
	c := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	c.Dir = dir
	c.Env = append(os.Environ(), "CGO_ENABLED=0")
	var buf bytes.Buffer
	c.Stdout, c.Stderr = io.MultiWriter(b.log(), &buf), io.MultiWriter(b.log(), &buf)
	if err := c.Run(); err != nil {
		return fmt.Errorf("go build %s in %s: %w\n%s", pkg, dir, err, buf.String())
	}
	return nil
}

// stageJava builds the service and puts its extracted application and a
// jlinked runtime into stage.
func (b *Builder) stageJava(ctx context.Context, m *service.Manifest, stage string) error {
	if _, err := m.Build(ctx, b.log()); err != nil {
		return err
	}
	if err := copyTree(filepath.Join(m.Dir, "target", "app"), filepath.Join(stage, "app"), func(p string) bool { return !strings.HasSuffix(p, ".log") }); err != nil {
		return err
	}
	home, _ := service.FindJDK(21) // the JDK build.sh compiles with (jdk.sh)
	if home == "" {
		return errors.New("no JDK with jlink found")
	}
	c := exec.CommandContext(ctx, filepath.Join(home, "bin", "jlink"), "--add-modules", strings.Join(jlinkModules, ","),
		"--strip-debug", "--no-man-pages", "--no-header-files", "--output", filepath.Join(stage, "jre"))
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("jlink: %w\n%s", err, out)
	}
	// The CDS archive and the AOT cache were recorded with the full JDK;
	// with the jlinked one the JVM falls back to neither, so they are left out.
	os.Remove(filepath.Join(stage, "app", "app.jsa"))
	os.Remove(filepath.Join(stage, "app", "app.aot"))
	return nil
}

// stageNode builds the service (npm ci --omit=dev) and puts node and the
// service's files into stage.
func (b *Builder) stageNode(ctx context.Context, m *service.Manifest, stage string) error {
	if _, err := m.Build(ctx, b.log()); err != nil {
		return err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return err
	}
	if node, err = filepath.EvalSymlinks(node); err != nil {
		return err
	}
	if err := copyFile(node, filepath.Join(stage, "node"), 0o755); err != nil {
		return err
	}
	return copyTree(m.Dir, filepath.Join(stage, "app"), func(p string) bool {
		return !strings.HasPrefix(p, "test") && !strings.HasPrefix(p, ".")
	})
}

// EnsureBase makes the Debian base image once: mmdebstrap (or
// debootstrap) writes a minimal file system, which is imported.
func (b *Builder) EnsureBase(ctx context.Context) error {
	ref := b.BaseRef()
	if b.Tool.Exists(ctx, ref) {
		return nil
	}
	dir, err := os.MkdirTemp("", "showdown-base-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tarball := filepath.Join(dir, "rootfs.tar")
	// The runtime libraries node and the JVM link against, CA
	// certificates and time zones; nothing to build with.
	include := "ca-certificates,libstdc++6,zlib1g,tzdata"
	var c *exec.Cmd
	if p, err := exec.LookPath("mmdebstrap"); err == nil {
		c = exec.CommandContext(ctx, p, "--variant=essential", "--include="+include,
			"--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/locale/*",
			b.suite(), tarball)
	} else if p, err := exec.LookPath("debootstrap"); err == nil {
		root := filepath.Join(dir, "root")
		c = exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf("%s --variant=minbase --include=%s %s %s && tar -C %s -cf %s .", p, include, b.suite(), root, root, tarball))
	} else {
		return errors.New("the base file system needs mmdebstrap or debootstrap (hint: apt-get install mmdebstrap)")
	}
	c.Stdout, c.Stderr = b.log(), b.log()
	if err := c.Run(); err != nil {
		return fmt.Errorf("building the %s base file system: %w", b.suite(), err)
	}
	return b.Tool.Import(ctx, b.log(), tarball, ref)
}

func size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

func treeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// copyTree copies the regular files and folders of src whose path
// (relative to src) keep accepts into dst.
func copyTree(src, dst string, keep func(rel string) bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel != "." && !keep(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return copyFile(p, target, info.Mode().Perm()|0o444)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		}
		return nil
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
