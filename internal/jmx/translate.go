package jmx

import (
	"errors"
	"fmt"
	"net/url"
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
		varIdx: map[string]int{}, defined: map[string]bool{}, names: map[string]int{},
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

// property registers ${__P(name,default)} as a variable with a default.
// A property the plan gives no default (hasDef false) and -J no value
// gets JMeter's own fallback (fallback: "1" for __P, the name for
// __property) and is listed in Result.Unset, to be set with attack --var.
func (im *importer) property(name, def string, hasDef bool, fallback string) string {
	id := ident(name)
	if im.defined[name] {
		// A JMeter variable has the name too (users = ${__P(users,10)}
		// is a common idiom): the property gets its own.
		id += "_prop"
	}
	from := "property " + name + " (-J" + name + "=...; here --var " + id + "=...)"
	v, set := im.props[name]
	switch {
	case set:
		def = v
	case !hasDef:
		def = fallback
		from = fmt.Sprintf("property %s has no default in the plan: set it with --var %s=VALUE (JMeter's -J%s=VALUE); without, %q as in JMeter", name, id, name, fallback)
		if !slices.ContainsFunc(im.res.Unset, func(u UnsetProperty) bool { return u.Var == id }) {
			im.res.Unset = append(im.res.Unset, UnsetProperty{Name: name, Var: id, Value: fallback})
		}
	}
	if _, ok := im.varIdx[id]; !ok {
		im.varIdx[id] = len(im.vars)
		im.vars = append(im.vars, varOut{name: id, value: def, raw: def, from: from})
	}
	return id
}

// missingProperty records that el reads the property name, which has no
// default and no -J value, where a constant is needed.
func (im *importer) missingProperty(el *element, name string) {
	if slices.ContainsFunc(im.missing, func(m MissingProperty) bool { return m.Name == name }) {
		return
	}
	im.missing = append(im.missing, MissingProperty{Name: name, Line: el.line(), Type: el.typ(), Element: el.name()})
}

// tmpl translates JMeter's ${...} references in s into scenario templates.
// ok is false when s uses something with no scenario equivalent (el is
// then listed).
func (im *importer) tmpl(el *element, s string) (string, bool) {
	if strings.Contains(s, "{{") {
		im.skip(el, "the text %q holds '{{', which starts a template in a scenario", clip(s))
		return s, false
	}
	ok := true
	out, _ := expand(s, func(expr string) (string, bool) {
		out, good := im.reference(el, expr)
		if !good {
			ok = false
			return "${" + expr + "}", true
		}
		return out, true
	})
	return out, ok
}

// expand is s with each ${...} reference in turn replaced by what ref
// makes of its inside: the one scanner of references, for templates
// (tmpl) and constants (literal). It stops, false, where ref says false
// (out then holds the text before that reference) or at a '${' never
// closed (out keeps it and the rest as they are).
func expand(s string, ref func(expr string) (string, bool)) (out string, ok bool) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), true
		}
		b.WriteString(s[:i])
		end := matchBrace(s, i+2)
		if end < 0 {
			b.WriteString(s[i:])
			return b.String(), false
		}
		r, ok := ref(s[i+2 : end])
		if !ok {
			return b.String(), false
		}
		b.WriteString(r)
		s = s[end+1:]
	}
}

