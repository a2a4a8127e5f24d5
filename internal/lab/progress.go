package lab

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/wording"
	"github.com/showdownlab/showdown/load"
)

// progress shows where a plan run is: a live status line on a terminal
// (implementation, workload, level, trial, elapsed and remaining, live
// rate, errors and p99), plain lines otherwise.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	plan     *plan.Plan
	start    time.Time
	total    int // levels in the whole plan
	done     int // levels finished or skipped
	where    string
	stage    string
	phaseEnd time.Time
	last     load.Progress
	drawn    bool
}

func newProgress(w io.Writer, tty bool, p *plan.Plan) *progress {
	if w == nil {
		w = io.Discard
	}
	n := levelsPerTrial(p) * p.MinStarts()
	return &progress{w: w, tty: tty, plan: p, start: time.Now(), total: n}
}

// levelsPerTrial counts the levels of one trial: every implementation on
// every workload at each of its database settings.
func levelsPerTrial(p *plan.Plan) int {
	n := 0
	for _, w := range p.Workloads {
		n += len(p.SettingsOf(w.Name))
	}
	return n * len(p.Arms()) * len(p.Load.Levels)
}

// line prints a message, keeping the live line below it on a terminal.
func (pr *progress) line(msg string) {
	if pr == nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.clear()
	fmt.Fprintln(pr.w, msg)
	pr.draw()
}

func (pr *progress) Service(impl, workload string, trial int) {
	pr.mu.Lock()
	pr.where = fmt.Sprintf("%s · %s · trial %d/%d", workload, impl, trial, pr.plan.MinStarts())
	pr.stage, pr.last = "starting", load.Progress{}
	pr.phaseEnd = time.Time{}
	pr.mu.Unlock()
	pr.line(fmt.Sprintf("%s: starting", pr.where))
}

// Phase announces a timed phase such as the warm-up or a level.
func (pr *progress) Phase(name string, d time.Duration) {
	pr.mu.Lock()
	pr.stage, pr.phaseEnd, pr.last = name, time.Now().Add(d), load.Progress{}
	pr.mu.Unlock()
}

func (pr *progress) level(n int, d time.Duration) {
	pr.Phase(fmt.Sprintf("%d %s", n, pr.unit()), d)
	if !pr.tty {
		pr.line(fmt.Sprintf("%s: %d %s for %v", pr.where, n, pr.unit(), d))
	}
}

func (pr *progress) unit() string {
	if pr.plan.Load.Model == "open" {
		return "req/s"
	}
	return "users"
}

// result prints the outcome of a level and counts it done.
func (pr *progress) result(lr *results.LevelRun) {
	pr.mu.Lock()
	pr.done++
	pr.mu.Unlock()
	switch lr.Status {
	case results.OK:
	case results.Interrupted:
		pr.line(fmt.Sprintf("%s: %d %s: INTERRUPTED: %s", pr.where, lr.Level, pr.unit(), lr.Reason))
		return
	default:
		pr.line(fmt.Sprintf("%s: %d %s: FAILED: %s", pr.where, lr.Level, pr.unit(), lr.Reason))
		return
	}
	pr.line(fmt.Sprintf("%s: %d %s: %s", pr.where, lr.Level, pr.unit(), wording.Level(lr)))
}

// AddTrial counts one more trial's levels (trials: auto).
func (pr *progress) AddTrial() {
	if pr == nil {
		return
	}
	pr.mu.Lock()
	pr.total += levelsPerTrial(pr.plan)
	pr.mu.Unlock()
}

// Skip counts levels that will not run.
func (pr *progress) Skip(n int) {
	if pr == nil {
		return
	}
	pr.mu.Lock()
	pr.done += n
	pr.mu.Unlock()
}

// OnProgress receives the engine's per-second progress.
func (pr *progress) OnProgress(p load.Progress) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.last = p
	if pr.tty {
		pr.clear()
		pr.draw()
	}
}

func (pr *progress) close() {
	if pr == nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.clear()
}

// clear erases the live line; callers hold mu.
func (pr *progress) clear() {
	if pr.tty && pr.drawn {
		fmt.Fprint(pr.w, "\r\033[K")
		pr.drawn = false
	}
}

// draw writes the live line; callers hold mu.
func (pr *progress) draw() {
	if !pr.tty || pr.where == "" {
		return
	}
	elapsed := time.Since(pr.start).Truncate(time.Second)
	var b strings.Builder
	fmt.Fprintf(&b, "[%d/%d levels, %v elapsed, %s left] %s · %s", pr.done, pr.total, elapsed, pr.eta(), pr.where, pr.stage)
	if !pr.phaseEnd.IsZero() {
		if left := time.Until(pr.phaseEnd); left > 0 {
			fmt.Fprintf(&b, " (%ds left)", int(left.Seconds()+0.5))
		}
	}
	if p := pr.last; p.Requests > 0 {
		b.WriteString(" · " + wording.Live(p))
	}
	fmt.Fprint(pr.w, b.String())
	pr.drawn = true
}

// eta estimates the time left from the pace so far, or from the plan's
// durations before any level has finished.
func (pr *progress) eta() string {
	left := pr.total - pr.done
	if left <= 0 {
		return "0s"
	}
	var per time.Duration
	if pr.done > 0 {
		per = time.Since(pr.start) / time.Duration(pr.done)
	} else {
		l := pr.plan.Load
		wu := time.Duration(l.Warmup)
		if l.WarmupAuto {
			wu = 30 * time.Second // a guess until a level has finished
		}
		per = time.Duration(l.Duration) + wu/time.Duration(len(l.Levels)) + 5*time.Second
	}
	return "~" + (per * time.Duration(left)).Truncate(time.Second).String()
}
