package images

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/located"
	"github.com/showdownlab/showdown/internal/service"
)

// TestBuildStaticImages builds go-stdlib's and showdown's images with
// podman (COPY-only Containerfiles on scratch) and checks what podman
// image inspect says of them: size, entrypoint, a non-root user.
func TestBuildStaticImages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images; skipped with -short")
	}
	p, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman is not installed (apt-get install podman; scripts/setup.sh installs it)")
	}
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := service.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	goStdlib, err := service.Lookup(ms, "go-stdlib")
	if err != nil {
		t.Fatal(err)
	}
	tag := "test-" + strconv.Itoa(os.Getpid())
	b := &Builder{Root: root, Tool: Tool{Name: "podman", Path: p}, Tag: tag}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		m          *service.Manifest
		entrypoint string
		copied     string // the file the recipe copies (under the root)
		maxBytes   int64  // the image is the binary and little else
	}{
		// The Go service: one static binary on scratch (its image_build).
		{goStdlib, "/usr/local/bin/server", "services/go-stdlib/bin/image/server", 40 << 20},
		// showdown: its static binary and the workloads' files.
		{nil, "/usr/local/bin/showdown", "", 150 << 20},
	} {
		var img *Image
		var err error
		if tc.m == nil {
			img, err = b.BuildHarness(ctx, ShowdownImage)
		} else {
			img, err = b.Build(ctx, tc.m)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { exec.Command(p, "rmi", "-f", img.Ref).Run() })
		info, err := b.Tool.Inspect(ctx, img.Ref)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(info.Entrypoint, " "); got != tc.entrypoint {
			t.Errorf("%s: entrypoint %q, want %q", img.Ref, got, tc.entrypoint)
		}
		if info.User != "65532:65532" {
			t.Errorf("%s: user %q, want 65532:65532 (non-root)", img.Ref, info.User)
		}
		if img.Base != "scratch" || img.BaseBytes != 0 {
			t.Errorf("%s: base %q (%d bytes), want scratch", img.Ref, img.Base, img.BaseBytes)
		}
		// The image holds the binary and next to nothing else: no shell,
		// no build tools.
		bin := img.ArtifactBytes
		if tc.copied != "" {
			bin = size(filepath.Join(root, tc.copied))
		}
		if bin == 0 || info.Size < bin || info.Size > bin+(2<<20) || info.Size > tc.maxBytes {
			t.Errorf("%s: image %d bytes, binary %d bytes: want the binary plus at most 2 MiB, under %d", img.Ref, info.Size, bin, tc.maxBytes)
		}
		t.Logf("%s: image %.1f MiB, binary %.1f MiB, built in %.0f s", img.Ref, float64(info.Size)/(1<<20), float64(bin)/(1<<20), img.Seconds)
	}
}