// matchBrace returns the index of the '}' closing a '${' whose content
// starts at from, or -1.
func matchBrace(s string, from int) int {
	depth := 1
	for j := from; j < len(s); j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// reference translates the inside of one ${...}.
func (im *importer) reference(el *element, expr string) (string, bool) {
	if !strings.HasPrefix(expr, "__") {
		if !im.defined[expr] {
			im.skip(el, "uses ${%s}, which no element of the plan defines (JMeter would send it as is)", expr)
			return "", false
		}
		return "{{" + ident(expr) + "}}", true
	}
	fn, args := expr, []string(nil)
	if i := strings.IndexByte(expr, '('); i >= 0 && strings.HasSuffix(expr, ")") {
		fn, args = expr[:i], splitArgs(expr[i+1:len(expr)-1])
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch fn {
	case "__P":
		if arg(0) == "" {
			break
		}
		return "{{" + im.property(arg(0), arg(1), len(args) > 1, "1") + "}}", true
	case "__property":
		if arg(0) == "" || arg(1) != "" {
			break
		}
		return "{{" + im.property(arg(0), arg(2), len(args) > 2, arg(0)) + "}}", true
	case "__threadNum":
		return "{{user}}", true
	case "__UUID":
		return "{{uuid}}", true
	case "__Random":
		lo, err1 := strconv.ParseInt(arg(0), 10, 64)
		hi, err2 := strconv.ParseInt(arg(1), 10, 64)
		if err1 != nil || err2 != nil || arg(2) != "" || lo > hi {
			break
		}
		return fmt.Sprintf("{{randint %d %d}}", lo, hi), true
	}
	im.skip(el, "uses ${%s}: the function %s has no scenario equivalent (translated: __P, __property, __threadNum, __UUID, __Random with two bounds)", expr, fn)
	return "", false
}

// splitArgs splits a function's arguments at commas not escaped by '\'.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == ',':
			cur.WriteByte(',')
			i++
		case s[i] == ',':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// literal resolves a setting that must be a constant (a thread count, a
// host): a number or text, ${__P(name,default)} (its default) or a
// constant User Defined Variable. from says which property was used.
func (im *importer) literal(el *element, s string) (val, from string, ok bool) {
	return im.literalDepth(el, s, 0)
}

func (im *importer) literalDepth(el *element, s string, depth int) (val, from string, ok bool) {
	if !strings.Contains(s, "${") {
		return s, "", true
	}
	var froms []string
	out, ok := expand(s, func(expr string) (string, bool) {
		if strings.HasPrefix(expr, "__P(") && strings.HasSuffix(expr, ")") {
			a := splitArgs(expr[4 : len(expr)-1])
			if v, ok := im.props[a[0]]; ok {
				froms = append(froms, fmt.Sprintf("property %s (set to %q)", a[0], v))
				return v, true
			}
			if len(a) < 2 {
				// JMeter would use "1": for a thread count that runs, for
				// a server it fails; the plan expects -J either way.
				im.missingProperty(el, a[0])
				return "", false
			}
			froms = append(froms, fmt.Sprintf("property %s (default %q)", a[0], a[1]))
			return a[1], true
		}
		// A User Defined Variable: its own text, resolved the same way.
		v, isVar := im.varIdx[ident(expr)]
		if !isVar || depth > 4 {
			return "", false
		}
		val, f, ok := im.literalDepth(el, im.vars[v].raw, depth+1)
		if !ok {
			return "", false
		}
		if f != "" {
			froms = append(froms, f)
		}
		return val, true
	})
	if !ok {
		return "", "", false
	}
	return out, strings.Join(froms, ", "), true
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
}

// scope adds the elements of one level to sc. Configuration, timers,
// post-processors and assertions apply to every sampler of their level
// and below, wherever they stand among them.
func (im *importer) scope(sc scope, level []*element) scope {
	out := scope{
		defaults: slices.Clone(sc.defaults), headers: slices.Clone(sc.headers), timers: slices.Clone(sc.timers),
		post: slices.Clone(sc.post), asserts: slices.Clone(sc.asserts),
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
			st := im.sampler(el, im.scope(sc, el.kids))
			if st == nil {
				continue
			}
			if setup {
				im.setup = append(im.setup, st)
			} else {
				im.steps = append(im.steps, st)
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
		t == tagJSONPath, t == tagRegex, t == tagRespAssert, t == tagJSONAssert, t == tagArguments, t == tagCSV:
		// translated where it applies
	case slices.Contains(listeners, t):
		im.ignore(el, "a listener: showdown records its own results")
	case strings.HasSuffix(t, "Controller"):
		im.skip(el, "a logic controller other than a Simple Controller: its samplers (and their children) are not translated")
	case strings.HasSuffix(t, "Timer"):
		im.skip(el, "only Constant Timers are translated (as a step's pause)")
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

// header is one request header.
type headerOut struct{ name, value string }

// stepOut is one translated sampler.
type stepOut struct {
	el       *element
	name     string
	method   string
	url      string
	headers  []headerOut
	body     string
	hasBody  bool
	status   []int
	json     []jsonOut
	contains string
	matches  string
	captures []captureOut
	pause    time.Duration
}

type jsonOut struct {
	path   string
	exists int // 1 exists, -1 absent, 0 value
	value  string
	kind   string // "number", "bool", "null", "string"
}

type captureOut struct {
	name, kind, src string // kind: json, regex
	group, match    int
	headers         bool
	def             string
	hasDef          bool
}

// sampler translates one HTTP Request with what applies to it.
func (im *importer) sampler(el *element, sc scope) *stepOut {
	st := &stepOut{el: el, method: im.method(el)}
	if st.method == "" {
		return nil
	}
	origin, path, ok := im.where(el, sc)
	if !ok {
		return nil
	}
	p, ok := im.tmpl(el, path)
	if !ok {
		return nil
	}
	st.url = p
	if origin != im.base {
		st.url = origin + p
	}
	if !im.parameters(st, el) {
		return nil
	}
	im.headers(st, sc)
	im.timers(st, sc)
	for _, pp := range sc.post {
		im.extractor(st, pp)
	}
	for _, a := range sc.asserts {
		im.assertion(st, a)
	}
	im.name(st)
	return st
}

// method is the HTTP method of sampler el, or "" (el listed) when the
// sampler cannot be translated: a method a scenario does not send, or a
// file upload.
func (im *importer) method(el *element) string {
	m := strings.ToUpper(el.str("HTTPSampler.method"))
	if m == "" {
		m = "GET"
	}
	if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}, m) {
		im.skip(el, "method %s is not one a scenario sends", m)
		return ""
	}
	if f := prop(el.n, "HTTPsampler.Files"); f != nil && len(f.kids) > 0 && len(prop(f, "HTTPFileArgs.files").kids) > 0 {
		im.skip(el, "file uploads are not translated")
		return ""
	}
	if el.boolean("HTTPSampler.image_parser", false) {
		im.note("sampler %q: embedded resources are not fetched", el.name())
	}
	if !el.boolean("HTTPSampler.use_keepalive", true) {
		im.note("sampler %q: JMeter opens a new connection per request; showdown users keep theirs alive", el.name())
	}
	return m
}

// where is the server (origin) and path sampler el sends to: its own
// settings, else the defaults' (inner first). The first sampler also
// sets the scenario's base URL: the defaults' server when they name one.
func (im *importer) where(el *element, sc scope) (origin, path string, ok bool) {
	setting := func(key string) string {
		if v := el.str(key); v != "" {
			return v
		}
		return defaultSetting(sc, key)
	}
	// holder is the element a setting is written in, for messages.
	holder := func(key string) *element {
		if el.str(key) != "" {
			return el
		}
		for i := len(sc.defaults) - 1; i >= 0; i-- {
			if sc.defaults[i].str(key) != "" {
				return sc.defaults[i]
			}
		}
		return el
	}
	path = el.str("HTTPSampler.path")
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		u, err := url.Parse(path)
		if err != nil {
			im.skip(el, "bad URL %q", path)
			return "", "", false
		}
		origin = u.Scheme + "://" + u.Host
		path = strings.TrimPrefix(path, origin)
	} else {
		o, ok := im.origin(holder, setting)
		if !ok {
			im.skip(el, "the server name, port and protocol must be constants or ${__P(name,default)} (here or in HTTP Request Defaults)")
			return "", "", false
		}
		origin = o
		if path == "" {
			path = setting("HTTPSampler.path")
		}
	}
	if path == "" || !strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "${") {
		path = "/" + path
	}
	if im.base == "" {
		im.base = origin
		self := func(string) *element { return el }
		if o, ok := im.origin(self, func(key string) string { return defaultSetting(sc, key) }); ok {
			im.base = o
		}
	}
	return origin, path, true
}

// origin is the scheme, host and port that setting gives (holder names
// the element each is written in), the port left out where it is the
// scheme's own; false when one is not a constant or there is no host.
func (im *importer) origin(holder func(key string) *element, setting func(key string) string) (string, bool) {
	proto, _, ok1 := im.literal(holder("HTTPSampler.protocol"), setting("HTTPSampler.protocol"))
	host, _, ok2 := im.literal(holder("HTTPSampler.domain"), setting("HTTPSampler.domain"))
	port, _, ok3 := im.literal(holder("HTTPSampler.port"), setting("HTTPSampler.port"))
	if !ok1 || !ok2 || !ok3 || host == "" {
		return "", false
	}
	if proto == "" {
		proto = "http"
	}
	o := strings.ToLower(proto) + "://" + host
	if port != "" && !(proto == "http" && port == "80" || proto == "https" && port == "443") {
		o += ":" + port
	}
	return o, true
}

// parameters translates el's parameters: a raw body, a form's body, or
// a query; false (el listed) when one cannot be translated.
func (im *importer) parameters(st *stepOut, el *element) bool {
	args := arguments(prop(el.n, "HTTPsampler.Arguments"))
	if len(args) == 0 {
		return true
	}
	if el.boolean("HTTPSampler.postBodyRaw", false) {
		body, ok := im.tmpl(el, args[0].value)
		st.body, st.hasBody = body, true
		return ok
	}
	var parts []string
	for _, a := range args {
		n, ok1 := im.tmpl(el, a.name)
		v, ok2 := im.tmpl(el, a.value)
		if !ok1 || !ok2 {
			return false
		}
		if a.encode {
			n, v = encodeLiteral(n), encodeLiteral(v)
		}
		if a.useEquals || v != "" {
			parts = append(parts, n+"="+v)
		} else {
			parts = append(parts, n)
		}
	}
	q := strings.Join(parts, "&")
	switch st.method {
	case "POST", "PUT", "PATCH":
		st.body, st.hasBody = q, true
		st.headers = append(st.headers, headerOut{"Content-Type", "application/x-www-form-urlencoded"})
	default:
		if strings.Contains(st.url, "?") {
			st.url += "&" + q
		} else {
			st.url += "?" + q
		}
	}
	return true
}

// headers adds the header managers' headers in scope: inner managers
// replace outer ones' headers of the same name.
func (im *importer) headers(st *stepOut, sc scope) {
	for _, hm := range sc.headers {
		coll := prop(hm.n, "HeaderManager.headers")
		if coll == nil {
			continue
		}
		for _, h := range coll.kids {
			name := propText(h, "Header.name")
			val, ok := im.tmpl(hm, rawProp(h, "Header.value"))
			if name == "" || !ok {
				continue
			}
			st.headers = slices.DeleteFunc(st.headers, func(o headerOut) bool { return strings.EqualFold(o.name, name) })
			st.headers = append(st.headers, headerOut{name, val})
		}
	}
}

// timers adds the constant timers in scope to the step's pause.
func (im *importer) timers(st *stepOut, sc scope) {
	for _, t := range sc.timers {
		raw := t.str("ConstantTimer.delay")
		v, _, ok := im.literal(t, raw)
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if !ok || err != nil || ms < 0 {
			im.skip(t, "the delay %q is not a number of milliseconds or ${__P(name,ms)}", raw)
			continue
		}
		st.pause += time.Duration(ms) * time.Millisecond
	}
	if len(sc.timers) > 0 {
		im.note("JMeter waits a timer's delay before each sampler in its scope; a scenario pauses after the step, as many times")
	}
}

// name names the step as its sampler, or by its method and URL; names
// label results, so a repeated one gets a number.
func (im *importer) name(st *stepOut) {
	st.name = st.el.name()
	if st.name == "" {
		st.name = st.method + " " + st.url
	}
	if n := im.names[st.name]; n > 0 {
		im.names[st.name] = n + 1
		st.name = fmt.Sprintf("%s (%d)", st.name, n+1)
		im.note("sampler names label results, so repeated names get a number: %q", st.name)
	} else {
		im.names[st.name] = 1
	}
}

// defaultSetting is key in the innermost HTTP Request Defaults that set it.
func defaultSetting(sc scope, key string) string {
	for i := len(sc.defaults) - 1; i >= 0; i-- {
		if v := sc.defaults[i].str(key); v != "" {
			return v
		}
	}
	return ""
}

// encodeLiteral URL-encodes the text outside {{...}} templates.
func encodeLiteral(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(url.QueryEscape(s))
			return b.String()
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			b.WriteString(url.QueryEscape(s))
			return b.String()
		}
		b.WriteString(url.QueryEscape(s[:i]))
		b.WriteString(s[i : i+j+2])
		s = s[i+j+2:]
	}
}

