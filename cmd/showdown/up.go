package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/workloads"
)

// DefaultUpPort is the first port `showdown up` gives a service.
const DefaultUpPort = 8080

func init() {
	register(&command{
		name:    "up",
		summary: "start a service (or every implementation of a plan) with its databases and data, until Ctrl-C",
		run:     runUp,
	})
}

// upTarget is one implementation to bring up.
type upTarget struct {
	id  string
	m   *service.Manifest
	env map[string]string
}

func runUp(st *state, args []string) (err error) {
	fs := newFlagSet(st, "up", `--service NAME [--workload W,...] [--port P] [--env K=V]... | --plan FILE [--port P]

Starts private databases with the workloads' data and the service, prints
its base URL and stays up until Ctrl-C or SIGTERM, then stops everything,
so that another tool (JMeter, k6, Gatling, Vegeta) can load a reference
service. With --plan every arm of the plan comes up (each implementation
at each of its cores, unpinned), on consecutive ports from --port, with
the environment and database settings run gives it.`)
	name := fs.String("service", "", "the service to start: a name under services/, or a stack's folder (./our-service)")
	planFile := fs.String("plan", "", "start every arm of this plan instead")
	port := fs.Int("port", DefaultUpPort, "the (first) port to listen on, on 127.0.0.1")
	skuRows := fs.Int("sku-rows", workloads.DefaultSKURows, "rows loaded into the sku table (--service only)")
	verbose := fs.Bool("v", false, "copy build, database and service output to stderr")
	var wl, envs stringList
	fs.Var(&wl, "workload", "workloads whose data to load, comma-separated or repeated (default: every workload the service serves)")
	fs.Var(&envs, "env", "`K=V` added to the service's environment, e.g. DB_POOL_MODE=per-request (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	hint := "showdown up --service go-stdlib --workload bank --port 8080"
	switch {
	case fs.NArg() > 0:
		return usageError{err: fmt.Errorf("unexpected argument %q", fs.Arg(0)), hint: hint}
	case (*name == "") == (*planFile == ""):
		return usageError{err: errors.New("give one of --service and --plan"), hint: hint}
	case *port < 1 || *port > 65535:
		return usageError{err: fmt.Errorf("--port %d is not a port", *port), hint: hint}
	}
	var ws []string
	for _, v := range wl {
		for _, w := range strings.Split(v, ",") {
			if w = strings.TrimSpace(w); w != "" && !slices.Contains(ws, w) {
				if !slices.Contains(workloads.Names, w) {
					return usageError{err: fmt.Errorf("unknown workload %q", w), hint: "workloads are " + strings.Join(workloads.Names, ", ")}
				}
				ws = append(ws, w)
			}
		}
	}
	extra := map[string]string{}
	for _, kv := range envs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageError{err: fmt.Errorf("--env %q is not K=V", kv), hint: "--env DB_POOL_MODE=per-request"}
		}
		extra[k] = v
	}

	root, err := stack.Root(st.getenv)
	if err != nil {
		return err
	}
	var targets []upTarget
	prep := db.PrepareOptions{SKURows: *skuRows}
	maxConns := 0
	if *planFile != "" {
		p, all, err := loadPlan(st, root, *planFile, thisMachine())
		if err != nil {
			return err
		}
		if len(ws) == 0 {
			for _, w := range p.Workloads {
				ws = append(ws, w.Name)
			}
		}
		targets = planTargets(p, all, extra)
		d := p.Database
		prep = db.PrepareOptions{SKURows: d.SKURows, Seed: d.Seed, NoSKUIndex: d.SKUIndex != nil && !*d.SKUIndex}
		maxConns = d.MaxConnections
	} else {
		all, folder, derr := discover(root, *name)
		m, err := findService(all, *name, folder, derr)
		if err != nil {
			return err
		}
		if len(ws) == 0 {
			ws = m.Workloads
		}
		for _, w := range ws {
			if !m.Supports(w) {
				return notServed(m, w)
			}
		}
		targets = []upTarget{{m.Name, m, (&plan.Plan{}).ArmEnv(plan.Implementation{Service: m.Name}, nil, extra)}}
	}
	if *port+len(targets)-1 > 65535 {
		return usageError{err: fmt.Errorf("--port %d leaves no room for %d services", *port, len(targets)), hint: hint}
	}
	if err := upConnections(targets, ws, maxConns); err != nil {
		return err
	}
	return up(st, targets, ws, *port, prep, maxConns, *verbose)
}

// up builds the targets, starts the databases and loads the workloads'
// data, starts each target on consecutive ports from port, and waits for
// the context (Ctrl-C, SIGTERM) or for a service to exit; everything it
// started is stopped before it returns.
func up(st *state, targets []upTarget, ws []string, port int, prep db.PrepareOptions, maxConns int, verbose bool) error {
	ctx := st.ctx
	var out io.Writer = io.Discard
	if verbose {
		out = st.stderr
	}
	built := map[string]bool{}
	for _, t := range targets {
		if built[t.m.Name] {
			continue
		}
		fmt.Fprintf(st.stderr, "building %s\n", t.m.Name)
		if _, err := t.m.Build(ctx, out); err != nil {
			return err
		}
		built[t.m.Name] = true
	}
	dbs, err := stack.StartDatabases(ctx, stack.Engines(ws), stack.DatabaseOptions{Progress: st.stderr, MaxConnections: maxConns})
	if err != nil {
		return err
	}
	defer dbs.Stop()
	if _, err := dbs.Prepare(ctx, ws, prep); err != nil {
		return err
	}
	for _, w := range ws {
		if pid := dbs.PID(w); pid > 0 {
			fmt.Fprintf(st.stdout, "database for %s: pid %d\n", w, pid)
		}
	}
	var svcs []*stack.Service
	defer func() {
		for i := len(svcs) - 1; i >= 0; i-- {
			_, _ = svcs[i].Stop()
		}
	}()
	exited := make(chan string, len(targets))
	for i, t := range targets {
		fmt.Fprintf(st.stderr, "starting %s\n", t.id)
		svc, err := stack.StartService(ctx, t.m, dbs, stack.ServiceOptions{Env: t.env, Log: out, Port: port + i})
		if err != nil {
			return fmt.Errorf("start %s: %w", t.id, err)
		}
		svcs = append(svcs, svc)
		go func(id string, s *stack.Service) {
			select {
			case <-s.Exited():
				exited <- id
			case <-ctx.Done():
			}
		}(t.id, svc)
		fmt.Fprintf(st.stdout, "%s: %s (pid %d, workloads %s)\n", t.id, svc.URL(), svc.PID(), strings.Join(ws, ", "))
	}
	fmt.Fprintln(st.stdout, "up; Ctrl-C stops the services and databases")
	select {
	case <-ctx.Done():
		fmt.Fprintln(st.stderr, "stopping")
		return nil
	case id := <-exited:
		return exitError{code: exitFailure, err: fmt.Errorf("%s exited on its own; stopped everything", id)}
	}
}

// planTargets are the services up --plan starts: the arms of p, as run
// compares them (each implementation at each of the plan's cores), each
// with its environment as under run (plan.ArmEnv, its cores knob
// included) and extra (--env) over it.
func planTargets(p *plan.Plan, all []*service.Manifest, extra map[string]string) []upTarget {
	var targets []upTarget
	for _, im := range p.Arms() {
		m, _ := service.Lookup(all, im.Service)
		targets = append(targets, upTarget{im.ID(), m, p.ArmEnv(im, m.Cores.EnvAt(im.Cores), extra)})
	}
	return targets
}
