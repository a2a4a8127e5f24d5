// Package jmx translates a JMeter 5 test plan (.jmx) into a showdown
// scenario: the steps and the load settings of its thread group, with
// every element it could not translate listed by its name, type and
// line, so a user coming from JMeter can bring a plan and see what it
// becomes.
//
// What it translates: the Thread Group (threads, ramp-up, loops or
// duration), a setUp Thread Group (the scenario's setup section), HTTP
// Request samplers (method, path, body, parameters), HTTP Request Defaults,
// HTTP Header Manager, User Defined Variables, ${__P(name,default)}
// properties (scenario variables with defaults), JSON Extractor and the
// JSON Path post-processor, Regular Expression Extractor, Response
// Assertion, JSON Assertion, Constant Timer, CSV Data Set Config and Simple
// Controllers; and the rate timers (Constant Throughput, Precise
// Throughput, Throughput Shaping), which make the load an open model at
// their rate, the threads its connections. docs/jmeter.md is the
// reference.
package jmx

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Options adjust an import.
type Options struct {
	// ScenarioPath is where the scenario will be written; CSV file paths
	// are made relative to its folder, and the scenario is checked as if
	// it were there. Default: the plan's name with .yaml, beside the plan.
	ScenarioPath string
	// Properties replace the defaults of ${__P(name,default)}, like
	// JMeter's -Jname=value: in the load, and as the variables' values.
	Properties map[string]string
}

// Result is an imported plan.
type Result struct {
	// Scenario is the scenario file (YAML), already checked by the
	// scenario parser.
	Scenario []byte
	// Load is the main thread group's load.
	Load Load
	// Skipped lists every element that was not translated, in file order;
	// the scenario runs without them.
	Skipped []Problem
	// Became lists the elements that became the load rather than a part
	// of the scenario (rate timers), with what each became.
	Became []Problem
	// Ignored lists elements that need no translation: listeners
	// (showdown records its own results) and disabled elements.
	Ignored []Problem
	// Notes are differences between how JMeter and showdown run what was
	// translated.
	Notes []string
	// Unset lists the properties the plan reads in requests with no
	// default, which -J did not set: each is a scenario variable to set
	// with attack --var.
	Unset []UnsetProperty
}

// UnsetProperty is a property with no default that became a scenario
// variable.
type UnsetProperty struct {
	// Name is the JMeter property, Var the scenario variable.
	Name, Var string
	// Value is what the scenario holds meanwhile: JMeter's own fallback
	// ("1" for ${__P(name)}, the name for ${__property(name)}).
	Value string
}

// MissingProperty is a property with no default and no -J value that a
// plan reads where a constant is needed.
type MissingProperty struct {
	// Name is the property's name.
	Name string
	// Line, Type and Element locate the first element that reads it.
	Line          int
	Type, Element string
}

// MissingPropertiesError is the error of a plan that reads properties with
// no default (${__P(NAME)}) where a constant is needed: the thread
// group's figures, the server, a timer's delay, a CSV file's name. JMeter
// takes them from -J NAME=VALUE; so does the import.
type MissingPropertiesError struct {
	// File names the plan.
	File string
	// Properties are the missing properties, in the order first read.
	Properties []MissingProperty
}

func (e *MissingPropertiesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d propert%s with no default and no -J value, where the plan needs a constant (nothing written):",
		e.File, len(e.Properties), map[bool]string{true: "y", false: "ies"}[len(e.Properties) == 1])
	for _, p := range e.Properties {
		fmt.Fprintf(&b, "\n  %s: read by %s %q (line %d); set it with -J %s=VALUE", p.Name, p.Type, p.Element, p.Line, p.Name)
	}
	return b.String()
}

// Hint gives the command line that sets every missing property.
func (e *MissingPropertiesError) Hint() string {
	args := []string{"showdown import jmx"}
	for _, p := range e.Properties {
		args = append(args, "-J "+p.Name+"=...")
	}
	return strings.Join(append(args, e.File), " ")
}

// Problem is one element of the plan, with why it is listed.
type Problem struct {
	// Name is the element's name in JMeter (testname).
	Name string
	// Type is its class (HTTPSamplerProxy, IfController, ...).
	Type string
	// Line is where it starts in the .jmx file.
	Line int
	// Reason says what was not translated and why.
	Reason string
}

func (p Problem) String() string {
	return fmt.Sprintf("line %d: %s %q: %s", p.Line, p.Type, p.Name, p.Reason)
}

// Load is the load of a thread group: the closed model of its threads,
// or the open model of a rate timer (Open).
type Load struct {
	// ThreadGroup names the thread group, Line where it starts.
	ThreadGroup string
	Line        int
	// Users is the number of threads.
	Users int
	// RampUp is the time over which they start.
	RampUp time.Duration
	// Iterations is the loop count per user; 0 runs until Duration.
	Iterations int
	// Duration is the scheduler's duration; 0 when the loops end the run.
	Duration time.Duration
	// From names the properties (${__P}) the figures were read from, with
	// the defaults used.
	From []string
	// Open is the open model of the rate timer that paces the threads;
	// nil: the closed model of Users.
	Open *Open
}

