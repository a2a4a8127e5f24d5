package plan

import (
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/showdownlab/showdown/internal/located"
)

// DefaultBudget is the time after the builds that an interleaved plan
// naming none of budget, precision, measure_max, trials and trials_max
// gets for its starts, warm-ups and rounds (applyCompareDefaults): the
// precision's default, ±3%, is what it spends it on. Two arms whose
// warm-up takes 10 s start in under a minute, so it buys some eight
// starts; two JVMs warmed for two minutes each, three or four.
const DefaultBudget = 10 * time.Minute

// applyCompareDefaults gives a plan that compares in interleaved rounds
// and leaves its stopping rule to showdown (none of budget, precision,
// measure_max, trials and trials_max) DefaultBudget, so that starts are
// added while a pair is wider than the precision and another start fits:
// two starts alone leave the between-start variance one degree of
// freedom (t = 12.7), ±61% where the machine is noisy.
func (p *Plan) applyCompareDefaults() {
	for _, f := range []string{"budget", "precision", "measure_max", "trials", "trials_max"} {
		if p.has(f) {
			return
		}
	}
	if ok, _ := p.Interleaved(); !ok || p.SLO != nil {
		return
	}
	p.Rounds.Budget = Duration(DefaultBudget)
	p.BudgetDefaulted = true
}

// revChars are the characters a revision keeps in an arm's name; others
// (a branch's '/') become '-'.
var revChars = regexp.MustCompile(`[^A-Za-z0-9._~^-]`)

// RevName is how revision rev appears in an arm's name, after the stack's
// and an '@': "HEAD~1", "v1.2", "origin-main" for origin/main.
func RevName(rev string) string { return revChars.ReplaceAllString(rev, "-") }

// nameRevision makes an implementation that names a revision an arm of
// its own: its Service becomes "stack@rev", the name it has in every
// result, and the stack's own name is kept for Revisions.
func (i *Implementation) nameRevision(line int) {
	switch {
	case i.Rev == "" || i.Rev != strings.TrimSpace(i.Rev):
		i.problems = append(i.problems, &located.Error{Line: line, Field: "rev", Msg: fmt.Sprintf("rev %q is not a revision", i.Rev), Hint: "a git revision of the stack's folder: rev: HEAD~1, rev: main, rev: 3f2a1bc"})
		return
	case i.Service == "":
		i.problems = append(i.problems, &located.Error{Line: line, Field: "rev", Msg: "rev needs the stack's folder or name", Hint: "path: ../our-service with rev: HEAD~1, or service: go-stdlib with rev: HEAD~1"})
		return
	}
	i.stack = i.Service
	i.Service = i.Service + "@" + RevName(i.Rev)
}

// expandAgainst adds before each implementation that names no revision
// the same at revision rev (`showdown run --against REV`).
func (p *Plan) expandAgainst(rev string) {
	if rev == "" {
		return
	}
	var out []Implementation
	for _, im := range p.Implementations {
		if im.Rev == "" && im.Service != "" && len(im.problems) == 0 {
			at := im
			at.Rev, at.against, at.Env = rev, true, maps.Clone(im.Env)
			at.nameRevision(im.line)
			out = append(out, at)
		}
		out = append(out, im)
	}
	p.Implementations = out
}

// Revision is an implementation of a plan at a git revision of its
// stack's folder, as a caller must materialise it before the plan is
// parsed (package stack): the folder at that commit, its manifest named
// Name.
type Revision struct {
	// Line and Field locate the revision in the plan ("implementations.1.rev",
	// or "--against" for one the command added).
	Line  int
	Field string
	// Folder is the stack's folder, absolute (path:); empty for a stack
	// under services/, named Stack.
	Folder string
	// Stack is the stack's own name, Rev the revision as written, and
	// Name the arm's: "go-stdlib@HEAD~1".
	Stack, Rev, Name string
}

// Revisions returns the implementations of plan text read from file that
// name a revision, with against as ParsePlanAgainst adds them. Text that
// does not parse names none (ParsePlan says why).
func Revisions(file string, data []byte, against string) []Revision {
	var v struct {
		Implementations []Implementation `yaml:"implementations"`
	}
	_ = yaml.Unmarshal(data, &v)
	p := &Plan{File: file, Implementations: v.Implementations}
	p.expandAgainst(against)
	p.resolveFolders()
	var out []Revision
	for i, im := range p.Implementations {
		if im.Rev == "" || im.stack == "" {
			continue
		}
		r := Revision{Line: im.line, Field: "implementations." + strconv.Itoa(i) + ".rev", Folder: im.Dir, Stack: im.stack, Rev: im.Rev, Name: im.Service}
		if im.against {
			r.Field = "--against"
		}
		out = append(out, r)
	}
	return out
}

// SetRevision records where the arm named name (at a revision) was
// materialised: its commit and the folder of its copy
// (Implementation.Commit and RevDir).
func (p *Plan) SetRevision(name, commit, dir string) {
	for i := range p.Implementations {
		if im := &p.Implementations[i]; im.Service == name && im.Rev != "" {
			im.Commit, im.RevDir = commit, dir
		}
	}
}

// Baseline is the arm the others are judged against by fail_if's
// slower_than: the first that names a revision (the code before a
// change, or `--against REV`'s), else the first listed.
func (p *Plan) Baseline() string {
	arms := p.Arms()
	if len(arms) == 0 {
		return ""
	}
	for _, a := range arms {
		if a.Rev != "" {
			return a.ID()
		}
	}
	return arms[0].ID()
}

// readFailIf reads fail_if written as a mapping: {slower_than: 5%} and
// thresholds (the list form's entries).
func (p *Plan) readFailIf(n *yaml.Node) ErrorList {
	var errs ErrorList
	bad := func(k *yaml.Node, field, hint, format string, args ...any) {
		errs = append(errs, &Error{File: p.File, Line: k.Line, Field: "fail_if." + field, Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
	for k := 0; k+1 < len(n.Content); k += 2 {
		key, val := n.Content[k], n.Content[k+1]
		switch key.Value {
		case "slower_than":
			if err := p.SlowerThan.UnmarshalYAML(val); err != nil {
				bad(key, key.Value, "e.g. slower_than: 5%", "%q is not a percentage", val.Value)
			} else if p.SlowerThan <= 0 || p.SlowerThan >= 1 {
				bad(key, key.Value, "e.g. slower_than: 5%", "slower_than must be between 0%% and 100%%, not %v", p.SlowerThan)
			}
		case "thresholds":
			var list []string
			if err := val.Decode(&list); err != nil {
				bad(key, key.Value, "e.g. thresholds: [p99>500ms, errors>1%]", "thresholds is a list of thresholds")
			}
			p.FailIf = append(p.FailIf, list...)
		default:
			bad(key, key.Value, "fail_if has slower_than (a comparison's slowdown) and thresholds (per level), or is a list of thresholds", "unknown field")
		}
	}
	return errs
}

// validateCompare checks what fail_if's slower_than needs: a comparison
// in interleaved rounds.
func (p *Plan) validateCompare(add func(path []string, hint, format string, args ...any)) {
	if p.SlowerThan == 0 {
		return
	}
	if p.SLO != nil {
		add([]string{"fail_if", "slower_than"}, "remove slo, or slower_than", "slower_than judges interleaved rounds, and a plan with an slo searches capacities")
		return
	}
	if ok, why := p.Interleaved(); !ok {
		add([]string{"fail_if", "slower_than"}, "slower_than judges the ratio of interleaved rounds (plans/README.md)", "slower_than needs a comparison in interleaved rounds: %s", why)
	}
}
