// Package images builds the container images: one per implementation,
// from the COPY-only Containerfile its service folder carries, and one
// for showdown itself, so they build where no container can run. The harness owns the
// shared bases the recipes build on (minimal Debian file systems made
// locally and imported, a jlinked JRE, node) and the recipes' discovery.
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
	// DefaultSuite is the Debian release of the shared bases.
	DefaultSuite = "bookworm"
	// ShowdownImage is the name of showdown's own image.
	ShowdownImage = "showdown"
	// PostgresImage is the name of the harness's PostgreSQL image, for
	// clusters that cannot pull the official one (images/postgres.Containerfile).
	PostgresImage = "postgres"
	// MariaDBImage is the harness's MariaDB image, likewise
	// (images/mariadb.Containerfile).
	MariaDBImage = "mariadb"
)

// HarnessImages are the images the harness itself builds, beside the
// implementations'.
var HarnessImages = []string{ShowdownImage, PostgresImage, MariaDBImage}

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
	Name string `json:"name"`
	Ref  string `json:"ref"`
	// Recipe is the Containerfile, relative to the repository root.
	Recipe string `json:"recipe"`
	// Base is the image the recipe builds on ("scratch" for none), and
	// BaseBytes its size.
	Base      string `json:"base"`
	BaseBytes int64  `json:"base_bytes"`
	Bytes     int64  `json:"image_bytes"`
	// ArtifactBytes is the build's artifact as the manifest names it (the
	// size the local runner records), or showdown's binary.
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
	// Suite is the Debian release of the shared bases (DefaultSuite).
	Suite string
	made  map[string]bool // shared bases made by this Builder
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

// Build builds the image of one implementation with the recipe its folder
// carries (FindRecipe), and inspects it. An implementation is built first
// (Build, cached) and its image_build steps run; the recipe's context is
// the service folder.
func (b *Builder) Build(ctx context.Context, m *service.Manifest) (*Image, error) {
	return b.inspect(ctx, time.Now(), func() (*Image, error) { return b.buildService(ctx, m) })
}

// BuildHarness builds one of HarnessImages and inspects it.
func (b *Builder) BuildHarness(ctx context.Context, name string) (*Image, error) {
	switch name {
	case ShowdownImage:
		return b.inspect(ctx, time.Now(), func() (*Image, error) { return b.buildShowdown(ctx) })
	case PostgresImage, MariaDBImage:
		return b.inspect(ctx, time.Now(), func() (*Image, error) { return b.buildDatabase(ctx, name) })
	}
	return nil, fmt.Errorf("no harness image %q (there are %s)", name, strings.Join(HarnessImages, ", "))
}

func (b *Builder) inspect(ctx context.Context, t0 time.Time, build func() (*Image, error)) (*Image, error) {
	img, err := build()
	if err != nil {
		return nil, err
	}
	info, err := b.Tool.Inspect(ctx, img.Ref)
	if err != nil {
		return nil, err
	}
	img.Bytes, img.Entrypoint, img.User = info.Size, info.Entrypoint, info.User
	if img.Base != "scratch" {
		if bi, err := b.Tool.Inspect(ctx, img.Base); err == nil {
			img.BaseBytes = bi.Size
		}
	}
	img.Seconds = time.Since(t0).Seconds()
	return img, nil
}

func (b *Builder) buildService(ctx context.Context, m *service.Manifest) (*Image, error) {
	r, err := b.FindRecipe(m)
	if err != nil {
		return nil, err
	}
	img := &Image{Name: m.Name, Ref: b.Ref(m.Name), Recipe: b.rel(r.File), Base: r.Base}
	res, err := m.Build(ctx, b.log())
	if err != nil {
		return nil, err
	}
	img.ArtifactBytes = res.ArtifactBytes
	if err := m.BuildImageInputs(ctx, b.log()); err != nil {
		return nil, err
	}
	for _, name := range r.Shared {
		if err := b.EnsureBase(ctx, name); err != nil {
			return nil, fmt.Errorf("image %s: %w", m.Name, err)
		}
	}
	if err := b.Tool.Build(ctx, b.log(), r.File, m.Dir, img.Ref, nil); err != nil {
		return nil, fmt.Errorf("image %s: %w", m.Name, err)
	}
	return img, nil
}

// buildShowdown builds showdown's image: the static binary and the
// workloads' files, staged for images/showdown.Containerfile.
func (b *Builder) buildShowdown(ctx context.Context) (*Image, error) {
	stage, err := os.MkdirTemp("", "showdown-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	file := filepath.Join(b.Root, "images", "showdown.Containerfile")
	img := &Image{Name: ShowdownImage, Ref: b.Ref(ShowdownImage), Recipe: b.rel(file), Base: "scratch"}
	err = b.goBuild(ctx, b.Root, "./cmd/showdown", filepath.Join(stage, "showdown"))
	if err == nil {
		img.ArtifactBytes = size(filepath.Join(stage, "showdown"))
		err = copyTree(filepath.Join(b.Root, "workloads"), filepath.Join(stage, "workloads"), func(p string) bool { return !strings.HasSuffix(p, ".go") })
	}
	if err == nil {
		err = b.Tool.Build(ctx, b.log(), file, stage, img.Ref, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ShowdownImage, err)
	}
	return img, nil
}

// buildDatabase builds a database image (PostgresImage, MariaDBImage):
// its base (base-NAME) and its entry point, staged for
// images/NAME.Containerfile.
func (b *Builder) buildDatabase(ctx context.Context, name string) (*Image, error) {
	base := "base-" + name
	if err := b.EnsureBase(ctx, base); err != nil {
		return nil, fmt.Errorf("image %s: %w", name, err)
	}
	stage, err := os.MkdirTemp("", "showdown-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	file := filepath.Join(b.Root, "images", name+".Containerfile")
	img := &Image{Name: name, Ref: b.Ref(name), Recipe: b.rel(file), Base: b.BaseRef(base)}
	entry := name + "-entrypoint.sh"
	err = copyFile(filepath.Join(b.Root, "images", entry), filepath.Join(stage, entry), 0o755)
	if err == nil {
		err = b.Tool.Build(ctx, b.log(), file, stage, img.Ref, map[string]string{"BASE": b.BaseRef(base)})
	}
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", name, err)
	}
	return img, nil
}

func (b *Builder) rel(file string) string {
	if r, err := filepath.Rel(b.Root, file); err == nil {
		return r
	}
	return file
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

func size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
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