// YAML returns the load as a plan's load: section, with comments that say
// where it came from and how to run it with showdown attack.
func (l Load) YAML(scenarioPath string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# The load of JMeter thread group %q (line %d), as a plan's load: section.\n", l.ThreadGroup, l.Line)
	for _, f := range l.From {
		fmt.Fprintf(&b, "# %s\n", f)
	}
	if l.Open != nil {
		l.openYAML(&b, scenarioPath)
		return []byte(b.String())
	}
	if l.Iterations > 0 {
		fmt.Fprintf(&b, "# JMeter ran %d threads x %d loops; a plan states a duration, so run the\n# same number of iterations with:\n", l.Users, l.Iterations)
	} else {
		b.WriteString("# Run it alone with:\n")
	}
	fmt.Fprintf(&b, "#   showdown attack %s\n", strings.Join(l.AttackArgs(scenarioPath), " "))
	b.WriteString("load:\n  model: closed\n")
	fmt.Fprintf(&b, "  levels: [%d]\n", l.Users)
	fmt.Fprintf(&b, "  ramp_up: %s\n", fmtDuration(l.RampUp))
	d := l.Duration
	if d == 0 {
		d = time.Minute
		b.WriteString("  # no scheduler in the plan: a duration is needed here\n")
	}
	fmt.Fprintf(&b, "  duration: %s\n", fmtDuration(d))
	b.WriteString("  warmup: 0s # JMeter counts every sample; a warm-up is advised\n")
	return []byte(b.String())
}

// AttackArgs returns the showdown attack arguments that run the scenario
// with this load.
func (l Load) AttackArgs(scenarioPath string) []string {
	if o := l.Open; o != nil {
		args := []string{"--scenario", scenarioPath, "--rate", fmtArg(o.Rate)}
		if len(o.Stages) > 0 {
			args = append(args, "--stages", o.StagesArg())
		} else {
			args = append(args, "--duration", fmtDuration(o.Duration))
		}
		args = append(args, "--arrivals", string(o.Arrivals))
		if o.Seed != 0 {
			args = append(args, "--arrival-seed", strconv.FormatUint(o.Seed, 10))
		}
		args = append(args, "--connections", strconv.Itoa(o.Connections))
		if o.MaxInflight > 0 {
			args = append(args, "--max-inflight", strconv.Itoa(o.MaxInflight))
		}
		return args
	}
	args := []string{"--scenario", scenarioPath, "--users", strconv.Itoa(l.Users)}
	if l.RampUp > 0 {
		args = append(args, "--ramp-up", fmtDuration(l.RampUp))
	}
	if l.Iterations > 0 {
		args = append(args, "--iterations", strconv.Itoa(l.Iterations))
	}
	if l.Duration > 0 {
		args = append(args, "--duration", fmtDuration(l.Duration))
	}
	return args
}

func fmtDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// openYAML writes the open model as a plan's load: section. A plan's
// load has one rate per level and no stages, so a profile's peak is the
// level, for the profile's length, and the comment gives the attack
// command that runs the profile itself.
func (l Load) openYAML(b *strings.Builder, scenarioPath string) {
	o := l.Open
	for i, r := range o.Report {
		if i == 0 {
			r = fmt.Sprintf("%s %q (line %d): %s", o.Timer, o.Name, o.Line, r)
		}
		fmt.Fprintf(b, "# %s.\n", r)
	}
	for _, c := range o.Comments {
		fmt.Fprintf(b, "# %s.\n", c)
	}
	peak := o.Peak()
	level := max(1, int(math.Round(peak)))
	if len(o.Stages) > 0 {
		b.WriteString("# A plan's load has one rate per level and no stages: the level below is\n# the profile's peak, held for the profile's length. Run the profile with:\n")
	} else {
		b.WriteString("# Run it alone with:\n")
	}
	fmt.Fprintf(b, "#   showdown attack %s\n", strings.Join(l.AttackArgs(scenarioPath), " "))
	b.WriteString("load:\n  model: open\n")
	switch {
	case len(o.Stages) > 0:
		fmt.Fprintf(b, "  levels: [%d] # iterations/s: the profile's peak (%s/s)\n", level, fmtNum(peak))
	case float64(level) != peak:
		fmt.Fprintf(b, "  levels: [%d] # iterations/s: levels are whole rates; the timer's is %s/s (attack --rate takes it)\n", level, fmtNum(peak))
	default:
		fmt.Fprintf(b, "  levels: [%d] # iterations/s\n", level)
	}
	fmt.Fprintf(b, "  duration: %s\n", fmtDuration(o.Length()))
	fmt.Fprintf(b, "  arrivals: %s\n", o.Arrivals)
	if o.Seed != 0 {
		fmt.Fprintf(b, "  # a plan draws its Poisson gaps from its own seed; attack --arrival-seed %d is the timer's\n", o.Seed)
	}
	fmt.Fprintf(b, "  connections: %d # the thread group's threads\n", o.Connections)
	if o.MaxInflight > 0 {
		fmt.Fprintf(b, "  max_inflight: %d\n", o.MaxInflight)
	}
	b.WriteString("  warmup: 0s # JMeter counts every sample; a warm-up is advised\n")
}
