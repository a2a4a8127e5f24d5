package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/images"
	"github.com/showdownlab/showdown/internal/k8s"
	"github.com/showdownlab/showdown/internal/report"
	"github.com/showdownlab/showdown/internal/stack"
)

func init() {
	register(&command{
		name:    "k8s",
		summary: "run a plan on Kubernetes: render its manifests, or run it with client-go",
		run:     runK8s,
	})
}

// k8sCommands are the subcommands of k8s; all but the first two run
// inside the cluster's pods.
var k8sCommands = []struct {
	name, summary string
	run           func(st *state, args []string) error
}{
	{"render", "print the manifests of a plan, ready for kubectl apply -f -", runK8sRender},
	{"run", "run a plan on a cluster and write its results folder and report", runK8sRun},
	{"shard", "(in a generator pod) run shard INDEX+1 of an attack at the start instant", runK8sShard},
	{"sampler", "(beside a service) sample the service's process tree every second", runK8sSampler},
	{"initdb", "(in a database pod) write the schema and data files the image loads", runK8sInitDB},
	{"pack", "(in a pod) write a results folder as a tar stream to stdout", runK8sPack},
	{"audit", "(in a pod) check a workload's invariants in the database its services use", runK8sAudit},
	{"warmup", "(in a pod) warm a service up until the steady-state rule holds", runK8sWarmup},
}

