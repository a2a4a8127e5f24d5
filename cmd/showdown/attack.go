package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

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
	// lists are the scenario's named lists the harness supplies (sku_ids).
	lists                  map[string][]string
	method, body, bodyFile string
	headers                stringList
	scenario, baseURL      string
	vars                   stringList
	seed                   int64
	rate                   string
	arrivals, stages       string
	arrivalSeed            uint64
	connections            int
	duration               time.Duration
	maxInflight            int
	paceSlack              time.Duration
	spin                   time.Duration
	coalesce               time.Duration
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
	fs.StringVar(&f.arrivals, "arrivals", "even", "open model: `even` gaps (clockwork) or poisson (random gaps, seeded by --arrival-seed), as many independent clients send")
	fs.Uint64Var(&f.arrivalSeed, "arrival-seed", 1, "open model: `seed` of Poisson arrivals (the same seed, the same gaps)")
	fs.IntVar(&f.connections, "connections", 0, "open model: spread arrivals over a pool of `n` keep-alive connections, each taking its turn, as a proxy's pool does (0: the fewest connections the rate needs)")
	fs.StringVar(&f.stages, "stages", "", "open model: a rate that changes, as `DURATION:RATE,...` (30s:2000,1m:2000): each stage moves in a straight line from the rate before it (--rate first) to its own; the stages replace --duration")
	fs.IntVar(&f.maxInflight, "max-inflight", load.DefaultMaxInflight, "open model: at most `n` requests (connections) in flight")
	fs.DurationVar(&f.paceSlack, "pace-slack", load.DefaultPaceSlack, "open model: wake at most once per `time`, sending what has come due, late by up to it (0: a wake-up per request)")
	fs.DurationVar(&f.spin, "spin", load.DefaultSpin, "closed model: look for awaited responses for up to `time` before sleeping, sparing the server a wake-up per response (0: sleep at once)")
	fs.DurationVar(&f.coalesce, "coalesce", load.DefaultCoalesce, "closed model: with ten responses awaited or more, sleep `time` on the timer alone (at least long enough for one response, at most a tenth of the response time) and read them in one batch (0: never)")
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

// attack runs a plan, prints the report and writes the files.
func attack(st *state, p *attackPlan) error {
	if p.setup != nil {
		if err := p.setup.RunSetup(st.ctx, &http.Client{Timeout: time.Minute}); err != nil {
			return fmt.Errorf("scenario setup: %w", err)
		}
	}
	opts := append([]load.Option{load.WithOptionsRecord(p.record)}, p.opts...)
	// SHOWDOWN_ENGINE=goroutine runs every attack on the goroutine engine
	// instead of the tick and loop engines (load/README.md), to compare
	// them or to rule them out.
	if st.getenv != nil && st.getenv("SHOWDOWN_ENGINE") == "goroutine" {
		opts = append(opts, load.WithoutTickEngine())
	}
	live := st.stderrTTY
	if live {
		opts = append(opts, load.OnProgress(func(pr load.Progress) { showProgress(st.stderr, pr) }))
	}
	if st.getenv != nil && st.getenv("SHOWDOWN_MEMPROFILE") != "" {
		runtime.MemProfileRate = 4096
		defer writeMemProfile(st.getenv("SHOWDOWN_MEMPROFILE"))
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

func writeMemProfile(path string) {
	if f, err := os.Create(path); err == nil {
		pprof.Lookup("allocs").WriteTo(f, 0)
		f.Close()
	}
}