// extractor translates a post-processor into captures of st.
func (im *importer) extractor(st *stepOut, pp *element) {
	switch pp.typ() {
	case tagJSONExtract:
		if s := pp.str("Sample.scope"); s != "" && s != "parent" {
			im.skip(pp, "only the main sample's response is translated (scope %q)", s)
			return
		}
		names := strings.Split(pp.str("JSONPostProcessor.referenceNames"), ";")
		paths := strings.Split(pp.str("JSONPostProcessor.jsonPathExprs"), ";")
		defs := strings.Split(pp.rawStr("JSONPostProcessor.defaultValues"), ";")
		matches := strings.Split(pp.str("JSONPostProcessor.match_numbers"), ";")
		if len(names) != len(paths) {
			im.skip(pp, "%d names for %d JSON paths", len(names), len(paths))
			return
		}
		for i, n := range names {
			m := ""
			if i < len(matches) {
				m = strings.TrimSpace(matches[i])
			}
			d := ""
			if i < len(defs) {
				d = defs[i]
			}
			im.jsonCapture(st, pp, strings.TrimSpace(n), strings.TrimSpace(paths[i]), m, d)
		}
	case tagJSONPath:
		if s := pp.str("SUBJECT"); s != "" && s != "BODY" {
			im.skip(pp, "only the response body is translated (subject %q)", s)
			return
		}
		im.jsonCapture(st, pp, pp.str("VAR"), pp.str("JSONPATH"), "", pp.rawStr("DEFAULT"))
	case tagRegex:
		c := captureOut{name: ident(pp.str("RegexExtractor.refname")), kind: "regex", src: pp.rawStr("RegexExtractor.regex"), match: 1}
		switch h := pp.str("RegexExtractor.useHeaders"); h {
		case "", "false":
		case "true":
			c.headers = true
		default:
			im.skip(pp, "only the body and the headers are searched (field %q)", h)
			return
		}
		if s := pp.str("Sample.scope"); s != "" && s != "parent" {
			im.skip(pp, "only the main sample's response is translated (scope %q)", s)
			return
		}
		g := groupRe.FindStringSubmatch(pp.str("RegexExtractor.template"))
		if g == nil {
			im.skip(pp, "template %q: only a single group ($1$) is translated", pp.str("RegexExtractor.template"))
			return
		}
		c.group, _ = strconv.Atoi(g[1])
		if m := pp.str("RegexExtractor.match_number"); m != "" {
			n, err := strconv.Atoi(m)
			if err != nil || n < 1 {
				im.skip(pp, "match number %q: only a fixed match (1, 2, ...) is translated, not random (0) or all (-1)", m)
				return
			}
			c.match = n
		}
		re, err := regexp.Compile(c.src)
		if err != nil {
			im.skip(pp, "the regular expression is not RE2 (Go) syntax: %v", err)
			return
		}
		if c.group > re.NumSubexp() {
			im.skip(pp, "group %d of an expression with %d groups", c.group, re.NumSubexp())
			return
		}
		if d := pp.rawStr("RegexExtractor.default"); d != "" || pp.boolean("RegexExtractor.default_empty_value", false) {
			c.def, c.hasDef = d, true
		} else {
			im.note("Regular Expression Extractor %q has no default: JMeter keeps the variable's previous value when nothing matches; the scenario fails the step", pp.name())
		}
		st.captures = append(st.captures, c)
	}
}

