package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/load"
)

func init() {
	register(&command{
		name:    "attack",
		summary: "drive HTTP load at a URL or a scenario and report latency, errors, throughput",
		run:     runAttack,
	})
}

const attackSynopsis = `[flags] URL
       showdown attack [flags] --scenario FILE [--base-url URL]

Open model (fixed arrival rate, latency from the intended send time):
  showdown attack --rate 5000 --duration 30s http://127.0.0.1:8080/
Closed model (virtual users in a loop, one keep-alive connection each):
  showdown attack --users 100 --ramp-up 10s --duration 1m http://127.0.0.1:8080/

--fail-if takes ` + "`" + `[LABEL:]METRIC OP VALUE` + "`" + `, the condition that fails the run (exit 3):
  ` + "--fail-if 'p99>200ms' --fail-if 'errors>1%' --fail-if 'GET /accounts:p95>1s'"

// attackFlags are the flags of attack (and the runs of demo).
type attackFlags struct {
	method, body, bodyFile string
	headers                stringList
	scenario, baseURL      string
	vars                   stringList
	seed                   int64
	rate                   string
	duration               time.Duration
	maxInflight            int
	users, iterations      int
	rampUp, thinkTime      time.Duration
	warmup                 string
	timeout                time.Duration
	shard                  string
	out                    string
	force                  bool
	maxBody, maxHeaderSize sizeFlag
	maxHeaders             int
	latency                bool
	failIf                 stringList
}

func (f *attackFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.method, "method", "GET", "HTTP `method` of a URL attack")
	fs.Var(&f.headers, "header", "request header `Name: value` (repeatable)")
	fs.StringVar(&f.body, "body", "", "request `body` of a URL attack")
	fs.StringVar(&f.bodyFile, "body-file", "", "read the request body from `file`")
	fs.StringVar(&f.scenario, "scenario", "", "run the scenario in `file.yaml` instead of a URL")
	fs.StringVar(&f.baseURL, "base-url", "", "base `URL` of the scenario's relative step URLs")
	fs.Var(&f.vars, "var", "scenario variable `name=value` (repeatable)")
	fs.Int64Var(&f.seed, "seed", 1, "`seed` of the scenario's random values")
	fs.StringVar(&f.rate, "rate", "", "open model: arrivals per second, or `N/period` (5000, 300/1m)")
	fs.DurationVar(&f.duration, "duration", 0, "measured `time` (after warm-up)")
	fs.IntVar(&f.maxInflight, "max-inflight", load.DefaultMaxInflight, "open model: at most `n` requests (connections) in flight")
	fs.IntVar(&f.users, "users", 0, "closed model: `n` virtual users")
	fs.DurationVar(&f.rampUp, "ramp-up", 0, "closed model: start the users evenly over this `time`")
	fs.IntVar(&f.iterations, "iterations", 0, "closed model: iterations per user (0: until --duration)")
	fs.DurationVar(&f.thinkTime, "think-time", 0, "closed model: pause after each step")
	fs.StringVar(&f.warmup, "warmup", "", "uncounted warm-up: `requests` (1000) or time (10s)")
	fs.DurationVar(&f.timeout, "timeout", load.DefaultTimeout, "per-request timeout")
	fs.StringVar(&f.shard, "shard", "", "run part `i/N` of the load (merge results with 'showdown merge')")
	fs.StringVar(&f.out, "out", "", "write summary.json, timeseries.csv and .hlog files to `dir` (new or empty)")
	fs.BoolVar(&f.force, "force", false, "let --out write into a folder that is not empty")
	f.maxBody, f.maxHeaderSize = load.DefaultMaxBody, load.DefaultMaxHeaderBytes
	fs.Var(&f.maxBody, "max-body", "largest response body `size` accepted (e.g. 64MiB); a longer one is read, discarded and counted as an error")
	fs.Var(&f.maxHeaderSize, "max-header-bytes", "largest response header block `size` accepted")
	fs.IntVar(&f.maxHeaders, "max-headers", load.DefaultMaxHeaders, "most response header fields accepted")
	fs.BoolVar(&f.latency, "latency", false, "print the detailed latency percentile spectrum")
	fs.Var(&f.failIf, "fail-if", "fail (exit 3) when `condition` holds, e.g. 'p99>200ms' (repeatable)")
}