// TestFindRecipe checks how a service folder's image recipe is found and
// which shared bases it needs, and that a service without one, or with
// one naming a base the harness does not make, is refused with the file,
// the field and a hint.
func TestFindRecipe(t *testing.T) {
	b := &Builder{}
	for _, tc := range []struct {
		name          string
		image         string // the manifest's image field; "" leaves it out
		containerfile string // "" writes none
		base          string
		shared        []string
		errFile       string // the file the error names ("showdown.yaml" or "Containerfile")
		errField      string
		errLine       int
	}{
		{name: "scratch", image: "Containerfile", containerfile: "FROM scratch\nCOPY bin/server /server\n", base: "scratch"},
		{name: "shared base through an ARG", image: "Containerfile",
			containerfile: "ARG BASE=localhost/showdown/base-jre:bookworm\nFROM ${BASE}\nCOPY target/app/ /opt/app/\n",
			base:          "localhost/showdown/base-jre:bookworm", shared: []string{"base-jre"}},
		{name: "multi-stage, a stage is no image", image: "image/Recipe",
			containerfile: "FROM localhost/showdown/base:bookworm AS libs\nFROM --platform=linux/amd64 scratch\nCOPY --from=libs /lib /lib\n",
			base:          "scratch", shared: []string{"base"}},
		{name: "another registry's image", image: "Containerfile", containerfile: "FROM docker.io/library/debian:bookworm-slim\n",
			base: "docker.io/library/debian:bookworm-slim"},
		{name: "no image field", errFile: "showdown.yaml", errField: "image"},
		{name: "recipe missing", image: "Containerfile", errFile: "showdown.yaml", errField: "image"},
		{name: "no FROM", image: "Containerfile", containerfile: "COPY x /x\n", errFile: "Containerfile"},
		{name: "unknown shared base", image: "Containerfile", containerfile: "# a comment\nFROM localhost/showdown/base-ruby:bookworm\n",
			errFile: "Containerfile", errField: "FROM", errLine: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "svc")
			manifest := "name: svc\nlanguage: go\nworkloads: [string]\nrun: [bin/server]\n"
			if tc.image != "" {
				manifest += "image: " + tc.image + "\n"
			}
			write(t, filepath.Join(dir, "showdown.yaml"), manifest)
			if tc.containerfile != "" {
				write(t, filepath.Join(dir, tc.image), tc.containerfile)
			}
			m, ps := service.Load(filepath.Join(dir, "showdown.yaml"))
			if len(ps) > 0 {
				t.Fatal(ps)
			}
			r, err := b.FindRecipe(m)
			if tc.errFile != "" {
				var le *located.Error
				if !errors.As(err, &le) {
					t.Fatalf("FindRecipe = %v, %v; want a located error", r, err)
				}
				if filepath.Base(le.File) != filepath.Base(tc.errFile) || le.Field != tc.errField || le.Line != tc.errLine || le.Hint == "" {
					t.Errorf("error %q: file %s, field %q, line %d, hint %q; want file %s, field %q, line %d and a hint",
						err, le.File, le.Field, le.Line, le.Hint, tc.errFile, tc.errField, tc.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.File != filepath.Join(dir, tc.image) || r.Base != tc.base || !slices.Equal(r.Shared, tc.shared) {
				t.Errorf("FindRecipe = %+v; want file %s, base %q, shared %v", r, tc.image, tc.base, tc.shared)
			}
		})
	}
}

// TestShippedRecipes checks that every implementation under services/
// carries an image recipe on scratch or a shared base, and that each shared
// base that builds over another has its Containerfile under images/.
func TestShippedRecipes(t *testing.T) {
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := service.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	b := &Builder{Root: root}
	for _, m := range ms {
		r, err := b.FindRecipe(m)
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		if _, shared := b.sharedBase(r.Base); !shared && r.Base != "scratch" {
			t.Errorf("%s: %s builds on %s, which the harness does not make and no registry serves here", m.Name, r.File, r.Base)
		}
	}
	for _, s := range sharedBases {
		if s.debian != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "images", s.name+".Containerfile")); err != nil {
			t.Errorf("shared base %s: %v", s.name, err)
		}
	}
	// Each database image has its recipe, its entry point and its base.
	for _, name := range []string{PostgresImage, MariaDBImage} {
		for _, f := range []string{name + ".Containerfile", name + "-entrypoint.sh"} {
			if _, err := os.Stat(filepath.Join(root, "images", f)); err != nil {
				t.Errorf("image %s: %v", name, err)
			}
		}
		if _, ok := b.sharedBase(b.BaseRef("base-" + name)); !ok {
			t.Errorf("image %s: no shared base base-%s", name, name)
		}
	}
}

func write(t *testing.T, file, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "out")
	os.MkdirAll(filepath.Join(src, "lib"), 0o755)
	os.WriteFile(filepath.Join(src, "lib", "a.js"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(src, "skip.log"), []byte("x"), 0o644)
	if err := copyTree(src, dst, func(p string) bool { return !strings.HasSuffix(p, ".log") }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "lib", "a.js")); string(b) != "a" {
		t.Errorf("lib/a.js not copied")
	}
	if _, err := os.Stat(filepath.Join(dst, "skip.log")); err == nil {
		t.Errorf("skip.log copied")
	}
}