func (im *importer) jsonCapture(st *stepOut, pp *element, name, path, match, def string) {
	if name == "" || path == "" {
		im.skip(pp, "a name or JSON path is empty")
		return
	}
	if !pathRe.MatchString(path) {
		im.skip(pp, "JSON path %q: only $.a.b, $.a[0] and $[\"a\"] are translated (no wildcards, filters or ..)", path)
		return
	}
	if match != "" && match != "1" && match != "0" {
		im.skip(pp, "match number %q of a path that selects one value", match)
		return
	}
	st.captures = append(st.captures, captureOut{name: ident(name), kind: "json", src: path, def: def, hasDef: true})
}

// Response Assertion test types (bits).
const (
	rtMatch     = 1
	rtContains  = 2
	rtNot       = 4
	rtEquals    = 8
	rtSubstring = 16
	rtOr        = 32
)

// assertion translates an assertion into st's expectations.
func (im *importer) assertion(st *stepOut, a *element) {
	switch a.typ() {
	case tagRespAssert:
		im.responseAssertion(st, a)
	case tagJSONAssert:
		path := a.str("JSON_PATH")
		if !pathRe.MatchString(path) {
			im.skip(a, "JSON path %q: only $.a.b, $.a[0] and $[\"a\"] are translated", path)
			return
		}
		for _, j := range st.json {
			if j.path == path {
				im.skip(a, "a second assertion on %s for the same sampler", path)
				return
			}
		}
		invert := a.boolean("INVERT", false)
		j := jsonOut{path: path}
		switch {
		case !a.boolean("JSONVALIDATION", false):
			j.exists = 1
			if invert {
				j.exists = -1
			}
		case invert:
			im.skip(a, "an inverted value check is not translated (only inverted existence)")
			return
		case a.boolean("EXPECT_NULL", false):
			j.kind = "null"
		default:
			want := a.rawStr("EXPECTED_VALUE")
			if a.boolean("ISREGEX", true) && regexp.QuoteMeta(want) != want {
				im.skip(a, "expected value %q is a regular expression: only exact values are translated", want)
				return
			}
			v, ok := im.tmpl(a, want)
			if !ok {
				return
			}
			j.value, j.kind = v, "string"
			switch {
			case numberRe.MatchString(v):
				j.kind = "number"
			case v == "true" || v == "false":
				j.kind = "bool"
			}
		}
		st.json = append(st.json, j)
	}
}