func runAttack(st *state, args []string) error {
	fs := newFlagSet(st, "attack", attackSynopsis)
	var f attackFlags
	f.define(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	record := map[string]string{}
	fs.Visit(func(fl *flag.Flag) { record[fl.Name] = fl.Value.String() })
	if len(pos) > 0 {
		record["url"] = pos[0]
	}
	plan, err := f.plan(pos)
	if err != nil {
		return err
	}
	plan.record = record
	return attack(st, plan)
}

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
	var errs []error
	p := &attackPlan{out: f.out, latency: f.latency}
	hint := "run 'showdown help attack' for the flags"
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
		sc, err := scenario.Load(f.scenario, scenario.Options{BaseURL: f.baseURL, Vars: vars, Seed: f.seed})
		if err != nil {
			// The scenario's errors are one per line, file:line:col: field: message.
			return nil, usageError{err: err, hint: "fix the scenario file; see docs/scenarios.md"}
		}
		p.sc, p.target = load.StatusChecked(sc), f.scenario
		if sc.HasSetup() {
			p.setup = sc
		}
	case len(args) == 1:
		t := &load.Target{Method: strings.ToUpper(f.method), URL: args[0], Body: []byte(f.body)}
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
		p.sc, p.target = t, args[0]
	case len(args) > 1:
		errs = append(errs, fmt.Errorf("one URL expected, got %d arguments", len(args)))
	default:
		errs = append(errs, errors.New("nothing to attack: give a URL or --scenario FILE"))
	}
	if f.scenario == "" && (f.baseURL != "" || len(f.vars) > 0) {
		errs = append(errs, errors.New("--base-url and --var only apply to --scenario"))
	}

	switch {
	case f.rate != "" && f.users > 0:
		errs = append(errs, errors.New("--rate (open model) and --users (closed model) exclude each other"))
	case f.rate != "":
		rate, err := load.ParseRate(f.rate)
		if err != nil {
			errs = append(errs, fmt.Errorf("--rate: %w", err))
		}
		if f.rampUp != 0 || f.iterations != 0 || f.thinkTime != 0 {
			errs = append(errs, errors.New("--ramp-up, --iterations and --think-time belong to the closed model (--users)"))
		}
		m := load.OpenModel{Rate: rate, Duration: f.duration}
		if f.duration <= 0 {
			errs = append(errs, errors.New("--duration: the open model needs one, e.g. --duration 30s"))
		} else if err == nil {
			errs = append(errs, m.Validate()...)
		}
		p.model = m
	case f.users > 0:
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
	if f.maxInflight <= 0 {
		errs = append(errs, errors.New("--max-inflight: must be > 0"))
	}
	if f.timeout <= 0 {
		errs = append(errs, errors.New("--timeout: must be > 0"))
	}
	w, err := load.ParseWarmup(f.warmup)
	if err != nil {
		errs = append(errs, fmt.Errorf("--%w", err))
	}
	p.opts = append(p.opts, load.Timeout(f.timeout), load.MaxInflight(f.maxInflight), load.WithWarmup(w))
	lim := load.Limits{MaxBody: int64(f.maxBody), MaxHeaderBytes: int(f.maxHeaderSize), MaxHeaders: f.maxHeaders}
	if f.maxBody <= 0 || f.maxHeaderSize <= 0 || f.maxHeaders <= 0 {
		errs = append(errs, errors.New("--max-body, --max-header-bytes and --max-headers: must be > 0"))
	} else {
		for _, e := range lim.Validate() {
			errs = append(errs, fmt.Errorf("--%w", e))
		}
	}
	p.opts = append(p.opts, load.WithLimits(lim))
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
	badThreshold := false
	for _, e := range f.failIf {
		t, err := load.ParseThreshold(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("--fail-if: %w", err))
			badThreshold = true
			continue
		}
		p.thresholds = append(p.thresholds, t)
	}
	if len(errs) > 0 {
		if badThreshold {
			hint = "--fail-if takes " + load.ThresholdSyntax
		}
		return nil, usageError{err: errors.Join(errs...), hint: hint}
	}
	return p, nil
}

