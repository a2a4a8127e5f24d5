package jmx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/scenario"
)

// Element classes (XML tags) the importer knows.
const (
	tagTestPlan    = "TestPlan"
	tagThreadGroup = "ThreadGroup"
	tagSetupGroup  = "SetupThreadGroup"
	tagSampler     = "HTTPSamplerProxy"
	tagConfig      = "ConfigTestElement" // HTTP Request Defaults with HttpDefaultsGui
	tagHeaders     = "HeaderManager"
	tagArguments   = "Arguments"
	tagCSV         = "CSVDataSet"
	tagTimer       = "ConstantTimer"
	tagJSONExtract = "JSONPostProcessor"
	tagJSONPath    = "com.atlantbh.jmeter.plugins.jsonutils.jsonpathextractor.JSONPathExtractor"
	tagRegex       = "RegexExtractor"
	tagRespAssert  = "ResponseAssertion"
	tagJSONAssert  = "JSONPathAssertion"
	tagSimple      = "GenericController"
)

// listeners record results; showdown records its own.
var listeners = []string{"ResultCollector", "Summariser", "BackendListener", "ResultSaver", "SimpleDataWriter"}

// builtins are scenario names a JMeter variable cannot take as is.
var builtins = []string{"user", "iter", "uuid", "randint"}

var (
	identRe    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	badIdentRe = regexp.MustCompile(`[^A-Za-z0-9_]`)
	numberRe   = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	// pathRe is the JSON path subset scenarios compile: $, .key, [n], ["key"].
	pathRe  = regexp.MustCompile(`^\$(\.[A-Za-z_][A-Za-z0-9_-]*|\[[0-9]+\]|\["[^"\\]*"\])*$`)
	groupRe = regexp.MustCompile(`^\$([0-9]+)\$$`)
)

// importer holds the state of one import.
type importer struct {
	file     string
	res      *Result
	reported map[*element]bool
	// vars are the scenario's variables in order: User Defined Variables
	// and properties with their defaults.
	vars    []varOut
	varIdx  map[string]int
	defined map[string]bool // JMeter names a template may use
	data    []dataOut
	setup   []*stepOut
	steps   []*stepOut
	names   map[string]int
	base    string // scheme://host:port of the scenario's base_url
	outDir  string
	planDir string
	props   map[string]string
	// missing are the properties with no default and no -J value read
	// where a constant is needed, in the order first read.
	missing []MissingProperty
	// rateTimers are the rate timers met in a scope, rateSteps how many
	// of the thread group's steps each paces.
	rateTimers []*element
	rateSteps  map[*element]int
}

type varOut struct {
	name, value string
	raw         string // the JMeter text, for settings that need a constant
	template    bool
	from        string
}

type dataOut struct {
	el                  *element
	file                string
	names               []string
	skipFirst           bool
	delimiter           string
	share               string
	recycle, stopThread bool
}

// Import translates the JMeter plan in data; filename names it in messages
// and locates its CSV files.
func Import(filename string, data []byte, opts Options) (*Result, error) {
	root, err := parseXML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a JMeter plan: %v", filename, err)
	}
	if len(root.kids) != 1 || root.kids[0].tag != "jmeterTestPlan" {
		return nil, fmt.Errorf("%s: not a JMeter plan: the root element is not <jmeterTestPlan>", filename)
	}
	var top []*element
	for _, k := range root.kids[0].kids {
		if k.tag == "hashTree" {
			top = elements(k)
			break
		}
	}
	if len(top) == 0 || top[0].typ() != tagTestPlan {
		return nil, fmt.Errorf("%s: not a JMeter plan: no <TestPlan> element", filename)
	}
	if opts.ScenarioPath == "" {
		opts.ScenarioPath = strings.TrimSuffix(filename, filepath.Ext(filename)) + ".yaml"
	}
	im := &importer{file: filename, res: &Result{}, reported: map[*element]bool{},
		varIdx: map[string]int{}, defined: map[string]bool{}, names: map[string]int{}, rateSteps: map[*element]int{},
		outDir: filepath.Dir(opts.ScenarioPath), planDir: filepath.Dir(filename), props: opts.Properties}
	plan := top[0]
	im.collectNames(plan)
	for _, a := range arguments(prop(plan.n, "TestPlan.user_defined_variables")) {
		im.addVar(plan, a.name, a.value, "User Defined Variables of the test plan")
	}
	if err := im.translate(plan); err != nil {
		return nil, err
	}
	out := im.emit(plan)
	// The scenario must load: anything the parser rejects is a bug of the
	// translation or a use of something the plan never defines.
	if _, err := scenario.Parse(opts.ScenarioPath, out, scenario.Options{}); err != nil {
		var el scenario.ErrorList
		if errors.As(err, &el) {
			for _, e := range el {
				im.res.Notes = append(im.res.Notes, "the scenario does not load: "+e.Error())
			}
		}
		return im.res, fmt.Errorf("%s: the translated scenario does not load:\n%v\n%s", filename, err, out)
	}
	im.res.Scenario = out
	slices.SortStableFunc(im.res.Skipped, func(a, b Problem) int { return a.Line - b.Line })
	slices.SortStableFunc(im.res.Ignored, func(a, b Problem) int { return a.Line - b.Line })
	return im.res, nil
}

