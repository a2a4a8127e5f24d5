package lab

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/load"
)

// AuditTimeout bounds a level's audit, which runs on its own deadline
// (after Ctrl-C too).
const AuditTimeout = 30 * time.Second

// writtenBefore counts the rows the workload's requests write
// (db.Written), just before a level; nil when it writes none or they
// could not be counted (a warning on lr says why).
func (x *execution) writtenBefore(ctx context.Context, w plan.Workload, lr *results.LevelRun) map[string]int64 {
	n, err := x.dbs.Written(ctx, w.Name)
	if err != nil {
		lr.Warnings = append(lr.Warnings, "rows not counted before the level, answers not compared with them: "+err.Error())
		return nil
	}
	return n
}

// audit checks the workload's invariants in the database (db.Audit) and
// compares the rows the level wrote with its answers: between the counts
// before and after the level (whatever the plan's reset), each kind of
// row (workloads/<w>/written.sql) must have grown by at least the
// answers that say it was committed (a 200 to POST /transaction: nothing
// answered without a commit) and by at most those plus the requests that
// got no answer or were still in flight at either end (nothing written
// that a 4xx or 5xx refused, nothing duplicated).
func (x *execution) audit(ctx context.Context, w plan.Workload, sc *scenario.Scenario, res *load.Result, before map[string]int64) ([]results.Violation, results.Writes) {
	// Its own deadline, not ctx's: after Ctrl-C the audit still runs, and
	// a cancelled context must not pass for a broken invariant.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AuditTimeout)
	defer cancel()
	var out []results.Violation
	vs, err := x.dbs.Audit(ctx, w.Name, -1, -1)
	if err != nil {
		return []results.Violation{{Check: "audit", Detail: err.Error()}}, nil
	}
	for _, v := range vs {
		out = append(out, results.Violation{Check: v.Check, Detail: v.Detail})
	}
	if before == nil {
		return out, nil
	}
	after, err := x.dbs.Written(ctx, w.Name)
	if err != nil {
		return append(out, results.Violation{Check: "written", Detail: "counting rows after the level: " + err.Error()}), nil
	}
	writes, wv := compareWritten(before, after, sc.Requests(), res.Summary.Labels, x.inFlight(res))
	return append(out, wv...), writes
}

// Written counts the rows w's requests write as they stand, before a
// round; nil for a workload that writes none, or when they could not be
// counted (CheckWrites then checks nothing).
func (l *live) Written(ctx context.Context, w plan.Workload) map[string]int64 {
	if !w.HasDatabase() {
		return nil
	}
	n, err := l.x.dbs.Written(ctx, w.Name)
	if err != nil {
		return nil
	}
	return n
}

// CheckWrites counts w's rows again after a round of this arm alone and
// compares what it gained since before with the answers of the round's
// loads rs (its settle and its measurement, each run to its last
// answer, so nothing is in flight at either count).
func (l *live) CheckWrites(ctx context.Context, w plan.Workload, before map[string]int64, rs ...*load.Result) (results.Writes, []results.Violation) {
	sc := l.settled[w.Name]
	if before == nil || sc == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AuditTimeout)
	defer cancel()
	after, err := l.x.dbs.Written(ctx, w.Name)
	if err != nil {
		return nil, []results.Violation{{Check: "written", Detail: "counting rows after the round: " + err.Error()}}
	}
	var rows []load.LabelStats
	for _, r := range rs {
		if r != nil {
			rows = sumLabels(rows, r.Summary.Labels)
		}
	}
	return compareWritten(before, after, sc.Requests(), rows, 0)
}

// sumLabels adds b's rows to a's, step by step: samples and statuses,
// which is what compareWritten reads.
func sumLabels(a, b []load.LabelStats) []load.LabelStats {
	out := make([]load.LabelStats, max(len(a), len(b)))
	for i := range out {
		var s load.LabelStats
		for _, rows := range [][]load.LabelStats{a, b} {
			if i >= len(rows) {
				continue
			}
			r := rows[i]
			s.Label = r.Label
			s.Samples += r.Samples
			s.Errors += r.Errors
			for code, n := range r.Statuses {
				if s.Statuses == nil {
					s.Statuses = map[int]int64{}
				}
				s.Statuses[code] += n
			}
		}
		out[i] = s
	}
	return out
}

// inFlight is how many requests of a level can have been in flight at
// once: unrecorded at its end, or left over from the warm-up at its
// start.
func (x *execution) inFlight(res *load.Result) int64 {
	if x.plan.Load.Model == "closed" {
		return int64(res.Summary.Users)
	}
	if x.plan.Load.MaxInflight > 0 {
		return int64(x.plan.Load.MaxInflight)
	}
	return load.DefaultMaxInflight
}

// compareWritten checks each kind of row: written = after - before must
// lie in [answered, answered + unanswered + 2*inflight], answered and
// unanswered summed over the steps whose request the kind names. It
// returns the counts of each kind and what broke the rule.
func compareWritten(before, after map[string]int64, reqs []scenario.StepRequest, rows []load.LabelStats, inflight int64) (results.Writes, []results.Violation) {
	names := make([]string, 0, len(after))
	for n := range after {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []results.Violation
	writes := results.Writes{}
	for _, name := range names {
		method, pattern, status, err := db.ParseWrittenName(name)
		if err != nil {
			out = append(out, results.Violation{Check: "written", Detail: err.Error()})
			continue
		}
		b, ok := before[name]
		if !ok {
			continue
		}
		written := after[name] - b
		var answered, unanswered int64
		for i, r := range reqs {
			if i < len(rows) && r.Method == method && pathMatches(pattern, r.URL) {
				answered += rows[i].Answered(status)
				unanswered += rows[i].Unanswered()
			}
		}
		slack := unanswered + 2*inflight
		writes[name] = results.WriteCount{Answered: answered, Written: written, Slack: slack}
		check := "written: " + method + " " + pattern
		switch {
		case written < answered:
			out = append(out, results.Violation{Check: check, Detail: fmt.Sprintf(
				"%d rows written during the level, but %d answers %d: %d answered as done were not committed", written, answered, status, answered-written)})
		case written > answered+slack:
			out = append(out, results.Violation{Check: check, Detail: fmt.Sprintf(
				"%d rows written during the level for %d answers %d: %d more than the %d requests without an answer or in flight could explain (rows written for refused requests, or twice)",
				written, answered, status, written-answered-slack, slack)})
		}
	}
	return writes, out
}

// pathMatches reports whether a step's URL, as its file wrote it
// (absolute or not, with {{templates}}), is a request to pattern
// ("/client/new/{balance}": {x} is any one segment). A templated segment
// matches only a {x} of the pattern.
func pathMatches(pattern, url string) bool {
	if i := strings.Index(url, "://"); i >= 0 {
		rest := url[i+3:]
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			return false
		}
		url = rest[j:]
	}
	if i := strings.IndexByte(url, '?'); i >= 0 {
		url = url[:i]
	}
	ps, us := strings.Split(pattern, "/"), strings.Split(url, "/")
	if len(ps) != len(us) {
		return false
	}
	for i := range ps {
		wild := strings.HasPrefix(ps[i], "{") && strings.HasSuffix(ps[i], "}")
		switch {
		case wild && us[i] != "":
		case strings.Contains(us[i], "{{"):
			return false
		case ps[i] != us[i]:
			return false
		}
	}
	return true
}
