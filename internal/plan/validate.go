package plan

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/cpulist"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/workloads"
)

// validate checks a plan with its defaults applied against catalog and
// returns every problem, each with its line and field.
func (p *Plan) validate(catalog Catalog) ErrorList {
	var errs ErrorList
	add := func(path []string, hint, format string, args ...any) {
		errs = append(errs, &Error{File: p.File, Line: p.line(path...), Field: strings.Join(path, "."), Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
	services := make([]string, 0, len(catalog))
	for s := range catalog {
		if !filepath.IsAbs(s) {
			services = append(services, s)
		}
	}
	sort.Strings(services)

	if p.Name == "" {
		add([]string{"name"}, "", "a plan needs a name")
	}
	if len(p.Implementations) == 0 {
		add([]string{"implementations"}, "one of: "+strings.Join(services, ", "), "no implementations")
	}
	l := p.Load
	seen := p.validateImplementations(catalog, services, add, func(e *Error) { errs = append(errs, e) })
	p.validateWorkloads(catalog, add)
	if l.Model != "closed" && l.Model != "open" {
		add([]string{"load", "model"}, "closed: levels are users; open: levels are requests per second", "model %q is neither closed nor open", l.Model)
	}
	if len(l.Levels) == 0 {
		add([]string{"load", "levels"}, "e.g. levels: [10, 50, 100]", "no load levels")
	}
	for i, v := range l.Levels {
		if v <= 0 {
			add([]string{"load", "levels", strconv.Itoa(i)}, "", "level %d must be positive", v)
		}
	}
	if l.Duration <= 0 {
		add([]string{"load", "duration"}, "", "duration must be positive")
	}
	if l.RampUp < 0 || (l.Duration > 0 && l.RampUp >= l.Duration) {
		add([]string{"load", "ramp_up"}, "ramp-up is part of each level's duration", "ramp_up %v must be shorter than duration %v", time.Duration(l.RampUp), time.Duration(l.Duration))
	}
	if l.RampUp > 0 && l.Model == "open" {
		add([]string{"load", "ramp_up"}, "remove it, or use model: closed", "ramp_up applies to the closed model only")
	}
	if l.Warmup < 0 || l.ThinkTime < 0 || l.Timeout <= 0 || l.MaxInflight < 0 || l.PaceSlack < 0 {
		add([]string{"load"}, "", "warmup, think_time, max_inflight and pace_slack must not be negative; timeout must be positive")
	}
	if _, err := load.ParseArrivals(l.Arrivals); err != nil {
		add([]string{"load", "arrivals"}, "poisson: random gaps, as from many clients (the default); even: clockwork", "%v", err)
	}
	if l.Connections < 0 || (l.MaxInflight > 0 && l.Connections > l.MaxInflight) {
		add([]string{"load", "connections"}, "e.g. connections: 50, at most max_inflight", "connections %d must be between 1 and max_inflight", l.Connections)
	}
	if l.Iterations < 0 || l.WarmupRequests < 0 {
		add([]string{"load"}, "", "iterations and warmup_requests must not be negative")
	}
	if l.Iterations > 0 && l.Model == "open" {
		add([]string{"load", "iterations"}, "remove it, or use model: closed", "iterations per user apply to the closed model only")
	}
	if l.WarmupRequests > 0 && p.has("load", "warmup") {
		add([]string{"load", "warmup_requests"}, "keep one of them", "warmup_requests and warmup exclude each other")
	}
	if p.Trials < 1 || p.Trials > 100 {
		add([]string{"trials"}, "or auto", "trials must be between 1 and 100, not %d", p.Trials)
	}
	p.validateRounds(add)
	p.validateAtRate(add)
	p.validateCompare(add)
	errs = append(errs, p.validateCapacity(add)...)
	p.validateCores(add)
	if p.TrialsAuto && p.TrialsMax > 100 {
		add([]string{"trials_max"}, "", "trials_max must be at most 100, not %d", p.TrialsMax)
	}
	if !contains([]string{"trial", "workload"}, p.ServiceRestart) {
		add([]string{"service_restart"}, "trial (warm once, measure every workload) or workload (a cold start per workload)", "unknown service_restart %q", p.ServiceRestart)
	}
	if !contains([]string{VerifyFull, VerifyQuick}, p.Verify) {
		add([]string{"verify"}, "full (the contract suite's non-destructive checks) or quick (one iteration of the scenario)", "unknown verify %q", p.Verify)
	}
	if l.WarmupMax < 0 || l.WarmupAuto && l.WarmupMax < Duration(stats.DefaultSteadyWindow*time.Second) {
		add([]string{"load", "warmup_max"}, "e.g. warmup_max: 3m", "warmup_max %v is shorter than the steady-state window", time.Duration(l.WarmupMax))
	}
	d := p.Database
	if d.MaxConnections < 1 {
		add([]string{"database", "max_connections"}, "", "must be positive")
	}
	if !contains([]string{"level", "trial", "never"}, d.Reset) {
		add([]string{"database", "reset"}, "level, trial or never", "unknown reset policy %q", d.Reset)
	}
	if !contains([]string{"trial", "never"}, d.Restart) {
		add([]string{"database", "restart"}, "trial or never", "unknown restart policy %q", d.Restart)
	}
	if d.SKURows < 1 || d.SKURows > 100_000_000 {
		add([]string{"database", "sku_rows"}, "", "sku_rows must be between 1 and 100,000,000")
	}
	if len(d.SKUIndexes) > 1 && !slices.ContainsFunc(p.Workloads, func(w Workload) bool { return w.Name == "sku" }) {
		add([]string{"database", "sku_index"}, "add the sku workload, or give one value", "sku_index as a dimension needs the sku workload")
	}
	for _, f := range []struct {
		name, v string
	}{{"service_cpus", p.Placement.ServiceCPUs}, {"generator_cpus", p.Placement.GeneratorCPUs}, {"database_cpus", p.Placement.DatabaseCPUs}} {
		if f.v == "" {
			continue
		}
		if err := cpulist.Check(f.v, p.machine.CPUs); err != nil {
			add([]string{"placement", f.name}, fmt.Sprintf("the machine has CPUs %s", p.machine), "%v", err)
		}
	}
	if n := len(p.machine.CPUs); p.Limits.CPU < 0 || p.Limits.CPU > float64(n) {
		add([]string{"limits", "cpu"}, fmt.Sprintf("between 0.01 and %d, the machine's CPUs", n), "cpu quota %v is out of range", p.Limits.CPU)
	}
	for i, r := range p.Replicas {
		if r < 1 || r > 10_000 {
			add([]string{"replicas", strconv.Itoa(i)}, "e.g. replicas: [1, 100]", "replicas %d must be between 1 and 10,000", r)
		}
	}
	g := p.Generator
	if g.Pods < 0 || g.Pods > 10_000 || g.CPU < 0 || g.Memory < 0 || g.MicrosPerRequest < 0 {
		add([]string{"generator"}, "pods between 0 (sized from the top rate) and 10,000", "pods, cpu, memory and us_per_request must not be negative")
	}
	if u := d.URL; u != "" && !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
		add([]string{"database", "url"}, "postgres://user:password@host:5432/db?sslmode=require", "not a PostgreSQL URL")
	}
	if u := d.MySQLURL; u != "" && !strings.HasPrefix(u, "mysql://") {
		add([]string{"database", "mysql_url"}, "mysql://user:password@host:3306/db", "not a MySQL URL")
	}
	p.validatePublished(seen, add)
	for i, e := range p.FailIf {
		if _, err := load.ParseThreshold(e); err != nil {
			add([]string{"fail_if", strconv.Itoa(i)}, "fail_if takes "+load.ThresholdSyntax, "%v", err)
		}
	}
	if p.Limits.Memory < 0 || (p.Limits.Memory > 0 && p.Limits.Memory < 32<<20) {
		add([]string{"limits", "memory"}, "at least 32MiB", "memory limit %d bytes is too small", p.Limits.Memory)
	}
	p.validateFaults(catalog, add)
	return errs
}

// adder records one problem of a plan: the path of its field, a hint and
// the message.
type adder func(path []string, hint, format string, args ...any)

// validateImplementations checks each implementation: known, once, its
// own problems (addErr), warm-up, variant and verify; it returns the ids
// seen.
func (p *Plan) validateImplementations(catalog Catalog, services []string, add adder, addErr func(*Error)) map[string]bool {
	seen := map[string]bool{}
	for i, im := range p.Implementations {
		path := []string{"implementations", strconv.Itoa(i)}
		if _, ok := catalog[im.key()]; !ok && im.Dir != "" {
			add(append(path, "path"), "a stack's folder holds its manifest, showdown.yaml (docs/your-stack.md); path is relative to the plan's folder", "no stack in %s (%s)", im.Path, im.Dir)
		} else if !ok && im.Path == "" && (im.Service != "" || len(im.problems) == 0) {
			add(path, "one of: "+strings.Join(services, ", ")+"; or a stack's folder: path: ../our-service", "unknown service %q", im.Service)
		}
		if seen[im.ID()] {
			add(path, "give one of them a variant name", "%s appears twice", im.ID())
		}
		seen[im.ID()] = true
		for _, e := range im.problems {
			addErr(&Error{File: p.File, Line: e.Line, Field: strings.Join(append(path, e.Field), "."), Msg: e.Msg, Hint: e.Hint})
		}
		if w := im.Warmup; w != nil {
			if w.Auto && w.Max < Duration(stats.DefaultSteadyWindow*time.Second) {
				add(append(path, "warmup_max"), "e.g. warmup_max: 3m", "warmup_max %v is shorter than the steady-state window", time.Duration(w.Max))
			}
			if w.Max < 0 {
				add(append(path, "warmup_max"), "", "warmup_max must not be negative")
			}
		}
		if im.Variant != "" && !regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`).MatchString(im.Variant) {
			add(append(path, "variant"), "lower-case letters, digits, '-', '_', '.'", "bad variant name %q", im.Variant)
		}
		if im.Verify != "" && !contains([]string{VerifyFull, VerifyQuick}, im.Verify) {
			add(append(path, "verify"), "full or quick", "unknown verify %q", im.Verify)
		}
	}
	return seen
}

// validateWorkloads checks each workload: known, its scenario file, and
// that every implementation serves it.
func (p *Plan) validateWorkloads(catalog Catalog, add adder) {
	if len(p.Workloads) == 0 {
		add([]string{"workloads"}, "any of: "+strings.Join(workloads.Names, ", "), "no workloads")
	}
	for i, w := range p.Workloads {
		path := []string{"workloads", strconv.Itoa(i)}
		if !contains(workloads.Names, w.Name) {
			add(path, "one of: "+strings.Join(workloads.Names, ", "), "unknown workload %q", w.Name)
			continue
		}
		if w.Scenario != "" {
			if _, err := ReadScenario(w.Scenario); err != nil {
				add(append(path, "scenario"), "workloads/... names a scenario built into showdown; other paths are relative to where showdown runs", "scenario file: %v", err)
			}
		}
		for _, im := range p.Implementations {
			if sw, ok := catalog[im.key()]; ok && !contains(sw, w.Name) {
				add(path, "drop the workload or the implementation", "%s does not implement workload %s (it has %s)", im.Service, w.Name, strings.Join(sw, ", "))
			}
		}
	}
}

// validatePublished checks each published figure set against the plan's
// workloads, levels, database dimension, metrics and implementations
// (seen), and fills its workload and database label.
func (p *Plan) validatePublished(seen map[string]bool, add adder) {
	l, d := p.Load, p.Database
	for i := range p.Published {
		pub := &p.Published[i]
		path := []string{"published", strconv.Itoa(i)}
		if pub.Workload == "" && len(p.Workloads) > 0 {
			pub.Workload = p.Workloads[0].Name
		}
		known := false
		for _, w := range p.Workloads {
			known = known || w.Name == pub.Workload
		}
		if !known {
			add(append(path, "workload"), "one of the plan's workloads", "workload %q is not in the plan", pub.Workload)
		}
		if !slices.Contains(l.Levels, pub.Level) {
			add(append(path, "level"), "one of the plan's load levels", "level %d is not in the plan", pub.Level)
		}
		switch {
		case len(d.SKUIndexes) > 1 && pub.SKUIndex == nil:
			add(path, "e.g. sku_index: false (the source's setup)", "the plan's database dimension needs sku_index: which value the figures are compared at")
		case len(d.SKUIndexes) > 1 && !slices.Contains(d.SKUIndexes, *pub.SKUIndex):
			add(append(path, "sku_index"), "one of the plan's sku_index values", "sku_index %v is not in the plan", *pub.SKUIndex)
		case len(d.SKUIndexes) > 1:
			pub.Database = SKUIndexLabel(*pub.SKUIndex)
		case pub.SKUIndex != nil && *pub.SKUIndex != *d.SKUIndex:
			add(append(path, "sku_index"), "the plan's database.sku_index", "sku_index %v is not the plan's", *pub.SKUIndex)
		}
		if _, ok := PublishedMetrics[pub.Metric]; !ok {
			add(append(path, "metric"), "throughput, mean_ms, p50_ms, p90_ms, p95_ms, p99_ms, max_ms, error_percent or rss_peak_bytes", "unknown metric %q", pub.Metric)
		}
		if len(pub.Figures) < 2 {
			add(append(path, "figures"), "e.g. figures: {go-stdlib: 14200, java-spring: 5960}", "a ranking needs at least two figures")
		}
		for id := range pub.Figures {
			if !seen[id] {
				add(append(path, "figures"), "an implementation id of this plan, e.g. java-spring or go-stdlib+logging", "no implementation %q in the plan", id)
			}
		}
	}
}

// validateFaults checks the fault test's settings.
func (p *Plan) validateFaults(catalog Catalog, add adder) {
	if f := p.Faults; f != nil {
		for i, n := range f.Inject {
			if !slices.Contains(FaultNames, n) {
				add([]string{"faults", "inject", strconv.Itoa(i)}, "one of: "+faultList(), "unknown fault %q", n)
			}
		}
		if f.Workers < 1 || f.Workers > 1000 {
			add([]string{"faults", "workers"}, "1 .. 1000", "%d workers is out of range", f.Workers)
		}
		if time.Duration(f.PerFault) < time.Second {
			add([]string{"faults", "per_fault"}, "at least 1s", "%v is too short", time.Duration(f.PerFault))
		}
		if f.Pause < 0 {
			add([]string{"faults", "pause"}, "e.g. 5s", "%v is negative", time.Duration(f.Pause))
		}
		if !slices.ContainsFunc(p.Implementations, func(im Implementation) bool { return slices.Contains(catalog[im.key()], "bank") }) {
			add([]string{"faults"}, "add an implementation that serves bank", "no implementation of the plan serves bank, the workload the fault test runs")
		}
	}
}

// faultList names every fault, comma-separated.
func faultList() string {
	names := make([]string, len(FaultNames))
	for i, f := range FaultNames {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}
