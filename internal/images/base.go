package images

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/showdownlab/showdown/internal/service"
)

// sharedBase is a base layer the harness makes for the recipes to build
// on: a minimal Debian file system (debian lists its packages), or a
// COPY-only layer over another shared base (from) that stage fills.
type sharedBase struct {
	name   string
	debian []string
	// hooks run in the new file system's root before its packages are
	// installed (mmdebstrap's --essential-hook), as shell commands.
	hooks []string
	from  string
	stage func(ctx context.Context, b *Builder, dir string) error
}

// The libraries a dynamically linked runtime needs (libc comes with the
// essential variant), CA certificates and time zones; nothing to build with.
var debianRuntime = []string{"ca-certificates", "libstdc++6", "zlib1g", "tzdata"}

// sharedBases are the bases a recipe may name in FROM, as
// localhost/showdown/NAME:SUITE.
var sharedBases = []sharedBase{
	// Anything dynamically linked against glibc (a Rust or C++ binary).
	{name: "base", debian: debianRuntime},
	// Debian's python3: wheels for it relocate, a pyenv interpreter's
	// virtual environment does not.
	{name: "base-python", debian: append(append([]string(nil), debianRuntime...), "python3")},
	// A jlinked runtime of this machine's JDK in /opt/jre.
	{name: "base-jre", from: "base", stage: stageJRE},
	// This machine's node binary as /usr/local/bin/node.
	{name: "base-node", from: "base", stage: stageNode},
	// Debian's PostgreSQL 15 server, without the cluster its package would
	// make: the database image's entry point makes one in PGDATA.
	{name: "base-postgres", debian: append(append([]string(nil), debianRuntime...), "postgresql-15"),
		hooks: []string{`mkdir -p "$1/etc/postgresql-common/createcluster.d" && echo "create_main_cluster = false" > "$1/etc/postgresql-common/createcluster.d/showdown.conf"`}},
	// Debian's MariaDB server (10.11); the database image's entry point
	// replaces the system tables its package makes with its own.
	{name: "base-mariadb", debian: append(append([]string(nil), debianRuntime...), "mariadb-server")},
}

// jlinkModules are the JDK modules the Java services (Spring Boot on
// Tomcat, Helidon SE; JDBC, JMX metrics, TLS) need; the rest stays out.
var jlinkModules = []string{"java.base", "java.compiler", "java.desktop", "java.instrument", "java.logging", "java.management",
	"java.naming", "java.net.http", "java.prefs", "java.rmi", "java.scripting", "java.security.jgss", "java.sql",
	"java.xml", "jdk.crypto.ec", "jdk.jfr", "jdk.management", "jdk.net", "jdk.unsupported", "jdk.zipfs"}

// BaseRef is the local reference of shared base name.
func (b *Builder) BaseRef(name string) string {
	return DefaultRegistry + "/" + name + ":" + b.suite()
}

func (b *Builder) baseRefs() []string {
	refs := make([]string, len(sharedBases))
	for i, s := range sharedBases {
		refs[i] = b.BaseRef(s.name)
	}
	return refs
}

// sharedBase returns the name of the shared base ref is, if it is one.
func (b *Builder) sharedBase(ref string) (string, bool) {
	for _, s := range sharedBases {
		if ref == b.BaseRef(s.name) {
			return s.name, true
		}
	}
	return "", false
}

// EnsureBase makes shared base name: a Debian file system once (kept in
// the tool's storage), a layer over one on every Builder's first use, so
// it follows this machine's JDK or node.
func (b *Builder) EnsureBase(ctx context.Context, name string) error {
	if b.made[name] {
		return nil
	}
	var s *sharedBase
	for i := range sharedBases {
		if sharedBases[i].name == name {
			s = &sharedBases[i]
		}
	}
	if s == nil {
		return fmt.Errorf("no shared base %q", name)
	}
	var err error
	if s.debian != nil {
		err = b.debianBase(ctx, b.BaseRef(name), s.debian, s.hooks)
	} else {
		err = b.layerBase(ctx, s)
	}
	if err != nil {
		return fmt.Errorf("base %s: %w", name, err)
	}
	if b.made == nil {
		b.made = map[string]bool{}
	}
	b.made[name] = true
	return nil
}

// layerBase builds s over its base from images/NAME.Containerfile.
func (b *Builder) layerBase(ctx context.Context, s *sharedBase) error {
	if err := b.EnsureBase(ctx, s.from); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "showdown-base-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := s.stage(ctx, b, dir); err != nil {
		return err
	}
	file := filepath.Join(b.Root, "images", s.name+".Containerfile")
	return b.Tool.Build(ctx, b.log(), file, dir, b.BaseRef(s.name), map[string]string{"BASE": b.BaseRef(s.from)})
}

// debianBase makes ref once: mmdebstrap (or debootstrap) writes a minimal
// file system with packages, which is imported.
func (b *Builder) debianBase(ctx context.Context, ref string, packages, hooks []string) error {
	if b.Tool.Exists(ctx, ref) {
		return nil
	}
	dir, err := os.MkdirTemp("", "showdown-base-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tarball := filepath.Join(dir, "rootfs.tar")
	include := strings.Join(packages, ",")
	var c *exec.Cmd
	if p, err := exec.LookPath("mmdebstrap"); err == nil {
		args := []string{"--variant=essential", "--include=" + include,
			"--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/locale/*"}
		for _, h := range hooks {
			args = append(args, "--essential-hook="+h)
		}
		c = exec.CommandContext(ctx, p, append(args, b.suite(), tarball)...)
	} else if p, err := exec.LookPath("debootstrap"); err == nil {
		if len(hooks) > 0 {
			return fmt.Errorf("the %s file system needs mmdebstrap for its hooks (hint: apt-get install mmdebstrap)", ref)
		}
		root := filepath.Join(dir, "root")
		c = exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf("%s --variant=minbase --include=%s %s %s && tar -C %s -cf %s .", p, include, b.suite(), root, root, tarball))
	} else {
		return errors.New("the base file system needs mmdebstrap or debootstrap (hint: apt-get install mmdebstrap)")
	}
	c.Stdout, c.Stderr = b.log(), b.log()
	if err := c.Run(); err != nil {
		return fmt.Errorf("building the %s file system: %w", b.suite(), err)
	}
	return b.Tool.Import(ctx, b.log(), tarball, ref)
}

// stageJRE puts a jlinked runtime of the JDK the Java services build with
// (jdk.sh: the newest >= 21) into dir/jre.
func stageJRE(ctx context.Context, _ *Builder, dir string) error {
	home, _ := service.FindJDK(21)
	if home == "" {
		return errors.New("no JDK >= 21 with jlink found")
	}
	c := exec.CommandContext(ctx, filepath.Join(home, "bin", "jlink"), "--add-modules", strings.Join(jlinkModules, ","),
		"--strip-debug", "--no-man-pages", "--no-header-files", "--output", filepath.Join(dir, "jre"))
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("jlink: %w\n%s", err, out)
	}
	return nil
}

// stageNode puts the node binary on PATH into dir/node.
func stageNode(_ context.Context, _ *Builder, dir string) error {
	node, err := exec.LookPath("node")
	if err != nil {
		return err
	}
	if node, err = filepath.EvalSymlinks(node); err != nil {
		return err
	}
	return copyFile(node, filepath.Join(dir, "node"), 0o755)
}
