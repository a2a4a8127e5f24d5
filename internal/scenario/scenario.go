// Package scenario is showdown's scenario language: ordered HTTP steps read
// from a YAML file, with per-iteration variables, templates, captures from
// responses and assertions. A parsed *Scenario is what the load engine's
// virtual users run (load.Scenario); docs/scenarios.md is the reference.
//
// Everything is checked when the file is loaded, and every problem is
// reported at once with its line and field; templates and JSON paths are
// compiled then, so running a step only fills reusable buffers.
package scenario

import (
	"os"
	"regexp"
	"time"

	"github.com/showdownlab/showdown/load"
)

// Options adjust a scenario at load time.
type Options struct {
	// BaseURL overrides the file's base_url; step URLs may be relative
	// paths ("/client/new/400").
	BaseURL string
	// Vars defines or overrides scalar variables (--var name=value). A
	// value that reads as a JSON number is a number, anything else a string.
	Vars map[string]string
	// Lists holds named lists supplied by the harness, e.g. "sku_ids",
	// for {pick_list: name}; values are typed like Vars.
	Lists map[string][]string
	// Seed seeds every user's random stream, which also depends on the
	// user number: the same seed replays the same values for each user.
	Seed int64
}

// Scenario is a parsed scenario file, ready to run; it implements
// load.Scenario and load.Pauser.
type Scenario struct {
	name    string
	file    string
	baseURL string
	steps   []*step
	labels  []string
	setup   []*step
	vars    []*varDef
	nslots  int
	seed    int64
	// setupVals holds what RunSetup captured, copied into every new user.
	setupVals map[int]value
	// feeds are the data section's CSV files, whose columns are variables.
	feeds []*feed
}

var (
	_ load.Scenario = (*Scenario)(nil)
	_ load.Pauser   = (*Scenario)(nil)
)

// Load reads and parses the scenario file at path.
func Load(path string, opts Options) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, ErrorList{{File: path, Msg: "cannot read scenario: " + err.Error(),
			Hint: "check the path; the default scenarios are workloads/<name>/scenario.yaml"}}
	}
	return Parse(path, data, opts)
}

// Name returns the scenario's name (its file name when it has none).
func (s *Scenario) Name() string { return s.name }

// BaseURL returns the base URL relative step URLs are resolved against, or
// "" when there is none.
func (s *Scenario) BaseURL() string { return s.baseURL }

// Steps returns the label (name) of each step, in order.
func (s *Scenario) Steps() []string { return s.labels }

// StepRequest is what a step sends, as the file wrote it.
type StepRequest struct {
	// Method is the HTTP method, e.g. "POST".
	Method string
	// URL is the step's URL before templating, e.g. "/client/{{id}}/balance".
	URL string
}

// Requests returns the request of each step, in step order (Steps'
// order), for whoever relates results to the requests that made them.
func (s *Scenario) Requests() []StepRequest {
	out := make([]StepRequest, len(s.steps))
	for i, st := range s.steps {
		out[i] = StepRequest{Method: st.method, URL: st.rawURL}
	}
	return out
}

// Pause returns the pause after step, or 0.
func (s *Scenario) Pause(step int) time.Duration {
	if step < 0 || step >= len(s.steps) {
		return 0
	}
	return s.steps[step].pause
}

// HasSetup reports whether the scenario has a setup section, which
// RunSetup must run once before any user starts.
func (s *Scenario) HasSetup() bool { return len(s.setup) > 0 }

// step is one compiled request with its expectations.
type step struct {
	name     string
	method   string
	url      tmpl
	urlConst string
	constURL bool
	// rawURL is the URL as the file wrote it ("/client/{{id}}/balance").
	rawURL string
	// urlIntern holds every URL the step can produce, when they are few
	// (see internURLs); nil otherwise.
	urlIntern map[string]string
	headers   []header
	body      tmpl
	status    []int // nil: any 2xx
	json      []jsonCheck
	contains  tmpl           // nil: no body_contains
	matches   *regexp.Regexp // nil: no body_matches
	captures  []capture
	pause     time.Duration
}

// header is one request header whose value is a template.
type header struct {
	name     string
	val      tmpl
	constVal string
	isConst  bool
}

// jsonCheck is one assertion on a JSON field.
type jsonCheck struct {
	path   jsonPath
	exists int8 // +1: must exist; -1: must be absent; 0: compare with want
	want   tmpl // text mode
	// wantKind is the expected JSON type when want is not a single
	// reference (whose type is the referenced value's).
	wantKind kind
}

// capture stores a JSON field or a response header in a slot.
type capture struct {
	name   string
	slot   int
	path   jsonPath
	header string        // non-empty: capture this header instead
	re     *regexCapture // non-nil: capture a regular expression's group instead
	// def is the value stored when the source is missing (no failure then).
	def *value
}

// varKind is how a variable gets its per-iteration value.
type varKind uint8

const (
	varConst varKind = iota
	varTemplate
	varPick
	varRandint
)

// varDef is one variable of the vars section (or the command line).
type varDef struct {
	name    string
	slot    int
	kind    varKind
	val     value   // varConst
	t       tmpl    // varTemplate
	choices []value // varPick
	lo, hi  int64   // varRandint
}
