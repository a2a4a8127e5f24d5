package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/faults"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/internal/verify"
	"github.com/showdownlab/showdown/workloads"
)

// defaultVerifySKURows is the sku table's size under verify: enough for the
// checks, small enough to load in a second.
const defaultVerifySKURows = 20_000

func init() {
	register(&command{
		name:    "verify",
		summary: "check that a service honours the contract (builds, starts databases, runs the suite)",
		run:     runVerify,
	})
}

// verifyDatabases starts the databases verify needs. Tests replace it to
// share one PostgreSQL and one MariaDB across several runs.
var verifyDatabases = func(ctx context.Context, progress io.Writer, engines []workloads.Engine) (*stack.Databases, error) {
	return stack.StartDatabases(ctx, engines, stack.DatabaseOptions{Progress: progress, StatementStats: true})
}

// verifyOptions are verify's flags.
type verifyOptions struct {
	service       string
	workloads     []string
	url           string
	skuRows       int
	healthTimeout time.Duration
	verbose       bool
	// faults runs the bank under faults instead of the suite (faults.go).
	faults   bool
	fault    faults.Options
	faultArg string
}

func runVerify(st *state, args []string) error {
	fs := newFlagSet(st, "verify", "--service NAME|all [--workload W,...] | --url URL --workload W,...")
	var o verifyOptions
	var wl stringList
	fs.StringVar(&o.service, "service", "", "implementation to build, start and check (a folder of services/), or all")
	fs.Var(&wl, "workload", "workloads to check, comma-separated or repeated (default: every workload the manifest lists)")
	fs.StringVar(&o.url, "url", "", "check an already-running service at this base URL instead (needs --workload; outage and shutdown checks are skipped)")
	fs.IntVar(&o.skuRows, "sku-rows", defaultVerifySKURows, "rows loaded into the sku table")
	fs.DurationVar(&o.healthTimeout, "health-timeout", stack.DefaultHealthTimeout, "how long a service may take to answer GET /health with 200")
	fs.BoolVar(&o.verbose, "v", false, "copy build and service output to stderr")
	fs.BoolVar(&o.faults, "faults", false, "run the bank under faults (kill -9, hung and crashed database, SIGTERM mid-transaction) instead of the suite, on a durable database")
	fs.StringVar(&o.faultArg, "fault", "all", "with --faults: the faults to inject, comma-separated, in order ("+faults.Names()+")")
	fs.DurationVar(&o.fault.PerFault, "per-fault", faults.DefaultPerFault, "with --faults: each fault's window of transfers")
	fs.IntVar(&o.fault.Workers, "workers", faults.DefaultWorkers, "with --faults: transfer workers sending back to back")
	fs.DurationVar(&o.fault.Pause, "pause", faults.DefaultPause, "with --faults: how long db-pause keeps the database stopped")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{err: fmt.Errorf("unexpected argument %q", fs.Arg(0)), hint: "showdown verify --service go-stdlib"}
	}
	for _, v := range wl {
		for _, w := range strings.Split(v, ",") {
			if w = strings.TrimSpace(w); w == "" {
				continue
			}
			if !slices.Contains(workloads.Names, w) {
				return usageError{err: fmt.Errorf("unknown workload %q", w), hint: "workloads are " + strings.Join(workloads.Names, ", ")}
			}
			if !slices.Contains(o.workloads, w) {
				o.workloads = append(o.workloads, w)
			}
		}
	}
	if o.faults {
		var err error
		if o.fault.Faults, err = faults.ParseFaults(o.faultArg); err != nil {
			return usageError{err: err, hint: "e.g. --fault service-kill,db-crash"}
		}
		switch {
		case o.url != "":
			return usageError{err: errors.New("--faults needs --service"), hint: "the faults kill and restart the service and its database, so showdown must start them"}
		case len(o.workloads) > 1 || (len(o.workloads) == 1 && o.workloads[0] != "bank"):
			return usageError{err: errors.New("--faults runs the bank workload only"), hint: "drop --workload"}
		case o.fault.Workers < 1 || o.fault.Workers > 1000:
			return usageError{err: fmt.Errorf("--workers %d is out of range", o.fault.Workers), hint: "1 .. 1000; the default is 50"}
		case o.fault.PerFault < time.Second:
			return usageError{err: fmt.Errorf("--per-fault %v is too short", o.fault.PerFault), hint: "at least 1s; the default is 60s"}
		case o.fault.Pause <= 0:
			return usageError{err: fmt.Errorf("--pause %v is not positive", o.fault.Pause), hint: "the default is 5s"}
		}
		o.workloads = []string{"bank"}
	}
	if o.skuRows < 100 {
		return usageError{err: fmt.Errorf("--sku-rows %d is too small", o.skuRows), hint: "the sku checks need at least 100 rows; the default is 20000"}
	}
	switch {
	case o.url != "" && o.service != "":
		return usageError{err: errors.New("--url and --service exclude each other"), hint: "--service builds and starts a service; --url checks one already running"}
	case o.url != "":
		if len(o.workloads) == 0 {
			return usageError{err: errors.New("--url needs --workload"), hint: "showdown verify --url http://127.0.0.1:8080 --workload string,bank"}
		}
		u, err := url.Parse(o.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError{err: fmt.Errorf("--url %q is not an http:// base URL", o.url), hint: "e.g. --url http://127.0.0.1:8080"}
		}
		return verifyURL(st, o)
	case o.service == "":
		return usageError{err: errors.New("--service or --url is required"), hint: "showdown verify --service go-stdlib (run 'showdown services' for the list)"}
	}
	return verifyServices(st, o)
}