// skip lists el as not translated (once).
func (im *importer) skip(el *element, format string, args ...any) {
	if im.reported[el] {
		return
	}
	im.reported[el] = true
	im.res.Skipped = append(im.res.Skipped, Problem{Name: el.name(), Type: el.typ(), Line: el.line(), Reason: fmt.Sprintf(format, args...)})
}

func (im *importer) ignore(el *element, reason string) {
	if im.reported[el] {
		return
	}
	im.reported[el] = true
	im.res.Ignored = append(im.res.Ignored, Problem{Name: el.name(), Type: el.typ(), Line: el.line(), Reason: reason})
}

func (im *importer) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(im.res.Notes, n) {
		im.res.Notes = append(im.res.Notes, n)
	}
}

// collectNames records every variable the plan defines anywhere (User
// Defined Variables, CSV columns, extractors), so a template can tell a
// variable from text JMeter would send as is.
func (im *importer) collectNames(el *element) {
	if !el.enabled() {
		return
	}
	add := func(list string) {
		for _, n := range strings.Split(list, ";") {
			if n = strings.TrimSpace(n); n != "" {
				im.defined[n] = true
			}
		}
	}
	switch el.typ() {
	case tagArguments:
		for _, a := range arguments(el.n) {
			im.defined[a.name] = true
		}
	case tagTestPlan:
		for _, a := range arguments(prop(el.n, "TestPlan.user_defined_variables")) {
			im.defined[a.name] = true
		}
	case tagCSV:
		names := el.str("variableNames")
		if names == "" {
			names = im.csvHeader(el)
		}
		add(strings.ReplaceAll(names, ",", ";"))
	case tagJSONExtract:
		add(el.str("JSONPostProcessor.referenceNames"))
	case tagJSONPath:
		add(el.str("VAR"))
	case tagRegex:
		add(el.str("RegexExtractor.refname"))
	}
	for _, k := range el.kids {
		im.collectNames(k)
	}
}

