package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/contract"
	"github.com/showdownlab/showdown/internal/faults"
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
	fs := newFlagSet(st, "verify", "--service NAME|FOLDER|all [--workload W,...] | --url URL --workload W,...")
	var o verifyOptions
	var wl stringList
	fs.StringVar(&o.service, "service", "", "implementation to build, start and check: a name under services/, a stack's folder (./our-service, ../x), or all")
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
	passed, failed, skipd int
}

// report counts r and prints it, named with its service when several
// services are checked (service is "" with one).
func (t *tally) report(service string, r verify.Result) {
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
	if service != "" {
		name = service + ": " + name
	}
	line := fmt.Sprintf("%s %s (%s)", r.Status, name, roundElapsed(r.Elapsed))
	if r.Status == verify.Skip && r.Detail != "" {
		line += ": " + r.Detail
	}
	fmt.Fprintln(t.w, line)
	if r.Status == verify.Fail {
		if r.Detail != "" {
			fmt.Fprintln(t.w, contract.Indent(r.Detail, "    "))
		}
		if r.Request != "" {
			fmt.Fprintln(t.w, "    request:")
			fmt.Fprintln(t.w, contract.Indent(r.Request, "      "))
		}
		if r.Response != "" {
			fmt.Fprintln(t.w, "    response:")
			fmt.Fprintln(t.w, contract.Indent(r.Response, "      "))
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

// verifyURL checks a service someone else started; hooks are absent, so
// the outage and shutdown checks are skipped.
func verifyURL(st *state, o verifyOptions) error {
	t := &tally{w: st.stdout}
	verify.Run(st.ctx, verify.Target{BaseURL: strings.TrimRight(o.url, "/"), Workloads: o.workloads}, func(r verify.Result) { t.report("", r) })
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