// attack runs a plan, prints the report and writes the files.
func attack(st *state, p *attackPlan) error {
	if p.setup != nil {
		if err := p.setup.RunSetup(st.ctx, &http.Client{Timeout: time.Minute}); err != nil {
			return fmt.Errorf("scenario setup: %w", err)
		}
	}
	opts := append([]load.Option{load.WithOptionsRecord(p.record)}, p.opts...)
	// SHOWDOWN_ENGINE=goroutine runs plain URL attacks in the open model
	// on the goroutine engine instead of the tick engine (load/README.md),
	// to compare them or to rule the tick engine out.
	if st.getenv != nil && st.getenv("SHOWDOWN_ENGINE") == "goroutine" {
		opts = append(opts, load.WithoutTickEngine())
	}
	live := st.stderrTTY
	if live {
		opts = append(opts, load.OnProgress(func(pr load.Progress) { showProgress(st.stderr, pr) }))
	}
	res, err := load.NewAttacker(opts...).Attack(st.ctx, p.sc, p.model)
	if live {
		fmt.Fprint(st.stderr, "\r\033[K")
	}
	if err != nil {
		return err
	}
	load.WriteReport(st.stdout, res)
	if p.latency {
		fmt.Fprintln(st.stdout)
		load.WriteSpectrum(st.stdout, res, "")
	}
	if p.out != "" {
		if err := res.WriteDir(p.out); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
		fmt.Fprintf(st.stdout, "results: %s\n", p.out)
	}
	if res.Summary.Interrupted {
		return exitError{code: exitInterrupted, err: errors.New("interrupted: the results above are partial")}
	}
	if t := res.Summary.Total; t.Samples > 0 && refusedAll(t) {
		return exitError{code: exitFailure, err: fmt.Errorf("every connection to %s was refused: is the target running and listening there?", p.target)}
	}
	return checkThresholds(st, res, p.thresholds)
}

func refusedAll(t load.LabelStats) bool {
	for _, r := range t.Reasons {
		if r.Reason == load.ReasonRefused {
			return r.Count == t.Samples
		}
	}
	return false
}

// checkThresholds prints each --fail-if verdict and returns exitThresholds
// if any was crossed.
func checkThresholds(st *state, res *load.Result, ts []load.Threshold) error {
	var crossed []string
	for _, t := range ts {
		bad, v, err := t.Crossed(res)
		if err != nil {
			return usageError{err: err}
		}
		verdict := "ok"
		if bad {
			verdict = "CROSSED"
			crossed = append(crossed, t.Expr)
		}
		fmt.Fprintf(st.stdout, "threshold %-28s %-7s (measured %s)\n", t.Expr, verdict, strconv.FormatFloat(v, 'f', 3, 64))
	}
	if len(crossed) > 0 {
		return exitError{code: exitThresholds, err: fmt.Errorf("threshold crossed: %s", strings.Join(crossed, ", "))}
	}
	return nil
}

func showProgress(w io.Writer, p load.Progress) {
	if p.Warmup {
		fmt.Fprintf(w, "\r\033[Kwarming up... %d active", p.Active)
		return
	}
	rem := ""
	if p.Remaining > 0 {
		rem = fmt.Sprintf(" / %s left", p.Remaining.Round(time.Second))
	}
	fmt.Fprintf(w, "\r\033[K%s%s | %.0f req/s | %d requests, %d errors | p99 %s | %d active",
		p.Elapsed.Round(time.Second), rem, p.Rate, p.Requests, p.Errors, p.P99.Round(10*time.Microsecond), p.Active)
}

// resultDir is where a run's files go by default: results/<UTC time>-name.
func resultDir(name string) string {
	return filepath.Join("results", time.Now().UTC().Format("20060102T150405Z")+"-"+name)
}

// parseInterspersed parses flags that may come before or after the
// positional arguments ("attack URL --rate 10"), which package flag alone
// does not allow. It returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for n := len(args); n >= 0; n-- { // each pass consumes at least one argument
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			pos = append(pos, args[1:]...)
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return pos, nil
}

// sizeFlag is a flag holding a size in bytes ("64KiB", "8MiB").
type sizeFlag int64

func (s *sizeFlag) String() string { return load.FormatSize(int64(*s)) }

func (s *sizeFlag) Set(v string) error {
	n, err := load.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}