// tally counts results and prints them as they come.
type tally struct {
	w                     io.Writer
	service               string // printed in each line when several services are checked
	passed, failed, skipd int
}

func (t *tally) report(r verify.Result) {
	switch r.Status {
	case verify.Pass:
		t.passed++
	case verify.Fail:
		t.failed++
	default:
		t.skipd++
	}
	// Check names usually carry their workload ("bank/..."); print it only
	// when they do not.
	name := r.Check
	if r.Workload != "" && !strings.HasPrefix(name, r.Workload+"/") {
		name = r.Workload + "/" + name
	}
	if t.service != "" {
		name = t.service + ": " + name
	}
	line := fmt.Sprintf("%s %s (%s)", r.Status, name, roundElapsed(r.Elapsed))
	if r.Status == verify.Skip && r.Detail != "" {
		line += ": " + r.Detail
	}
	fmt.Fprintln(t.w, line)
	if r.Status == verify.Fail {
		if r.Detail != "" {
			fmt.Fprintln(t.w, indentBlock(r.Detail, "    "))
		}
		if r.Request != "" {
			fmt.Fprintln(t.w, "    request:")
			fmt.Fprintln(t.w, indentBlock(r.Request, "      "))
		}
		if r.Response != "" {
			fmt.Fprintln(t.w, "    response:")
			fmt.Fprintln(t.w, indentBlock(r.Response, "      "))
		}
	}
}

func (t *tally) summary() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", t.passed, t.failed, t.skipd)
}