func runK8s(st *state, args []string) error {
	if len(args) > 0 {
		for _, c := range k8sCommands {
			if c.name == args[0] {
				return c.run(st, args[1:])
			}
		}
	}
	var b strings.Builder
	b.WriteString("Usage: showdown k8s <command> [flags]\n\nCommands:\n")
	for _, c := range k8sCommands {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(st.stderr, b.String())
	if len(args) == 0 {
		return usageError{err: errors.New("k8s: which command?"), hint: "showdown k8s render PLAN | kubectl apply -f -"}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return errHelp
	}
	return usageError{err: fmt.Errorf("unknown k8s command %q", args[0]), hint: "showdown k8s render plans/default.yaml | kubectl apply -f -"}
}

// renderFlags are the flags render and run share.
type renderFlags struct {
	namespace, registry, tag    string
	postgresImage, mariadbImage string
	databaseCPU, databaseMemory string
}

// options are the render options the flags say.
func (f *renderFlags) options() (k8s.Options, error) {
	o := k8s.Options{Namespace: f.namespace, Registry: f.registry, Tag: f.tag,
		PostgresImage: f.postgresImage, MariaDBImage: f.mariadbImage}
	var err error
	if o.DatabaseCPU, err = k8s.ParseQuantity("--database-cpu", f.databaseCPU); err != nil {
		return o, usageError{err: err, hint: "a CPU quantity, e.g. --database-cpu 500m or 2"}
	}
	if o.DatabaseMemory, err = k8s.ParseQuantity("--database-memory", f.databaseMemory); err != nil {
		return o, usageError{err: err, hint: "a memory quantity, e.g. --database-memory 512Mi or 2Gi"}
	}
	return o, nil
}

func (f *renderFlags) define(st *state, name, synopsis string) *flag.FlagSet {
	fs := newFlagSet(st, "k8s "+name, synopsis)
	fs.StringVar(&f.namespace, "namespace", "", "the run's `namespace` (default showdown-PLAN-RUNID)")
	fs.StringVar(&f.registry, "registry", k8s.DefaultRegistry, "images are `REGISTRY`/NAME:TAG, as 'showdown images build --push' named them")
	fs.StringVar(&f.tag, "tag", k8s.DefaultTag, "image `tag`")
	fs.StringVar(&f.postgresImage, "postgres-image", k8s.PostgresImage, "PostgreSQL's `image` (on a cluster without a registry: 'showdown images build postgres' and localhost/showdown/postgres:latest)")
	fs.StringVar(&f.mariadbImage, "mariadb-image", k8s.MariaDBImage, "MariaDB's `image` (without a registry: 'showdown images build mariadb' and localhost/showdown/mariadb:latest)")
	fs.StringVar(&f.databaseCPU, "database-cpu", k8s.DatabaseCPU, "each database pod's CPU `quantity`, requests == limits")
	fs.StringVar(&f.databaseMemory, "database-memory", k8s.DatabaseMemory, "each database pod's memory `quantity`, requests == limits")
	return fs
}

func runK8sRender(st *state, args []string) error {
	var f renderFlags
	fs := f.define(st, "render", "PLAN [flags]\n\nPrints the manifests of PLAN: a namespace, the databases, each implementation at each\nreplica count, and a generator Job per level, each starting at its own instant.")
	startAt := fs.String("start", "", "first level's start `instant` (RFC 3339; default: the next minute plus one)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{err: errors.New("one plan expected"), hint: "showdown k8s render plans/api-showdown.yaml | kubectl apply -f -"}
	}
	o, err := f.options()
	if err != nil {
		return err
	}
	if *startAt != "" {
		if o.Start, err = time.Parse(time.RFC3339, *startAt); err != nil {
			return usageError{err: fmt.Errorf("--start: %w", err), hint: "e.g. --start 2026-11-23T08:00:00Z"}
		}
	}
	root, err := stack.Root(st.getenv)
	if err != nil {
		return err
	}
	p, _, err := loadPlan(st, root, pos[0], thisMachine())
	if err != nil {
		return err
	}
	m, err := k8s.Render(p, o)
	if err != nil {
		return err
	}
	return k8s.WriteYAML(st.stdout, m.Objects())
}

func runK8sRun(st *state, args []string) error {
	var f renderFlags
	fs := f.define(st, "run", "PLAN [flags]\n\nApplies the manifests of PLAN to a cluster with client-go, waits for readiness, runs every\nlevel, copies every shard's and sampler's files, merges them and writes the results folder\nand report.html. Ctrl-C (and the end, unless --keep) deletes the run's namespace.")
	kubeContext := fs.String("context", "", "kubeconfig `context` (default: the current one)")
	keep := fs.Bool("keep", false, "leave the namespace and its objects in place")
	results := fs.String("results", "results", "parent `dir` of the results folder")
	imagesFile := fs.String("images", filepath.Join("bin", "images.json"), "the images' sizes as 'showdown images build' recorded them (`file`; skipped if missing)")
	lead := fs.Duration("lead", k8s.DefaultLead, "how long before a level's start instant its generator Job is created, for its pods to be scheduled and waiting (`duration`)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{err: errors.New("one plan expected"), hint: "showdown k8s run plans/api-showdown.yaml --context kind-showdown"}
	}
	if *lead < time.Second {
		return usageError{err: fmt.Errorf("--lead %s: at least 1s", *lead), hint: "a node that starts pods in seconds can take --lead 10s; the default is " + k8s.DefaultLead.String()}
	}
	root, err := stack.Root(st.getenv)
	if err != nil {
		return err
	}
	p, _, err := loadPlan(st, root, pos[0], thisMachine())
	if err != nil {
		return err
	}
	o, err := f.options()
	if err != nil {
		return err
	}
	m, err := k8s.Render(p, o)
	if err != nil {
		return err
	}
	cs, ex, ctxName, err := k8s.Connect(*kubeContext)
	if err != nil {
		return err
	}
	dir := filepath.Join(*results, time.Now().UTC().Format("20060102T150405Z")+"-k8s-"+p.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	imgs, err := readImages(*imagesFile)
	if err != nil {
		return err
	}
	c := &k8s.Controller{Client: cs, Exec: ex, Progress: st.stderr, Keep: *keep, Images: imgs, Lead: *lead,
		Command: "showdown k8s run " + strings.Join(args, " "), Context: ctxName}
	_, _, err = c.Run(st.ctx, p, m, dir)
	if paths, rerr := report.WriteFiles(dir, dir); rerr != nil {
		fmt.Fprintf(st.stderr, "showdown: report: %v\n", rerr)
	} else {
		for _, p := range paths {
			fmt.Fprintf(st.stdout, "report:  %s\n", p)
		}
	}
	fmt.Fprintf(st.stdout, "results: %s\n", dir)
	if st.ctx.Err() != nil {
		return exitError{code: exitInterrupted, err: errors.New("interrupted; the namespace was deleted unless --keep")}
	}
	return err
}

// readImages reads the sizes 'showdown images build' recorded, by image
// name; a missing file means no sizes (the images were built elsewhere).
func readImages(path string) (map[string]k8s.Image, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list []images.Image
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, usageError{err: fmt.Errorf("%s: %w", path, err), hint: "showdown images build writes it; --images '' skips it"}
	}
	out := map[string]k8s.Image{}
	for _, img := range list {
		out[img.Name] = k8s.Image{Ref: img.Ref, Bytes: img.Bytes, ArtifactBytes: img.ArtifactBytes}
	}
	return out, nil
}