// csvHeader returns the first line of a CSV Data Set Config's file, which
// names the columns when the element does not.
func (im *importer) csvHeader(el *element) string {
	file := el.str("filename")
	if strings.Contains(file, "${") {
		return ""
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(im.planDir, file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(strings.TrimPrefix(line, "\ufeff"))
}

// ident turns a JMeter variable name into a scenario name.
func ident(name string) string {
	s := badIdentRe.ReplaceAllString(name, "_")
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	if slices.Contains(builtins, s) {
		s += "_"
	}
	return s
}

// addVar adds a User Defined Variable.
func (im *importer) addVar(el *element, name, value, from string) {
	if name == "" {
		return
	}
	t, ok := im.tmpl(el, value)
	v := varOut{name: ident(name), value: t, raw: value, template: strings.Contains(t, "{{"), from: from}
	if !ok {
		return
	}
	if i, dup := im.varIdx[v.name]; dup {
		im.vars[i] = v // JMeter: the last definition wins
		return
	}
	im.varIdx[v.name] = len(im.vars)
	im.vars = append(im.vars, v)
}

// translate walks the test plan.
func (im *importer) translate(plan *element) error {
	var main *element
	for _, el := range plan.kids {
		if !el.enabled() {
			im.ignore(el, "disabled")
			continue
		}
		switch el.typ() {
		case tagThreadGroup:
			if main != nil {
				im.skip(el, "a second thread group: a scenario has one kind of user; import it from a plan of its own")
				continue
			}
			main = el
		case tagSetupGroup:
			if len(im.setup) > 0 {
				im.skip(el, "a second setUp thread group")
				continue
			}
			im.setupGroup(el, plan)
		}
	}
	if main == nil {
		return fmt.Errorf("%s: the plan has no enabled Thread Group", im.file)
	}
	sc := im.scope(im.scope(scope{}, plan.kids), main.kids) // User Defined Variables first
	im.threadGroup(main)
	im.walk(main.kids, sc, false)
	for _, el := range plan.kids {
		if el.enabled() && el.typ() != tagThreadGroup && el.typ() != tagSetupGroup {
			im.other(el)
		}
	}
	im.rateTimer()
	if len(im.missing) > 0 {
		return &MissingPropertiesError{File: im.file, Properties: im.missing}
	}
	if len(im.steps) == 0 {
		return fmt.Errorf("%s: thread group %q has no HTTP Request sampler that could be translated", im.file, main.name())
	}
	return nil
}

// scope is what applies to the samplers below a level of the tree, outer
// levels first.
type scope struct {
	defaults, headers, timers, post, asserts []*element
	// rates are the rate timers (Constant Throughput, Precise
	// Throughput, Throughput Shaping), which become the load's open
	// model.
	rates []*element
}

// scope adds the elements of one level to sc. Configuration, timers,
// post-processors and assertions apply to every sampler of their level
// and below, wherever they stand among them.
func (im *importer) scope(sc scope, level []*element) scope {
	out := scope{
		defaults: slices.Clone(sc.defaults), headers: slices.Clone(sc.headers), timers: slices.Clone(sc.timers),
		post: slices.Clone(sc.post), asserts: slices.Clone(sc.asserts), rates: slices.Clone(sc.rates),
	}
	for _, el := range level {
		if !el.enabled() {
			continue
		}
		switch el.typ() {
		case tagConfig:
			if el.gui() == "HttpDefaultsGui" {
				out.defaults = append(out.defaults, el)
			}
		case tagHeaders:
			out.headers = append(out.headers, el)
		case tagTimer:
			out.timers = append(out.timers, el)
		case tagConstThroughput, tagPreciseThroughput, tagShaping:
			out.rates = append(out.rates, el)
			im.sawRate(el)
		case tagJSONExtract, tagJSONPath, tagRegex:
			out.post = append(out.post, el)
		case tagRespAssert, tagJSONAssert:
			out.asserts = append(out.asserts, el)
		case tagArguments:
			for _, a := range arguments(el.n) {
				im.addVar(el, a.name, a.value, "User Defined Variables "+strconv.Quote(el.name()))
			}
			im.reported[el] = true
		case tagCSV:
			im.csv(el)
		}
	}
	return out
}

// walk translates the samplers of one level, in order.
func (im *importer) walk(level []*element, sc scope, setup bool) {
	for _, el := range level {
		if !el.enabled() {
			im.ignore(el, "disabled")
			continue
		}
		switch el.typ() {
		case tagSampler:
			inner := im.scope(sc, el.kids)
			st := im.sampler(el, inner)
			if st == nil {
				continue
			}
			if setup {
				im.setup = append(im.setup, st)
			} else {
				im.steps = append(im.steps, st)
				for _, r := range inner.rates {
					im.rateSteps[r]++
				}
			}
			for _, k := range el.kids {
				im.other(k)
			}
		case tagSimple:
			im.walk(el.kids, im.scope(sc, el.kids), setup)
		default:
			im.other(el)
		}
	}
}

// other lists an element that is neither a sampler nor a controller walked
// into: translated ones through their scope, the rest as skipped.
func (im *importer) other(el *element) {
	if im.reported[el] {
		return
	}
	if !el.enabled() {
		im.ignore(el, "disabled")
		return
	}
	t := el.typ()
	switch {
	case t == tagConfig && el.gui() == "HttpDefaultsGui", t == tagHeaders, t == tagTimer, t == tagJSONExtract,
		t == tagJSONPath, t == tagRegex, t == tagRespAssert, t == tagJSONAssert, t == tagArguments, t == tagCSV, isRateTimer(t):
		// translated where it applies
	case slices.Contains(listeners, t):
		im.ignore(el, "a listener: showdown records its own results")
	case strings.HasSuffix(t, "Controller"):
		im.skip(el, "a logic controller other than a Simple Controller: its samplers (and their children) are not translated")
	case strings.HasSuffix(t, "Timer"):
		im.skip(el, "only Constant Timers (a step's pause) and the Constant Throughput, Precise Throughput and Throughput Shaping Timers (the open model's rate) are translated")
	case strings.HasSuffix(t, "ThreadGroup"):
		im.skip(el, "thread groups other than Thread Group and setUp Thread Group are not translated")
	default:
		im.skip(el, "no scenario equivalent")
	}
}

// threadGroup reads the main thread group's load.
func (im *importer) threadGroup(tg *element) {
	l := &im.res.Load
	l.ThreadGroup, l.Line = tg.name(), tg.line()
	num := func(prop string, what string) int {
		raw := tg.str(prop)
		v, from, ok := im.literal(tg, raw)
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if !ok || err != nil {
			im.skip(tg, "%s %q is not a number or ${__P(name,number)}", what, raw)
			return 0
		}
		if from != "" {
			l.From = append(l.From, fmt.Sprintf("%s from %s", what, from))
		}
		return n
	}
	l.Users = num("ThreadGroup.num_threads", "threads")
	if l.Users < 1 {
		l.Users = 1
	}
	l.RampUp = time.Duration(num("ThreadGroup.ramp_time", "ramp-up")) * time.Second
	// Loops: -1 (or none) is "Infinite", which ends with the scheduler.
	if loopCtl := prop(tg.n, "ThreadGroup.main_controller"); loopCtl != nil {
		raw := propText(loopCtl, "LoopController.loops")
		v, from, ok := im.literal(tg, raw)
		n, err := strconv.Atoi(strings.TrimSpace(v))
		switch {
		case raw == "":
		case !ok || err != nil:
			im.skip(tg, "loops %q is not a number or ${__P(name,number)}", raw)
		case n > 0:
			l.Iterations = n
			if from != "" {
				l.From = append(l.From, "loops from "+from)
			}
		}
	}
	if tg.boolean("ThreadGroup.scheduler", false) {
		if s := num("ThreadGroup.duration", "duration"); s > 0 {
			l.Duration = time.Duration(s) * time.Second
		}
		if d := tg.str("ThreadGroup.delay"); d != "" && d != "0" {
			im.note("thread group %q: the start-up delay (%ss) is not translated", tg.name(), d)
		}
	}
	if l.Iterations == 0 && l.Duration == 0 {
		im.note("thread group %q loops forever without a duration: give the run a --duration", tg.name())
	}
	switch e := tg.str("ThreadGroup.on_sample_error"); e {
	case "", "continue":
		im.note("after a failed sample JMeter goes on with the next sampler; a scenario user starts its next iteration (JMeter's \"Start Next Thread Loop\"): with errors, sample counts differ")
	case "startnextloop":
	default:
		im.note("thread group %q: on a failed sample JMeter does %q; a scenario user starts its next iteration", tg.name(), e)
	}
}

// setupGroup translates a setUp Thread Group run by one thread once into
// the scenario's setup section.
func (im *importer) setupGroup(el, plan *element) {
	loopCtl := prop(el.n, "ThreadGroup.main_controller")
	if el.str("ThreadGroup.num_threads") != "1" || loopCtl != nil && propText(loopCtl, "LoopController.loops") != "1" {
		im.skip(el, "a setUp Thread Group is translated (as the setup section, run once) only with 1 thread and 1 loop")
		return
	}
	sc := im.scope(scope{}, plan.kids)
	im.walk(el.kids, im.scope(sc, el.kids), true)
	im.reported[el] = true
}

// csv translates a CSV Data Set Config.
func (im *importer) csv(el *element) {
	if im.reported[el] {
		return
	}
	im.reported[el] = true
	d := dataOut{el: el, delimiter: el.str("delimiter"), skipFirst: el.boolean("ignoreFirstLine", false),
		recycle: el.boolean("recycle", true), stopThread: el.boolean("stopThread", false)}
	file, _, ok := im.literal(el, el.str("filename"))
	if !ok || file == "" {
		im.res.Skipped = append(im.res.Skipped, Problem{el.name(), el.typ(), el.line(), "the file name must be a constant"})
		return
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(im.planDir, file)
	}
	absOut, err1 := filepath.Abs(im.outDir)
	absFile, err2 := filepath.Abs(file)
	if rel, err := filepath.Rel(absOut, absFile); err == nil && err1 == nil && err2 == nil {
		file = rel
	}
	d.file = filepath.ToSlash(file)
	if names := el.str("variableNames"); names != "" {
		for _, n := range strings.Split(names, ",") {
			d.names = append(d.names, ident(strings.TrimSpace(n)))
		}
	}
	switch m := el.str("shareMode"); m {
	case "", "shareMode.all", "shareMode.group":
		d.share = "all"
	case "shareMode.thread":
		d.share = "user"
	default:
		im.res.Skipped = append(im.res.Skipped, Problem{el.name(), el.typ(), el.line(), fmt.Sprintf("sharing mode %q: the file is shared by all users instead", m)})
		d.share = "all"
	}
	if !d.recycle || d.stopThread {
		im.res.Skipped = append(im.res.Skipped, Problem{el.name(), el.typ(), el.line(),
			"recycle off or stop thread at end of file: a scenario starts over at the first row"})
	}
	if el.boolean("quotedData", false) {
		im.note("CSV Data Set Config %q: quoted data is read as CSV (\"a,b\" is one cell)", el.name())
	} else {
		im.note("CSV Data Set Config %q: a scenario reads its file as CSV, so a cell starting with a double quote is unquoted", el.name())
	}
	im.data = append(im.data, d)
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
