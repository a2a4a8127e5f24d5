package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/k8s"
	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/load/atomicfile"
	"github.com/showdownlab/showdown/workloads"
)

func runK8sSampler(st *state, args []string) error {
	fs := newFlagSet(st, "k8s sampler", "[flags]\n\nSamples the service's process tree (found in the pod's shared process namespace) to CSV.")
	out := fs.String("out", k8s.SamplesDir+"/samples.csv", "CSV `file` to write")
	interval := fs.Duration("interval", monitor.DefaultInterval, "time between samples")
	procDir := fs.String("proc", "/proc", "the proc file system's `dir`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	defer f.Close()
	cw, err := monitor.NewCSVWriter(f)
	if err != nil {
		return err
	}
	self := os.Getpid()
	// The service may start after the sampler or restart (a crash): find
	// it again each time, bounded by the pod's life (the context).
	for st.ctx.Err() == nil {
		pid, err := k8s.ServicePID(*procDir, self)
		if err != nil {
			select {
			case <-time.After(time.Second):
			case <-st.ctx.Done():
			}
			continue
		}
		fmt.Fprintf(st.stderr, "sampler: sampling pid %d\n", pid)
		var werr error
		err = monitor.Run(st.ctx, pid, *interval, func(s monitor.Sample) {
			if werr == nil {
				werr = cw.Write(s)
			}
		})
		if werr != nil {
			return werr
		}
		if err != nil && !errors.Is(err, monitor.ErrGone) && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return nil
}

func runK8sInitDB(st *state, args []string) error {
	fs := newFlagSet(st, "k8s initdb", "--engine postgres|mysql --workloads W,... --out DIR")
	engine := fs.String("engine", "", "postgres or mysql")
	ws := fs.String("workloads", "", "comma-separated workloads")
	out := fs.String("out", "/initdb", "write the files to `dir`")
	seed := fs.Int64("seed", 1, "seed of the generated sku rows")
	skuRows := fs.Int("sku-rows", db.DefaultSKURows, "rows of the sku table")
	skuIndex := fs.Bool("sku-index", true, "create the index on sku_id")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *engine != "postgres" && *engine != "mysql" {
		return usageError{err: fmt.Errorf("--engine %q: want postgres or mysql", *engine)}
	}
	var list []string
	if *ws != "" {
		list = strings.Split(*ws, ",")
	}
	if err := k8s.WriteInitDB(*out, *engine, list, *seed, *skuRows, *skuIndex); err != nil {
		return err
	}
	fmt.Fprintf(st.stderr, "initdb: wrote %s's files for %s to %s\n", *engine, *ws, *out)
	return nil
}

func runK8sPack(st *state, args []string) error {
	fs := newFlagSet(st, "k8s pack", "DIR [--done] [--release]")
	done := fs.Bool("done", false, "fail unless the shard in DIR has finished")
	release := fs.Bool("release", false, "mark DIR collected afterwards, which lets its shard exit")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{err: errors.New("one folder expected")}
	}
	if *done {
		if _, err := os.Stat(filepath.Join(pos[0], k8s.DoneFile)); err != nil {
			return exitError{code: exitNotFinished, err: fmt.Errorf("%s: not finished yet", pos[0])}
		}
	}
	if err := k8s.Pack(st.stdout, pos[0]); err != nil {
		return err
	}
	if *release {
		return atomicfile.WriteFile(filepath.Join(pos[0], k8s.CollectedFile), nil, 0o644)
	}
	return nil
}

func runK8sAudit(st *state, args []string) error {
	fs := newFlagSet(st, "k8s audit", "--workload W [--url URL]\n\nChecks the workload's invariants (workloads/W/audit.sql) in the database at URL\n(default: $DATABASE_URL for PostgreSQL workloads, $MYSQL_URL for MariaDB ones).")
	workload := fs.String("workload", "", "the `workload` whose invariants to check")
	dbURL := fs.String("url", "", "the database's `URL` (default from the environment)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !slices.Contains(workloads.Names, *workload) {
		return usageError{err: fmt.Errorf("--workload %q: want one of %s", *workload, strings.Join(workloads.Names, ", "))}
	}
	if *dbURL == "" {
		switch workloads.Database(*workload) {
		case workloads.Postgres:
			*dbURL = st.getenv("DATABASE_URL")
		case workloads.MySQL:
			*dbURL = st.getenv("MYSQL_URL")
		default:
			fmt.Fprintf(st.stdout, "audit: %s has no database\n", *workload)
			return nil
		}
	}
	if *dbURL == "" {
		return usageError{err: errors.New("no database URL: pass --url or set DATABASE_URL / MYSQL_URL")}
	}
	vs, err := db.AuditURL(st.ctx, *workload, *dbURL, -1, -1)
	if err != nil {
		return err
	}
	for _, v := range vs {
		fmt.Fprintf(st.stdout, "FAIL %s/%s: %s\n", *workload, v.Check, v.Detail)
	}
	if len(vs) > 0 {
		return exitError{code: exitCheckFailed, err: fmt.Errorf("audit of %s: %d invariant(s) broken", *workload, len(vs))}
	}
	fmt.Fprintf(st.stdout, "audit: %s's invariants hold\n", *workload)
	return nil
}
