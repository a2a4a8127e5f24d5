package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/showdownlab/showdown/internal/images"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/load/atomicfile"
)

func init() {
	register(&command{
		name:    "images",
		summary: "build a container image per implementation and one for showdown (podman, buildah or docker)",
		run:     runImages,
	})
}

func runImages(st *state, args []string) error {
	if len(args) == 0 || args[0] != "build" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(st.stderr, "Usage: showdown images build [--push REGISTRY] [--tag T] [NAME|FOLDER...]")
			return errHelp
		}
		return usageError{err: errors.New("images: the one subcommand is build"), hint: "showdown images build go-stdlib showdown"}
	}
	fs := newFlagSet(st, "images build", "[--push REGISTRY] [flags] [NAME|FOLDER...]\n\nBuilds the images of the named implementations (a name under services/ or a stack's folder,\n./our-service) and of showdown (all under services/ when none is named), or postgres and mariadb\n(PostgreSQL 15 and MariaDB 10.11 from Debian's packages, for a cluster that cannot pull the official images),\nwith the COPY-only Containerfile each service folder names (image: in showdown.yaml)\non the shared bases the harness makes (images/), records their sizes in bin/images.json,\nand with --push copies them to REGISTRY/NAME:TAG.")
	push := fs.String("push", "", "push the images to `REGISTRY` (e.g. registry.example.com/team)")
	tag := fs.String("tag", images.DefaultTag, "image `tag`")
	record := fs.String("record", filepath.Join("bin", "images.json"), "write the images' sizes to this `file`")
	verbose := fs.Bool("v", false, "show the tools' output")
	names, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	root, err := stack.Root(st.getenv)
	if err != nil {
		return err
	}
	var dirs []string
	for _, n := range names {
		if service.IsFolder(n) {
			dirs = append(dirs, n)
		}
	}
	ms, err := service.Discover(root, dirs...)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		for _, m := range ms {
			names = append(names, m.Name)
		}
		names = append(names, images.ShowdownImage)
	}
	var errs []error
	todo := map[string]*service.Manifest{}
	harness := map[string]bool{}
	for _, n := range images.HarnessImages {
		harness[n] = true
	}
	for i, n := range names {
		if harness[n] {
			todo[n] = nil
			continue
		}
		m, err := service.Find(ms, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// A stack from a folder is built, tagged and recorded by its name.
		names[i] = m.Name
		todo[m.Name] = m
	}
	if len(errs) > 0 {
		return usageError{err: errors.Join(errs...), hint: "names are services (showdown services), showdown or postgres"}
	}
	tool, err := images.FindTool()
	if err != nil {
		return err
	}
	b := &images.Builder{Root: root, Tool: tool, Tag: *tag}
	if *verbose {
		b.Log = st.stderr
	}
	var built []*images.Image
	var failed []string
	for _, n := range names {
		fmt.Fprintf(st.stderr, "building %s with %s...\n", b.Ref(n), tool.Name)
		var img *images.Image
		var err error
		if harness[n] {
			img, err = b.BuildHarness(st.ctx, n)
		} else {
			img, err = b.Build(st.ctx, todo[n])
		}
		if err != nil {
			fmt.Fprintf(st.stderr, "showdown: %v\n", err)
			var h hinted
			if errors.As(err, &h) && h.Hint() != "" {
				fmt.Fprintf(st.stderr, "hint: %s\n", h.Hint())
			}
			failed = append(failed, n)
			continue
		}
		if *push != "" {
			dest := strings.TrimSuffix(*push, "/") + "/" + img.Name + ":" + *tag
			if err := tool.Push(st.ctx, b.Log, img.Ref, dest); err != nil {
				fmt.Fprintf(st.stderr, "showdown: %v\n", err)
				failed = append(failed, n)
				continue
			}
			img.Pushed = dest
		}
		built = append(built, img)
	}
	tw := tabwriter.NewWriter(st.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "image\trecipe\tbase\timage size\tover base\tartifact size\tentrypoint\tuser\t")
	for _, img := range built {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", img.Ref, img.Recipe, img.Base, mib(img.Bytes), mib(img.Bytes-img.BaseBytes),
			mib(img.ArtifactBytes), strings.Join(img.Entrypoint, " "), img.User)
	}
	tw.Flush()
	if len(built) > 0 && *record != "" {
		b, _ := json.MarshalIndent(built, "", "  ")
		if err := os.MkdirAll(filepath.Dir(*record), 0o755); err == nil {
			if err := atomicfile.WriteFile(*record, append(b, '\n'), 0o644); err != nil {
				return err
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d image(s) failed: %s", len(failed), strings.Join(failed, ", "))
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
