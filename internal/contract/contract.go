// Package contract checks stacks against the contract suite
// (internal/verify) as `showdown verify` does: each service built, then
// started alone on private databases, checked and stopped, the suite's
// outage checks driven through the databases' own hooks. The suite
// itself checks a URL, whoever started it; this package is what starts
// it here.
package contract

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

// Batch is one check of the selected services: what each is checked on
// (Workloads), and those that could not be built or started (Broken).
type Batch struct {
	Targets   []*service.Manifest
	Workloads map[string][]string
	// Names are the workloads asked for, for the line that skips a
	// service serving none of them.
	Names         []string
	SKURows       int
	HealthTimeout time.Duration
	// Verbose lets the builds' and services' output through to Log;
	// Progress takes the lines that say what happens (stderr).
	Verbose  bool
	Log      io.Writer
	Progress io.Writer
	Broken   []string
}

// failed records that m could not be built or started: with several
// services it is reported and the others are still checked (nil); with
// one, or after an interrupt, it is the error.
func (b *Batch) failed(ctx context.Context, m *service.Manifest, err error) error {
	if len(b.Targets) == 1 || ctx.Err() != nil {
		return err
	}
	fmt.Fprintf(b.Progress, "showdown: %v\n", err)
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" {
		fmt.Fprintf(b.Progress, "hint: %s\n", h.Hint())
	}
	b.Broken = append(b.Broken, m.Name)
	return nil
}

// Build builds each service that has workloads to check; it returns
// those built.
func (b *Batch) Build(ctx context.Context) (map[string]bool, error) {
	built := map[string]bool{}
	for _, m := range b.Targets {
		if len(b.Workloads[m.Name]) == 0 {
			continue
		}
		// "building x" then " (cached)" or " (12.3s)" on the same line,
		// unless the build's own output (Verbose) comes in between.
		fmt.Fprintf(b.Progress, "building %s", m.Name)
		if b.Verbose {
			fmt.Fprintln(b.Progress)
		}
		res, err := m.Build(ctx, b.Log)
		if !b.Verbose || err == nil {
			if b.Verbose {
				fmt.Fprintf(b.Progress, "built %s", m.Name)
			}
			switch {
			case err != nil:
				fmt.Fprintln(b.Progress)
			case res.Cached:
				fmt.Fprintln(b.Progress, " (cached)")
			default:
				fmt.Fprintf(b.Progress, " (%s)\n", res.Duration.Round(100*time.Millisecond))
			}
		}
		if err != nil {
			if err := b.failed(ctx, m, err); err != nil {
				return nil, err
			}
			continue
		}
		built[m.Name] = true
	}
	return built, nil
}

// Check runs the suite against each service built, one at a time, on
// dbs, and gives report each result with the service's name (empty when
// one service is checked).
func (b *Batch) Check(ctx context.Context, dbs *stack.Databases, built map[string]bool, report func(service string, r verify.Result)) error {
	for _, m := range b.Targets {
		name := ""
		if len(b.Targets) > 1 {
			name = m.Name
		}
		if len(b.Workloads[m.Name]) == 0 {
			fmt.Fprintf(b.Progress, "skipping %s: it serves none of %s\n", m.Name, strings.Join(b.Names, ", "))
			continue
		}
		if !built[m.Name] {
			continue
		}
		if err := b.stack(ctx, m, dbs, func(r verify.Result) { report(name, r) }); err != nil {
			if err := b.failed(ctx, m, err); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil
}

// stack prepares the databases for m, starts it, runs the suite and
// stops it; when checks failed, it says how many, with the last lines
// of the service's output unless they went to Log already.
func (b *Batch) stack(ctx context.Context, m *service.Manifest, dbs *stack.Databases, report func(verify.Result)) error {
	ws := b.Workloads[m.Name]
	// A database left down by an interrupted outage check comes back first.
	if err := dbs.Up(ctx); err != nil {
		return err
	}
	known, err := dbs.Prepare(ctx, ws, db.PrepareOptions{SKURows: b.SKURows})
	if err != nil {
		return err
	}

	fmt.Fprintf(b.Progress, "starting %s\n", m.Name)
	svc, err := stack.StartService(ctx, m, dbs, stack.ServiceOptions{Log: b.Log, HealthTimeout: b.HealthTimeout})
	if err != nil {
		return err
	}
	defer func() {
		if _, err := svc.Stop(); err != nil {
			fmt.Fprintf(b.Progress, "showdown: %v\n", err)
		}
	}()
	fmt.Fprintf(b.Progress, "%s healthy at %s after %s\n", m.Name, svc.URL(), svc.Startup.Round(time.Millisecond))

	failed := 0
	verify.Run(ctx, Target(svc, dbs, ws, known), func(r verify.Result) {
		if r.Status == verify.Fail {
			failed++
		}
		report(r)
	})
	if failed > 0 {
		fmt.Fprintf(b.Progress, "%s: %d checks failed\n", m.Name, failed)
		if tail := svc.LogTail(20); tail != "" && !b.Verbose {
			fmt.Fprintf(b.Progress, "last lines of %s's output:\n%s\n", m.Name, Indent(tail, "  | "))
		}
	}
	return nil
}

// Target is the suite's view of svc, started here on dbs for workloads
// ws (known: the SKUs its data holds): its URL, and the hooks that take
// a workload's database down, bring it up, hang and resume it, count its
// statements and open transactions, and stop the service.
func Target(svc *stack.Service, dbs *stack.Databases, ws []string, known []int64) verify.Target {
	server := func(w string, do func(stack.Server) error) error {
		s, err := dbs.For(w)
		if err != nil {
			return err
		}
		return do(s)
	}
	return verify.Target{
		BaseURL:   svc.URL(),
		Workloads: ws,
		KnownSKUs: known,
		DatabaseDown: func(ctx context.Context, w string) error {
			return server(w, func(s stack.Server) error { return s.Down(ctx) })
		},
		DatabaseUp: func(ctx context.Context, w string) error {
			return server(w, func(s stack.Server) error { return s.Up(ctx) })
		},
		DatabaseHang: func(ctx context.Context, w string) error {
			return server(w, func(s stack.Server) error { return s.Pause() })
		},
		DatabaseResume: func(ctx context.Context, w string) error {
			return server(w, func(s stack.Server) error { return s.Resume() })
		},
		Statements:       dbs.Statements,
		OpenTransactions: dbs.OpenTransactions,
		Terminate:        func() error { return svc.Signal(syscall.SIGTERM) },
		Exited:           svc.Wait,
	}
}

// Indent puts prefix before every line of s that is not empty.
func Indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
