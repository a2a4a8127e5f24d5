package images

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
		maxBytes   int64 // the image is the binary and little else
	}{
		// The Go service: one static binary on scratch.
		{goStdlib, "/usr/local/bin/server", 40 << 20},
		// showdown: its static binary and the workloads' files.
		{nil, "/usr/local/bin/showdown", 150 << 20},
	} {
		img, err := b.Build(ctx, tc.m)
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
		// The image holds the artifact and next to nothing else: no shell,
		// no build tools.
		if info.Size < img.ArtifactBytes || info.Size > img.ArtifactBytes+(2<<20) || info.Size > tc.maxBytes {
			t.Errorf("%s: image %d bytes, artifact %d bytes: want the artifact plus at most 2 MiB, under %d", img.Ref, info.Size, img.ArtifactBytes, tc.maxBytes)
		}
		t.Logf("%s: image %.1f MiB, artifact %.1f MiB, built in %.0f s", img.Ref, float64(info.Size)/(1<<20), float64(img.ArtifactBytes)/(1<<20), img.Seconds)
	}
}

func TestRecipe(t *testing.T) {
	for _, tc := range []struct{ lang, want string }{
		{"go", "static"},       // a static binary on scratch
		{"java", "java"},       // jlinked runtime on the Debian base
		{"javascript", "node"}, // node and the files on the Debian base
		{"cobol", ""},          // no recipe: an error naming the language
	} {
		got, err := Recipe(&service.Manifest{Name: "x", Language: tc.lang})
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("Recipe(%s) = %q, %v; want %q", tc.lang, got, err, tc.want)
		}
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
	if treeSize(dst) != 1 {
		t.Errorf("treeSize = %d, want 1", treeSize(dst))
	}
}
