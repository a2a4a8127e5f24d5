package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/load"
)

// attackPlan is a validated attack, ready to run.
type attackPlan struct {
	sc         load.Scenario
	setup      *scenario.Scenario // has setup steps to run first, or nil
	model      load.Model
	opts       []load.Option
	thresholds []load.Threshold
	out        string
	latency    bool
	target     string // what is attacked, for messages
	record     map[string]string
}

// plan checks every flag at once and builds the attack.
func (f *attackFlags) plan(args []string) (*attackPlan, error) {
	p := &attackPlan{out: f.out, latency: f.latency}
	errs, err := f.target(p, args)
	if err != nil {
		return nil, err
	}
	errs = append(errs, f.model(p)...)
	errs = append(errs, f.options(p)...)
	if f.out != "" && !f.force {
		if entries, err := os.ReadDir(f.out); err == nil && len(entries) > 0 {
			errs = append(errs, fmt.Errorf("--out %s: the folder is not empty (%d entries); choose another, or add --force to write into it", f.out, len(entries)))
		}
	}
	if f.shard != "" {
		s, err := load.ParseShard(f.shard)
		if err != nil {
			errs = append(errs, fmt.Errorf("--%w", err))
		}
		p.opts = append(p.opts, load.WithShard(s))
	}
	hint := "run 'showdown help attack' for the flags"
	for _, e := range f.failIf {
		t, err := load.ParseThreshold(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("--fail-if: %w", err))
			hint = "--fail-if takes " + load.ThresholdSyntax
			continue
		}
		p.thresholds = append(p.thresholds, t)
	}
	if len(errs) > 0 {
		return nil, usageError{err: errors.Join(errs...), hint: hint}
	}
	return p, nil
}

// target sets what is attacked: the steps of --scenario, or one URL with
// its method, body and headers. A scenario file that does not parse is
// the error at once (its own errors are located).
func (f *attackFlags) target(p *attackPlan, args []string) (errs []error, err error) {
	switch {
	case f.scenario != "" && len(args) > 0:
		errs = append(errs, errors.New("give either a URL or --scenario, not both"))
	case f.scenario != "":
		vars := map[string]string{}
		for _, v := range f.vars {
			name, value, ok := strings.Cut(v, "=")
			if !ok || name == "" {
				errs = append(errs, fmt.Errorf("--var %q: want name=value", v))
				continue
			}
			vars[name] = value
		}
		sc, err := scenario.Load(f.scenario, scenario.Options{BaseURL: f.baseURL, Vars: vars, Seed: f.seed, Lists: f.lists})
		if err != nil {
			// The scenario's errors are one per line, file:line:col: field: message.
			return nil, usageError{err: err, hint: "fix the scenario file; see docs/scenarios.md"}
		}
		p.sc, p.target = load.StatusChecked(sc), "the steps of "+f.scenario
		if f.baseURL != "" {
			p.target += " (base URL " + f.baseURL + ")"
		}
		if sc.HasSetup() {
			p.setup = sc
		}
	case len(args) == 1:
		t, terrs := f.url(args[0])
		errs = append(errs, terrs...)
		p.sc, p.target = t, args[0]
	case len(args) > 1:
		errs = append(errs, fmt.Errorf("one URL expected, got %d arguments", len(args)))
	default:
		errs = append(errs, errors.New("nothing to attack: give a URL or --scenario FILE"))
	}
	if f.scenario == "" && (f.baseURL != "" || len(f.vars) > 0) {
		errs = append(errs, errors.New("--base-url and --var only apply to --scenario"))
	}
	return errs, nil
}

