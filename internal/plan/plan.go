// Package plan reads experiment plans (plans/*.yaml): implementations,
// workloads, load levels, trials, database policy, placement and limits,
// resolved with defaults and validated all at once. Package lab runs them.
package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/showdownlab/showdown/internal/cgroup"
	"github.com/showdownlab/showdown/internal/located"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/workloads"
)

// Defaults applied to fields a plan leaves out.
const (
	DefaultTrials         = 1
	DefaultDuration       = 10 * time.Second
	DefaultWarmupMax      = 3 * time.Minute // the JVM on one CPU needs about that (issue measurements: steady from ~110 s)
	DefaultTrialsMax      = 10
	DefaultTimeout        = 30 * time.Second
	DefaultMaxConnections = workloads.DefaultMaxConnections
	DefaultSKURows        = workloads.DefaultSKURows
	DefaultSeed           = workloads.DefaultSeed
)

// Plan is one experiment, as read from plans/*.yaml and resolved with
// defaults.
type Plan struct {
	Name            string           `yaml:"name" json:"name"`
	Description     string           `yaml:"description" json:"description,omitempty"`
	Implementations []Implementation `yaml:"implementations" json:"implementations"`
	Workloads       []Workload       `yaml:"workloads" json:"workloads"`
	Load            Load             `yaml:"load" json:"load"`
	// Trials is how many fresh starts of every implementation are
	// measured; with TrialsAuto (`trials: auto`) at least Trials and at
	// most TrialsMax, until every cell's 95% confidence interval of
	// throughput is within ±3% of its mean.
	Trials     int  `yaml:"trials" json:"trials"`
	TrialsAuto bool `yaml:"-" json:"trials_auto,omitempty"`
	TrialsMax  int  `yaml:"trials_max" json:"trials_max,omitempty"`
	// ServiceRestart is when a service is started afresh: "trial" (once
	// per trial, warmed up and measured on every workload) or "workload"
	// (a cold start for each workload).
	ServiceRestart string            `yaml:"service_restart" json:"service_restart"`
	Env            map[string]string `yaml:"env" json:"env,omitempty"`
	Database       Database          `yaml:"database" json:"database"`
	Placement      Placement         `yaml:"placement" json:"placement"`
	Limits         Limits            `yaml:"limits" json:"limits"`
	// Replicas are the pod counts of every implementation on Kubernetes
	// (showdown k8s); a list is a dimension of the results like the load
	// levels. The local runner starts one process and ignores it.
	Replicas []int `yaml:"replicas" json:"replicas,omitempty"`
	// Generator sizes the load generator on Kubernetes.
	Generator Generator `yaml:"generator" json:"generator,omitzero"`

	// File is where the plan was read from.
	File string `yaml:"-" json:"file"`
	root *yaml.Node
}

// Implementation is a service, optionally as a variant: the same service
// with other environment (LOG_REQUESTS=true, VIRTUAL_THREADS=true, ...).
// In YAML it is either the service name or a mapping.
type Implementation struct {
	Service string            `yaml:"service" json:"service"`
	Variant string            `yaml:"variant" json:"variant,omitempty"`
	Env     map[string]string `yaml:"env" json:"env,omitempty"`
}

// ID names the implementation in results: "java-spring" or
// "java-spring+vthreads".
func (i Implementation) ID() string {
	if i.Variant == "" {
		return i.Service
	}
	return i.Service + "+" + i.Variant
}

// UnmarshalYAML accepts "name" or {service, variant, env}.
func (i *Implementation) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		i.Service = n.Value
		return nil
	}
	type plain Implementation
	return n.Decode((*plain)(i))
}

// Workload is a workload and the scenario its virtual users run. In YAML
// it is either the workload name or a mapping.
type Workload struct {
	Name string `yaml:"name" json:"name"`
	// Scenario is a scenario file; empty means the workload's default
	// (workloads/<name>/scenario.yaml).
	Scenario string `yaml:"scenario" json:"scenario,omitempty"`
}

// UnmarshalYAML accepts "name" or {name, scenario}.
func (w *Workload) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		w.Name = n.Value
		return nil
	}
	type plain Workload
	return n.Decode((*plain)(w))
}

