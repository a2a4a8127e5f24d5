package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/k8s"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/warmup"
	"github.com/showdownlab/showdown/load"
)

func runK8sShard(st *state, args []string) error {
	fs := newFlagSet(st, "k8s shard", "--count N [flags] -- ATTACK FLAGS\n\nRuns 'showdown attack --shard i/N' with i = INDEX+1 (Kubernetes' completion index is\n0-based, shards are 1-based), starting at --start-at, then keeps its results until collected.")
	count := fs.Int("count", 0, "number of shards `N` (required)")
	index := fs.Int("index", -1, "0-based `index` (default: $JOB_COMPLETION_INDEX)")
	startAt := fs.String("start-at", "", "RFC 3339 `instant` every shard starts at")
	out := fs.String("out", k8s.ResultsDir, "write results to `dir`/shard-i")
	hold := fs.Duration("hold", k8s.DefaultHold, "keep the results this `long` for the controller to copy")
	skuRows := fs.Int("sku-rows", 0, "sku workload: the rows the database holds, from which the known sku_ids follow")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var errs []error
	if *index < 0 {
		v := st.getenv("JOB_COMPLETION_INDEX")
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("--index not given and JOB_COMPLETION_INDEX is %q", v))
		}
		*index = n
	}
	if *count < 1 || *index >= *count {
		errs = append(errs, fmt.Errorf("--count %d and index %d: want 0 <= index < count", *count, *index))
	}
	var start time.Time
	if *startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, *startAt)
		if err != nil {
			errs = append(errs, fmt.Errorf("--start-at: %w", err))
		}
		start = t
	}
	if len(errs) > 0 {
		return usageError{err: errors.Join(errs...), hint: "showdown k8s shard --count 4 --index 0 --start-at 2026-11-23T08:00:00Z -- --rate 1000 --duration 10s URL"}
	}
	shard := fmt.Sprintf("%d/%d", *index+1, *count)
	dir := filepath.Join(*out, "shard-"+strconv.Itoa(*index+1))
	afs := newFlagSet(st, "attack", attackSynopsis)
	var af attackFlags
	af.define(afs)
	apos, err := parseInterspersed(afs, append(fs.Args(), "--shard", shard, "--out", dir))
	if err != nil {
		return err
	}
	skuLists(&af, *skuRows)
	p, err := af.plan(apos)
	if err != nil {
		return err
	}
	p.record = map[string]string{"shard": shard, "start-at": *startAt}
	if !start.IsZero() {
		fmt.Fprintf(st.stderr, "shard %s: starting at %s (in %s)\n", shard, start.UTC().Format(time.RFC3339Nano), time.Until(start).Round(time.Millisecond))
	}
	if k8s.WaitForStart(st.ctx, start) != nil {
		return exitError{code: exitInterrupted, err: errors.New("interrupted before the start instant")}
	}
	aerr := attack(st, p)
	verdict, err := k8s.MarkDone(dir, aerr)
	if err != nil {
		return err
	}
	fmt.Fprintf(st.stderr, "shard %s: done (%s), holding %s for collection\n", shard, verdict, dir)
	if *hold > 0 && !k8s.Hold(st.ctx, dir, *hold) {
		fmt.Fprintf(st.stderr, "shard %s: not collected within %s\n", shard, *hold)
	}
	return aerr
}

// skuLists gives the sku scenario the ids the database holds, which
// follow from the seed and the row count (skuRows > 0), before the
// scenario is loaded: its pick_list needs them.
func skuLists(af *attackFlags, skuRows int) {
	if skuRows <= 0 {
		return
	}
	ids := db.KnownSKUIDs(af.seed, skuRows, db.DefaultKnownSKUs)
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = strconv.FormatInt(id, 10)
	}
	af.lists = map[string][]string{"sku_ids": list}
}

func runK8sWarmup(st *state, args []string) error {
	fs := newFlagSet(st, "k8s warmup", "--max D [--auto] [flags] -- ATTACK FLAGS\n\nDrives the attack's load for at most --max and, with --auto, stops as soon as the\nlocal lab's steady-state rule holds (package warmup's drive loop, the lab's own); writes\nthe warm-up's record to --out/warmup.json and keeps it until collected.")
	maxD := fs.Duration("max", 0, "the warm-up's longest `time` (required)")
	auto := fs.Bool("auto", false, "stop once the steady-state rule holds (warmup: auto)")
	noiseCV := fs.Float64("noise-cv", 0, "hold the rule to this machine noise `floor` (per-second CV, as noise.Floor's max_cv)")
	out := fs.String("out", k8s.ResultsDir+"/"+k8s.WarmupDir, "write warmup.json to `dir`")
	hold := fs.Duration("hold", k8s.DefaultHold, "keep the record this `long` for the controller to copy")
	skuRows := fs.Int("sku-rows", 0, "sku workload: the rows the database holds")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *maxD <= 0 {
		return usageError{err: errors.New("--max is required"), hint: "showdown k8s warmup --max 3m --auto -- --rate 500 --duration 3m URL"}
	}
	afs := newFlagSet(st, "attack", attackSynopsis)
	var af attackFlags
	af.define(afs)
	apos, err := parseInterspersed(afs, append(fs.Args(), "--duration", maxD.String()))
	if err != nil {
		return err
	}
	skuLists(&af, *skuRows)
	p, err := af.plan(apos)
	if err != nil {
		return err
	}
	_, open := p.model.(load.OpenModel)
	watch := warmup.NewWatch(plan.Warmup{Auto: *auto, Max: plan.Duration(*maxD), Time: plan.Duration(*maxD)}, open)
	watch.Floor(*noiseCV)
	// The service's threads run in another pod: its runtime cannot be
	// recognised (warmup.WatchRuntime), so the trend rule alone applies.
	rec, aerr := watch.Drive(st.ctx, func(ctx context.Context, on func(load.Progress)) (*load.Result, error) {
		return load.NewAttacker(append(append([]load.Option(nil), p.opts...), load.OnProgress(on))...).Attack(ctx, p.sc, p.model)
	}, nil)
	if err := results.WriteWarmup(*out, rec); err != nil {
		return err
	}
	if _, err := k8s.MarkDone(*out, aerr); err != nil {
		return err
	}
	fmt.Fprintf(st.stderr, "warm-up: %.1f s, %d requests, steady %v; holding %s for collection\n", rec.Seconds, rec.Requests, rec.Steady, *out)
	if *hold > 0 && !k8s.Hold(st.ctx, *out, *hold) {
		fmt.Fprintf(st.stderr, "warm-up: not collected within %s\n", *hold)
	}
	return aerr
}