// url is the one request sent to u: the method, the body (--body or
// --body-file) and the headers.
func (f *attackFlags) url(u string) (*load.Target, []error) {
	var errs []error
	t := &load.Target{Method: strings.ToUpper(f.method), URL: u, Body: []byte(f.body)}
	if f.bodyFile != "" {
		if f.body != "" {
			errs = append(errs, errors.New("--body and --body-file: give one of them"))
		}
		b, err := os.ReadFile(f.bodyFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("--body-file: %w", err))
		}
		t.Body = b
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			errs = append(errs, fmt.Errorf("--header %q: want 'Name: value'", h))
			continue
		}
		t.Header = append(t.Header, load.HeaderField{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	if err := t.Validate(); err != nil {
		errs = append(errs, err)
	}
	return t, errs
}

// model sets the load model: open (--rate) or closed (--users).
func (f *attackFlags) model(p *attackPlan) []error {
	var errs []error
	switch {
	case f.rate != "" && f.users > 0:
		errs = append(errs, errors.New("--rate (open model) and --users (closed model) exclude each other"))
	case f.rate != "":
		rate, err := load.ParseRate(f.rate)
		if n, zerr := strconv.ParseFloat(strings.TrimSpace(f.rate), 64); err != nil && f.stages != "" && zerr == nil && n == 0 {
			// Stages may start from nothing: --rate 0 --stages 30s:1000.
			rate, err = 0, nil
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--rate: %w", err))
		}
		if f.rampUp != 0 || f.iterations != 0 || f.thinkTime != 0 {
			errs = append(errs, errors.New("--ramp-up, --iterations and --think-time belong to the closed model (--users)"))
		}
		m := load.OpenModel{Rate: rate, Duration: f.duration, Seed: f.arrivalSeed, Connections: f.connections}
		arr, aerr := load.ParseArrivals(f.arrivals)
		if aerr != nil {
			errs = append(errs, fmt.Errorf("--%w", aerr))
		}
		m.Arrivals = arr
		if f.connections < 0 {
			errs = append(errs, errors.New("--connections: must not be negative (0: the fewest connections)"))
		} else if f.connections > f.maxInflight {
			errs = append(errs, fmt.Errorf("--connections %d: more than --max-inflight %d", f.connections, f.maxInflight))
		}
		if f.stages != "" {
			st, serr := load.ParseStages(f.stages)
			if serr != nil {
				errs = append(errs, fmt.Errorf("--%w", serr))
			}
			m.Stages = st
			if f.duration != 0 {
				errs = append(errs, errors.New("--stages and --duration: the stages say how long the attack lasts; give one of them"))
				m.Duration = 0
			}
		}
		switch {
		case f.stages == "" && f.duration <= 0:
			errs = append(errs, errors.New("--duration: the open model needs one, e.g. --duration 30s (or --stages)"))
		case err == nil && aerr == nil && f.connections >= 0:
			for _, e := range m.Validate() {
				errs = append(errs, fmt.Errorf("--%w", e))
			}
		}
		p.model = m
	case f.users > 0:
		if f.arrivals != "even" || f.connections != 0 || f.stages != "" {
			errs = append(errs, errors.New("--arrivals, --connections and --stages shape the open model's arrivals (--rate); the closed model's users each keep a connection"))
		}
		m := load.ClosedModel{Users: f.users, RampUp: f.rampUp, Duration: f.duration, Iterations: f.iterations, ThinkTime: f.thinkTime}
		for _, e := range m.Validate() {
			errs = append(errs, fmt.Errorf("--%w", e))
		}
		p.model = m
	default:
		errs = append(errs, errors.New("choose a model: --rate N (open) or --users N (closed)"))
	}
	if f.users < 0 {
		errs = append(errs, errors.New("--users: must be > 0"))
	}
	return errs
}

// options sets the engine's options: timeout, in-flight cap, warm-up,
// pacing and the response limits.
func (f *attackFlags) options(p *attackPlan) []error {
	var errs []error
	if f.maxInflight <= 0 {
		errs = append(errs, errors.New("--max-inflight: must be > 0"))
	}
	if f.timeout <= 0 {
		errs = append(errs, errors.New("--timeout: must be > 0"))
	}
	if f.paceSlack < 0 {
		errs = append(errs, errors.New("--pace-slack: must not be negative (0: a wake-up for every request)"))
	}
	if f.spin < 0 {
		errs = append(errs, errors.New("--spin: must not be negative (0: sleep at once)"))
	}
	if f.coalesce < 0 {
		errs = append(errs, errors.New("--coalesce: must not be negative (0: never sleep on the timer alone)"))
	}
	w, err := load.ParseWarmup(f.warmup)
	if err != nil {
		errs = append(errs, fmt.Errorf("--%w", err))
	}
	p.opts = append(p.opts, load.Timeout(f.timeout), load.MaxInflight(f.maxInflight), load.WithWarmup(w), load.PaceSlack(f.paceSlack), load.Spin(f.spin), load.Coalesce(f.coalesce))
	lim := load.Limits{MaxBody: int64(f.maxBody), MaxHeaderBytes: int(f.maxHeaderSize), MaxHeaders: f.maxHeaders}
	if f.maxBody <= 0 || f.maxHeaderSize <= 0 || f.maxHeaders <= 0 {
		errs = append(errs, errors.New("--max-body, --max-header-bytes and --max-headers: must be > 0"))
	} else {
		for _, e := range lim.Validate() {
			errs = append(errs, fmt.Errorf("--%w", e))
		}
	}
	p.opts = append(p.opts, load.WithLimits(lim))
	return errs
}
