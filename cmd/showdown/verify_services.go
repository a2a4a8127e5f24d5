package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/showdownlab/showdown/internal/contract"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

// verifyServices builds, starts and checks each selected service against
// private databases (contract.Batch), stopping everything it started
// whatever happens.
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
	b := &contract.Batch{Targets: targets, Workloads: wls, Names: o.workloads, SKURows: o.skuRows, HealthTimeout: o.healthTimeout,
		Verbose: o.verbose, Log: io.Discard, Progress: st.stderr}
	if o.verbose {
		b.Log = st.stderr
	}
	built, err := b.Build(ctx)
	if err != nil {
		return err
	}
	if o.faults {
		return verifyFaults(st, o, targets, wls, built, b.Broken, b.Log)
	}

	dbs, err := verifyDatabases(ctx, st.stderr, stack.Engines(every))
	if err != nil {
		return err
	}
	defer dbs.Stop()
	t := &tally{w: st.stdout}
	if err := b.Check(ctx, dbs, built, t.report); err != nil {
		return err
	}
	fmt.Fprintln(st.stdout, t.summary())
	if ctx.Err() != nil {
		return nil // the deferred check turns this into exitInterrupted
	}
	if len(b.Broken) > 0 {
		return exitError{code: exitFailure, err: fmt.Errorf("could not build or start: %s (errors above)", strings.Join(b.Broken, ", "))}
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