func (im *importer) responseAssertion(st *stepOut, a *element) {
	typ, _ := strconv.Atoi(a.str("Assertion.test_type"))
	var tests []string
	for _, k := range a.n.kids {
		if k.attrs["name"] == "Asserion.test_strings" || k.attrs["name"] == "Assertion.test_strings" {
			for _, s := range k.kids {
				tests = append(tests, s.text)
			}
		}
	}
	if s := a.str("Assertion.scope"); s != "" && s != "parent" {
		im.skip(a, "only the main sample is translated (scope %q)", s)
		return
	}
	if typ&rtNot != 0 {
		im.skip(a, "a negated (Not) assertion is not translated")
		return
	}
	if len(tests) == 0 {
		im.skip(a, "no pattern to test")
		return
	}
	assume := a.boolean("Assertion.assume_success", false)
	switch a.str("Assertion.test_field") {
	case "Assertion.response_code":
		if st.status != nil {
			im.skip(a, "a second status assertion for the same sampler")
			return
		}
		if len(tests) > 1 && typ&rtOr == 0 {
			im.skip(a, "several status codes that must all match")
			return
		}
		var codes []int
		for _, t := range tests {
			c, err := strconv.Atoi(strings.TrimSpace(t))
			if err != nil || c < 100 || c > 599 {
				im.skip(a, "status pattern %q: only status codes are translated", t)
				return
			}
			if c >= 400 && !assume {
				im.skip(a, "expects status %d without \"Ignore Status\": JMeter counts such a sample failed whatever the assertion says", c)
				return
			}
			codes = append(codes, c)
		}
		st.status = codes
	case "Assertion.response_data":
		if assume {
			im.skip(a, "\"Ignore Status\" on a body assertion: a scenario checks the status too")
			return
		}
		if len(tests) > 1 {
			im.skip(a, "several patterns: a step has one body_contains and one body_matches")
			return
		}
		t := tests[0]
		switch {
		case typ&rtSubstring != 0:
			if st.contains != "" {
				im.skip(a, "a second substring assertion for the same sampler")
				return
			}
			v, ok := im.tmpl(a, t)
			if !ok {
				return
			}
			st.contains = v
		case typ&(rtMatch|rtContains|rtEquals) != 0:
			if st.matches != "" {
				im.skip(a, "a second pattern assertion for the same sampler")
				return
			}
			if strings.Contains(t, "${") {
				im.skip(a, "a pattern with variables is not translated")
				return
			}
			re := t
			switch {
			case typ&rtEquals != 0:
				re = "^" + regexp.QuoteMeta(t) + "$"
			case typ&rtMatch != 0:
				re = "^(?:" + t + ")$"
				im.note("Response Assertion %q: JMeter's Matches mode lets '.' match newlines ((?s)); the scenario does not", a.name())
			}
			if _, err := regexp.Compile(re); err != nil {
				im.skip(a, "the pattern is not RE2 (Go) syntax: %v", err)
				return
			}
			st.matches = re
		default:
			im.skip(a, "unknown test type %d", typ)
		}
	default:
		im.skip(a, "only the response code and the response body (text) are translated, not %q", a.str("Assertion.test_field"))
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
