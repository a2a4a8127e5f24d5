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
	targets, derr, err := verifyTargets(st, o, root)
	if err != nil {
		return err
	}
	wls, every, err := verifyWorkloads(o, targets)
	if err != nil {
		return err
	}
	b := &verifyBatch{st: st, o: o, targets: targets, wls: wls, out: io.Discard}
	if o.verbose {
		b.out = st.stderr
	}
	built, err := b.build()
	if err != nil {
		return err
	}
	if o.faults {
		return verifyFaults(st, o, targets, wls, built, b.broken, b.out)
	}

	dbs, err := verifyDatabases(ctx, st.stderr, stack.Engines(every))
	if err != nil {
		return err
	}
	defer dbs.Stop()
	t, err := b.check(dbs, built)
	if err != nil {
		return err
	}
	fmt.Fprintln(st.stdout, t.summary())
	if ctx.Err() != nil {
		return nil // the deferred check turns this into exitInterrupted
	}
	if len(b.broken) > 0 {
		return exitError{code: exitFailure, err: fmt.Errorf("could not build or start: %s (errors above)", strings.Join(b.broken, ", "))}
	}
	if derr != nil && o.service == "all" {
		return exitError{code: exitFailure, err: errors.New("some manifests are invalid (listed above)")}
	}
	return verifyOutcome(st, t)
}

// verifyTargets are the services --service selects: one, or all; derr
// holds the manifests' problems, which with all are printed and the
// valid manifests checked anyway.
func verifyTargets(st *state, o verifyOptions, root string) (targets []*service.Manifest, derr, err error) {
	all, folder, derr := discover(root, o.service)
	if o.service != "all" {
		m, err := findService(all, o.service, folder, derr)
		if err != nil {
			return nil, derr, err
		}
		return []*service.Manifest{m}, derr, nil
	}
	if derr != nil {
		// A broken manifest is a failure of the whole tree; check the
		// valid ones anyway so every problem shows at once.
		fmt.Fprintln(st.stderr, derr)
	}
	if len(all) == 0 {
		return nil, derr, fmt.Errorf("no valid manifest under %s/services/*/%s", root, service.ManifestFile)
	}
	return all, derr, nil
}

// verifyWorkloads are the workloads of each service: the flag's, all of
// which it must serve (with one service), or what each serves (with
// all); every lists them all.
func verifyWorkloads(o verifyOptions, targets []*service.Manifest) (wls map[string][]string, every []string, err error) {
	wls = map[string][]string{}
	for _, m := range targets {
		ws := m.Workloads
		if len(o.workloads) > 0 {
			ws = nil
			for _, w := range o.workloads {
				if m.Supports(w) {
					ws = append(ws, w)
				} else if len(targets) == 1 {
					return nil, nil, notServed(m, w)
				}
			}
		}
		wls[m.Name] = ws
		every = append(every, ws...)
	}
	return wls, every, nil
}

// verifyBatch is one verify of the selected services: what each is
// checked on (wls), and those that could not be built or started.
type verifyBatch struct {
	st      *state
	o       verifyOptions
	targets []*service.Manifest
	wls     map[string][]string
	broken  []string
	// out takes the builds' and services' output (-v), or nothing.
	out io.Writer
}

// failed records that m could not be built or started: with several
// services it is reported and the others are still checked (nil); with
// one, or after an interrupt, it is the error.
func (b *verifyBatch) failed(m *service.Manifest, err error) error {
	st := b.st
	if len(b.targets) == 1 || st.ctx.Err() != nil {
		return err
	}
	fmt.Fprintf(st.stderr, "showdown: %v\n", err)
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" {
		fmt.Fprintf(st.stderr, "hint: %s\n", h.Hint())
	}
	b.broken = append(b.broken, m.Name)
	return nil
}

// build builds each service that has workloads to check; it returns
// those built.
func (b *verifyBatch) build() (map[string]bool, error) {
	st, verbose := b.st, b.o.verbose
	built := map[string]bool{}
	for _, m := range b.targets {
		if len(b.wls[m.Name]) == 0 {
			continue
		}
		// "building x" then " (cached)" or " (12.3s)" on the same line,
		// unless the build's own output (-v) comes in between.
		fmt.Fprintf(st.stderr, "building %s", m.Name)
		if verbose {
			fmt.Fprintln(st.stderr)
		}
		res, err := m.Build(st.ctx, b.out)
		if !verbose || err == nil {
			if verbose {
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
			if err := b.failed(m, err); err != nil {
				return nil, err
			}
			continue
		}
		built[m.Name] = true
	}
	return built, nil
}

// check runs the suite against each service built, one at a time, and
// tallies the checks.
func (b *verifyBatch) check(dbs *stack.Databases, built map[string]bool) (*tally, error) {
	st := b.st
	t := &tally{w: st.stdout}
	for _, m := range b.targets {
		if len(b.targets) > 1 {
			t.service = m.Name
		}
		if len(b.wls[m.Name]) == 0 {
			fmt.Fprintf(st.stderr, "skipping %s: it serves none of %s\n", m.Name, strings.Join(b.o.workloads, ", "))
			continue
		}
		if !built[m.Name] {
			continue
		}
		if err := verifyOne(st, b.o, m, b.wls[m.Name], dbs, b.out, t); err != nil {
			if err := b.failed(m, err); err != nil {
				return nil, err
			}
		}
		if st.ctx.Err() != nil {
			break
		}
	}
	return t, nil
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