// Load is how each level is driven.
type Load struct {
	// Model is "closed" (levels are concurrent users) or "open" (levels
	// are arrival rates per second).
	Model  string `yaml:"model" json:"model"`
	Levels []int  `yaml:"levels" json:"levels"`
	// RampUp starts the closed model's users evenly over this time.
	RampUp Duration `yaml:"ramp_up" json:"ramp_up"`
	// Duration is how long each level runs, ramp-up included.
	Duration Duration `yaml:"duration" json:"duration"`
	// Warmup runs before the first level of each workload on a service
	// start, at the first level's load, and is not counted: a fixed time,
	// or with WarmupAuto until the steady-state rule holds (package lab,
	// plans/README.md), at most WarmupMax. `warmup: auto` in YAML, and the
	// default.
	Warmup     Duration `yaml:"warmup" json:"warmup"`
	WarmupAuto bool     `yaml:"-" json:"warmup_auto,omitempty"`
	WarmupMax  Duration `yaml:"warmup_max" json:"warmup_max,omitempty"`
	ThinkTime  Duration `yaml:"think_time" json:"think_time,omitempty"`
	Timeout    Duration `yaml:"timeout" json:"timeout"`
	// MaxInflight bounds concurrent requests in the open model (0: the
	// engine's default).
	MaxInflight int `yaml:"max_inflight" json:"max_inflight,omitempty"`
}

// Database is the database policy.
type Database struct {
	MaxConnections int `yaml:"max_connections" json:"max_connections"`
	// Reset empties what a run wrote: "level" (before every level),
	// "trial" (before each implementation's levels) or "never".
	Reset string `yaml:"reset" json:"reset"`
	// Restart restarts the database servers: "trial" (before each
	// implementation's levels, as the bank rematch did) or "never".
	Restart  string `yaml:"restart" json:"restart"`
	SKURows  int    `yaml:"sku_rows" json:"sku_rows"`
	SKUIndex *bool  `yaml:"sku_index" json:"sku_index"`
	Seed     int64  `yaml:"seed" json:"seed"`
	// URL is a managed PostgreSQL (postgres://...) that showdown k8s uses
	// instead of starting its own; MySQLURL is the same for MariaDB/MySQL.
	URL      string `yaml:"url" json:"url,omitempty"`
	MySQLURL string `yaml:"mysql_url" json:"mysql_url,omitempty"`
}

// Generator is the load generator on Kubernetes: an Indexed Job whose pods
// each run one shard of the load. Zero fields take showdown k8s's defaults.
type Generator struct {
	// Pods is the number of shards; 0 sizes it from the top rate.
	Pods int `yaml:"pods" json:"pods,omitempty"`
	// CPU and Memory are each pod's requests and limits.
	CPU    float64  `yaml:"cpu" json:"cpu,omitempty"`
	Memory ByteSize `yaml:"memory" json:"memory,omitempty"`
	// MicrosPerRequest is the generator's CPU time per request, which
	// sizes the pods.
	MicrosPerRequest float64 `yaml:"us_per_request" json:"us_per_request,omitempty"`
}

// Placement pins processes to CPUs (taskset list syntax).
type Placement struct {
	ServiceCPUs   string `yaml:"service_cpus" json:"service_cpus"`
	GeneratorCPUs string `yaml:"generator_cpus" json:"generator_cpus"`
	DatabaseCPUs  string `yaml:"database_cpus" json:"database_cpus"`
}

// Limits cap the service.
type Limits struct {
	// CPU is a quota in cores; 0 for none.
	CPU float64 `yaml:"cpu" json:"cpu,omitempty"`
	// Memory is a cap in bytes; 0 for none.
	Memory ByteSize `yaml:"memory" json:"memory,omitempty"`
}

// Duration is a time.Duration written as "10s", "1m30s".
type Duration time.Duration

// UnmarshalYAML parses Go duration syntax.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		// A *yaml.TypeError lets the decoder go on and report the rest.
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration (examples: 500ms, 10s, 2m)", n.Line, n.Value)}}
	}
	*d = Duration(v)
	return nil
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(time.Duration(d).String())), nil
}

// ByteSize is a size in bytes written as "1GiB", "512MiB", "1G" or bytes.
type ByteSize int64

var sizeRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([KMGT]i?B?|B)?$`)

// ParseByteSize reads "1GiB", "512MiB", "1G" (powers of 1024) or bytes.
func ParseByteSize(s string) (ByteSize, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a size (examples: 512MiB, 1GiB)", s)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	mult := map[byte]float64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}
	if m[2] != "" && m[2] != "B" {
		v *= mult[m[2][0]]
	}
	return ByteSize(v), nil
}

// UnmarshalYAML parses a size.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*b = v
	return nil
}

// Error is one problem in a plan file (the project's one located error
// type).
type Error = located.Error

// ErrorList is every problem found in a plan, reported at once.
type ErrorList = located.List

// Catalog is what a plan may refer to: each service and the workloads it
// supports.
type Catalog map[string][]string

// LoadPlan reads, resolves and validates a plan file against catalog.
func LoadPlan(path string, catalog Catalog) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePlan(path, data, catalog)
}

// ParsePlan parses plan text read from file, applies defaults and
// validates it, returning every problem at once.
func ParsePlan(file string, data []byte, catalog Catalog) (*Plan, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, located.FromYAML(file, err)
	}
	p := &Plan{File: file, root: &root}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// "auto" is a value of trials and load.warmup that their types do not
	// parse: note it, and drop the decoder's complaint about that line.
	autoLines := map[int]bool{}
	if n := p.node("trials"); n != nil && n.Kind == yaml.ScalarNode && n.Value == "auto" {
		p.TrialsAuto, autoLines[n.Line] = true, true
	}
	if n := p.node("load", "warmup"); n != nil && n.Kind == yaml.ScalarNode && n.Value == "auto" {
		p.Load.WarmupAuto, autoLines[n.Line] = true, true
	}
	var errs ErrorList
	if err := dec.Decode(p); err != nil && !errors.Is(err, io.EOF) {
		for _, e := range located.FromYAML(file, err) {
			if !autoLines[e.Line] {
				errs = append(errs, unknownField(e))
			}
		}
	}
	p.applyDefaults()
	errs = append(errs, p.validate(catalog)...)
	errs.Sort()
	if len(errs) > 0 {
		return p, errs
	}
	return p, nil
}

// unknownField turns the decoder's "field x not found in type T" into a
// problem of field x with a hint.
func unknownField(e *Error) *Error {
	if strings.Contains(e.Msg, "not found in type") {
		e.Field = strings.Fields(e.Msg)[1]
		e.Msg = "unknown field"
		e.Hint = "see plans/README.md for the fields a plan may have"
	}
	return e
}

func (p *Plan) applyDefaults() {
	if p.TrialsAuto {
		p.Trials = 3 // at least three starts before an interval means anything
		if p.TrialsMax == 0 {
			p.TrialsMax = DefaultTrialsMax
		}
	}
	if p.Trials == 0 {
		p.Trials = DefaultTrials
	}
	if p.TrialsMax < p.Trials {
		p.TrialsMax = p.Trials
	}
	if p.ServiceRestart == "" {
		p.ServiceRestart = "trial"
	}
	if p.Load.Model == "" {
		p.Load.Model = "closed"
	}
	if p.Load.Duration == 0 {
		p.Load.Duration = Duration(DefaultDuration)
	}
	if !p.has("load", "warmup") {
		p.Load.WarmupAuto = true
	}
	if p.Load.WarmupAuto {
		p.Load.Warmup = 0
		if p.Load.WarmupMax == 0 {
			p.Load.WarmupMax = Duration(DefaultWarmupMax)
		}
	}
	if p.Load.Timeout == 0 {
		p.Load.Timeout = Duration(DefaultTimeout)
	}
	if p.Env == nil {
		p.Env = map[string]string{}
	}
	if _, ok := p.Env["DB_POOL_SIZE"]; !ok {
		p.Env["DB_POOL_SIZE"] = strconv.Itoa(workloads.DefaultPoolSize)
	}
	if _, ok := p.Env["LOG_REQUESTS"]; !ok {
		p.Env["LOG_REQUESTS"] = "false"
	}
	d := &p.Database
	if d.MaxConnections == 0 {
		d.MaxConnections = DefaultMaxConnections
	}
	if d.Reset == "" {
		d.Reset = "level"
	}
	if d.Restart == "" {
		d.Restart = "trial"
	}
	if d.SKURows == 0 {
		d.SKURows = DefaultSKURows
	}
	if d.SKUIndex == nil {
		t := true
		d.SKUIndex = &t
	}
	if d.Seed == 0 {
		d.Seed = DefaultSeed
	}
	// On two or more CPUs the service gets CPU 0 to itself, like the
	// sources' one-vCPU boxes, and the generator and databases share the
	// rest: the generator's own CPU is measured, so a saturated
	// generator is reported rather than silently skewing the result.
	if !p.has("placement") && runtime.NumCPU() >= 2 {
		rest := "1"
		if n := runtime.NumCPU(); n > 2 {
			rest = fmt.Sprintf("1-%d", n-1)
		}
		p.Placement = Placement{ServiceCPUs: "0", GeneratorCPUs: rest, DatabaseCPUs: rest}
	}
}

// has reports whether the plan file sets the field at path.
func (p *Plan) has(path ...string) bool { return p.node(path...) != nil }

// node finds the YAML node of a field path; list items are "0", "1", ...
func (p *Plan) node(path ...string) *yaml.Node {
	if p.root == nil || len(p.root.Content) == 0 {
		return nil
	}
	n := p.root.Content[0]
	for _, key := range path {
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					next = n.Content[i+1]
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(key)
			if err != nil || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
	}
	return n
}

// line returns the line of the deepest existing node along path.
func (p *Plan) line(path ...string) int {
	for k := len(path); k >= 0; k-- {
		if n := p.node(path[:k]...); n != nil {
			return n.Line
		}
	}
	return 0
}

func (p *Plan) validate(catalog Catalog) ErrorList {
	var errs ErrorList
	add := func(path []string, hint, format string, args ...any) {
		errs = append(errs, &Error{File: p.File, Line: p.line(path...), Field: strings.Join(path, "."), Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
	services := make([]string, 0, len(catalog))
	for s := range catalog {
		services = append(services, s)
	}
	sort.Strings(services)

	if p.Name == "" {
		add([]string{"name"}, "", "a plan needs a name")
	}
	if len(p.Implementations) == 0 {
		add([]string{"implementations"}, "one of: "+strings.Join(services, ", "), "no implementations")
	}
	seen := map[string]bool{}
	for i, im := range p.Implementations {
		path := []string{"implementations", strconv.Itoa(i)}
		if _, ok := catalog[im.Service]; !ok {
			add(path, "one of: "+strings.Join(services, ", "), "unknown service %q", im.Service)
		}
		if seen[im.ID()] {
			add(path, "give one of them a variant name", "%s appears twice", im.ID())
		}
		seen[im.ID()] = true
		if im.Variant != "" && !regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`).MatchString(im.Variant) {
			add(append(path, "variant"), "lower-case letters, digits, '-', '_', '.'", "bad variant name %q", im.Variant)
		}
	}
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
			if sw, ok := catalog[im.Service]; ok && !contains(sw, w.Name) {
				add(path, "drop the workload or the implementation", "%s does not implement workload %s (it has %s)", im.Service, w.Name, strings.Join(sw, ", "))
			}
		}
	}
	l := p.Load
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
	if l.Warmup < 0 || l.ThinkTime < 0 || l.Timeout <= 0 || l.MaxInflight < 0 {
		add([]string{"load"}, "", "warmup, think_time and max_inflight must not be negative; timeout must be positive")
	}
	if p.Trials < 1 || p.Trials > 100 {
		add([]string{"trials"}, "or auto", "trials must be between 1 and 100, not %d", p.Trials)
	}
	if p.TrialsAuto && p.TrialsMax > 100 {
		add([]string{"trials_max"}, "", "trials_max must be at most 100, not %d", p.TrialsMax)
	}
	if !contains([]string{"trial", "workload"}, p.ServiceRestart) {
		add([]string{"service_restart"}, "trial (warm once, measure every workload) or workload (a cold start per workload)", "unknown service_restart %q", p.ServiceRestart)
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
	for _, f := range []struct {
		name, v string
	}{{"service_cpus", p.Placement.ServiceCPUs}, {"generator_cpus", p.Placement.GeneratorCPUs}, {"database_cpus", p.Placement.DatabaseCPUs}} {
		if f.v == "" {
			continue
		}
		if err := cgroup.CheckCPUList(f.v, runtime.NumCPU()); err != nil {
			add([]string{"placement", f.name}, fmt.Sprintf("this machine has CPUs 0-%d", runtime.NumCPU()-1), "%v", err)
		}
	}
	if p.Limits.CPU < 0 || p.Limits.CPU > float64(runtime.NumCPU()) {
		add([]string{"limits", "cpu"}, fmt.Sprintf("between 0.01 and %d", runtime.NumCPU()), "cpu quota %v is out of range", p.Limits.CPU)
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
	if p.Limits.Memory < 0 || (p.Limits.Memory > 0 && p.Limits.Memory < 32<<20) {
		add([]string{"limits", "memory"}, "at least 32MiB", "memory limit %d bytes is too small", p.Limits.Memory)
	}
	return errs
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// ReadScenario reads a plan's scenario file. A path under workloads/ is
// read from the copy built into showdown, so the ready plans work from any
// folder; any other path is read from disk.
func ReadScenario(path string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(filepath.ToSlash(path), "workloads/"); ok {
		if b, err := workloads.FS.ReadFile(rest); err == nil {
			return b, nil
		}
	}
	return os.ReadFile(path)
}
