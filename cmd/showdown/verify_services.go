package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/internal/verify"
)

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
	var dirs []string
	if service.IsFolder(o.service) {
		dirs = append(dirs, o.service)
	}
	all, derr := service.Discover(root, dirs...)
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
		m, err := service.Find(all, o.service)
		if err != nil {
			if derr != nil && len(dirs) > 0 {
				return derr // the folder's own problems, located, with their hint
			}
			if derr != nil {
				return fmt.Errorf("%w\n%v", err, derr)
			}
			return usageError{err: err, hint: hintOf(err, "run 'showdown services' for the list")}
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