func roundElapsed(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

func indentBlock(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}

// verifyURL checks a service someone else started; hooks are absent, so
// the outage and shutdown checks are skipped.
func verifyURL(st *state, o verifyOptions) error {
	t := &tally{w: st.stdout}
	verify.Run(st.ctx, verify.Target{BaseURL: strings.TrimRight(o.url, "/"), Workloads: o.workloads}, t.report)
	fmt.Fprintln(st.stdout, t.summary())
	return verifyOutcome(st, t)
}

func verifyOutcome(st *state, t *tally) error {
	if st.ctx.Err() != nil {
		return exitError{code: exitInterrupted, err: errors.New("interrupted")}
	}
	if t.failed > 0 {
		return exitError{code: exitCheckFailed}
	}
	return nil
}

// verifyServices builds, starts and checks each selected service against
// private databases, stopping everything it started whatever happens.
func verifyServices(st *state, o verifyOptions) (err error) {
	ctx := st.ctx
	defer func() {
		if ctx.Err() != nil {
			err = exitError{code: exitInterrupted, err: errors.New("interrupted; stopped the services and databases")}
		}
	}()
	root, err := stack.Root(st.getenv)
	if err != nil {
		return err
	}
	all, derr := service.Discover(root)
	var targets []*service.Manifest
	if o.service == "all" {
		if derr != nil {
			// A broken manifest is a failure of the whole tree; check the
			// valid ones anyway so every problem shows at once.
			fmt.Fprintln(st.stderr, derr)
		}
		if len(all) == 0 {
			return fmt.Errorf("no valid manifest under %s/services/*/%s", root, service.ManifestFile)
		}
		targets = all
	} else {
		m, err := service.Lookup(all, o.service)
		if err != nil {
			if derr != nil {
				return fmt.Errorf("%w\n%v", err, derr)
			}
			return usageError{err: err, hint: "run 'showdown services' for the list"}
		}
		targets = []*service.Manifest{m}
	}
	// The workloads of each service: the flag's, all of which it must serve
	// (with one service), or what each serves (with all).
	wls := map[string][]string{}
	var every []string
	for _, m := range targets {
		ws := m.Workloads
		if len(o.workloads) > 0 {
			ws = nil
			for _, w := range o.workloads {
				if m.Supports(w) {
					ws = append(ws, w)
				} else if len(targets) == 1 {
					return usageError{err: fmt.Errorf("%s does not serve workload %s", m.Name, w), hint: m.Name + " serves " + strings.Join(m.Workloads, ", ")}
				}
			}
		}
		wls[m.Name] = ws
		every = append(every, ws...)
	}

	var out io.Writer = io.Discard
	if o.verbose {
		out = st.stderr
	}
	// With several services, one that cannot be built or started is
	// reported and the others are still checked; with one, it is the error.
	var broken []string
	brokenErr := func(m *service.Manifest, err error) error {
		if len(targets) == 1 || ctx.Err() != nil {
			return err
		}
		fmt.Fprintf(st.stderr, "showdown: %v\n", err)
		var h interface{ Hint() string }
		if errors.As(err, &h) && h.Hint() != "" {
			fmt.Fprintf(st.stderr, "hint: %s\n", h.Hint())
		}
		broken = append(broken, m.Name)
		return nil
	}
	built := map[string]bool{}
	for _, m := range targets {
		if len(wls[m.Name]) == 0 {
			continue
		}
		// "building x" then " (cached)" or " (12.3s)" on the same line,
		// unless the build's own output (-v) comes in between.
		fmt.Fprintf(st.stderr, "building %s", m.Name)
		if o.verbose {
			fmt.Fprintln(st.stderr)
		}
		res, err := m.Build(ctx, out)
		if !o.verbose || err == nil {
			if o.verbose {
				fmt.Fprintf(st.stderr, "built %s", m.Name)
			}
			switch {
			case err != nil:
				fmt.Fprintln(st.stderr)
			case res.Cached:
				fmt.Fprintln(st.stderr, " (cached)")
			default:
				fmt.Fprintf(st.stderr, " (%s)\n", res.Duration.Round(100*time.Millisecond))
			}
		}
		if err != nil {
			if err := brokenErr(m, err); err != nil {
				return err
			}
			continue
		}
		built[m.Name] = true
	}
	if o.faults {
		return verifyFaults(st, o, targets, wls, built, broken, out)
	}

	dbs, err := verifyDatabases(ctx, st.stderr, stack.Engines(every))
	if err != nil {
		return err
	}
	defer dbs.Stop()

	t := &tally{w: st.stdout}
	for _, m := range targets {
		if len(targets) > 1 {
			t.service = m.Name
		}
		if len(wls[m.Name]) == 0 {
			fmt.Fprintf(st.stderr, "skipping %s: it serves none of %s\n", m.Name, strings.Join(o.workloads, ", "))
			continue
		}
		if !built[m.Name] {
			continue
		}
		if err := verifyOne(st, o, m, wls[m.Name], dbs, out, t); err != nil {
			if err := brokenErr(m, err); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	fmt.Fprintln(st.stdout, t.summary())
	if ctx.Err() != nil {
		return nil // the deferred check turns this into exitInterrupted
	}
	if len(broken) > 0 {
		return exitError{code: exitFailure, err: fmt.Errorf("could not build or start: %s (errors above)", strings.Join(broken, ", "))}
	}
	if derr != nil && o.service == "all" {
		return exitError{code: exitFailure, err: errors.New("some manifests are invalid (listed above)")}
	}
	return verifyOutcome(st, t)
}

// verifyOne prepares the databases for m, starts it, runs the suite and
// stops it.
func verifyOne(st *state, o verifyOptions, m *service.Manifest, ws []string, dbs *stack.Databases, out io.Writer, t *tally) error {
	ctx := st.ctx
	// A database left down by an interrupted outage check comes back first.
	if err := dbs.Up(ctx); err != nil {
		return err
	}
	known, err := dbs.Prepare(ctx, ws, db.PrepareOptions{SKURows: o.skuRows})
	if err != nil {
		return err
	}

	fmt.Fprintf(st.stderr, "starting %s\n", m.Name)
	svc, err := stack.StartService(ctx, m, dbs, stack.ServiceOptions{Log: out, HealthTimeout: o.healthTimeout})
	if err != nil {
		return err
	}
	defer func() {
		if _, err := svc.Stop(); err != nil {
			fmt.Fprintf(st.stderr, "showdown: %v\n", err)
		}
	}()
	fmt.Fprintf(st.stderr, "%s healthy at %s after %s\n", m.Name, svc.URL(), svc.Startup.Round(time.Millisecond))

	target := verify.Target{
		BaseURL:   svc.URL(),
		Workloads: ws,
		KnownSKUs: known,
		DatabaseDown: func(ctx context.Context, w string) error {
			s, err := dbs.For(w)
			if err != nil {
				return err
			}
			return s.Down(ctx)
		},
		DatabaseUp: func(ctx context.Context, w string) error {
			s, err := dbs.For(w)
			if err != nil {
				return err
			}
			return s.Up(ctx)
		},
		DatabaseHang: func(ctx context.Context, w string) error {
			s, err := dbs.For(w)
			if err != nil {
				return err
			}
			return s.Pause()
		},
		DatabaseResume: func(ctx context.Context, w string) error {
			s, err := dbs.For(w)
			if err != nil {
				return err
			}
			return s.Resume()
		},
		Statements:       dbs.Statements,
		OpenTransactions: dbs.OpenTransactions,
		Terminate:        func() error { return svc.Signal(syscall.SIGTERM) },
		Exited:           svc.Wait,
	}
	before := t.failed
	verify.Run(ctx, target, t.report)
	if n := t.failed - before; n > 0 {
		fmt.Fprintf(st.stderr, "%s: %d checks failed\n", m.Name, n)
		if tail := svc.LogTail(20); tail != "" && !o.verbose {
			fmt.Fprintf(st.stderr, "last lines of %s's output:\n%s\n", m.Name, indentBlock(tail, "  | "))
		}
	}
	return nil
}
