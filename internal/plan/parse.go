package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/showdownlab/showdown/internal/located"
)

// Error is one problem in a plan file (the project's one located error
// type).
type Error = located.Error

// ErrorList is every problem found in a plan, reported at once.
type ErrorList = located.List

// Catalog is what a plan may refer to: each service and the workloads it
// supports, by name, and a stack that a plan may name by its folder (path:)
// also by that folder, absolute.
type Catalog map[string][]string

// LoadPlan reads, resolves and validates a plan file against catalog,
// for machine m.
func LoadPlan(path string, catalog Catalog, m Machine) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePlan(path, data, catalog, m)
}

// ParsePlan parses plan text read from file, applies defaults and
// validates it against catalog and machine m (its placement is m's),
// returning every problem at once.
func ParsePlan(file string, data []byte, catalog Catalog, m Machine) (*Plan, error) {
	return ParsePlanAgainst(file, data, catalog, m, "")
}

// ParsePlanAgainst is ParsePlan with every implementation that names no
// revision compared against itself at git revision against (`showdown
// run --against REV`): an arm at that revision is added before each,
// and is the baseline of fail_if (Plan.Baseline). The catalog must hold
// those arms (Revisions says which). An empty against adds nothing.
func ParsePlanAgainst(file string, data []byte, catalog Catalog, m Machine, against string) (*Plan, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, located.FromYAML(file, err)
	}
	p := &Plan{File: file, root: &root, machine: m}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// "auto" is a value of trials and load.warmup that their types do not
	// parse: note it, and drop the decoder's complaint about that line.
	autoLines := map[int]bool{}
	if n := p.node("trials"); n != nil && n.Kind == yaml.ScalarNode && n.Value == "auto" {
		p.TrialsAuto, autoLines[n.Line] = true, true
	}
	if n := p.node("load", "warmup"); n != nil && n.Kind == yaml.ScalarNode && n.Value == "auto" {
		p.Load.WarmupAuto, autoLines[n.Line] = true, true
	}
	var errs ErrorList
	// fail_if as a mapping ({slower_than: 5%, thresholds: [...]}) is read
	// after the decoder, which complains that it is not a list.
	failIf := p.node("fail_if")
	if failIf != nil && failIf.Kind == yaml.MappingNode {
		autoLines[failIf.Line] = true
	}
	// A list of sku_index values is the database dimension: read it here,
	// and drop the decoder's complaint that a list is not a bool.
	if n := p.node("database", "sku_index"); n != nil && n.Kind == yaml.SequenceNode {
		autoLines[n.Line] = true
		for i, item := range n.Content {
			v, err := strconv.ParseBool(item.Value)
			if err != nil || item.Kind != yaml.ScalarNode {
				errs = append(errs, &Error{File: file, Line: item.Line, Field: "database.sku_index." + strconv.Itoa(i), Msg: fmt.Sprintf("%q is not true or false", item.Value), Hint: "e.g. sku_index: [false, true]"})
				continue
			}
			if slices.Contains(p.Database.SKUIndexes, v) {
				errs = append(errs, &Error{File: file, Line: item.Line, Field: "database.sku_index." + strconv.Itoa(i), Msg: fmt.Sprintf("%v is listed twice", v), Hint: "each value once: sku_index: [false, true]"})
				continue
			}
			p.Database.SKUIndexes = append(p.Database.SKUIndexes, v)
			autoLines[item.Line] = true
		}
		if len(n.Content) == 0 {
			errs = append(errs, &Error{File: file, Line: n.Line, Field: "database.sku_index", Msg: "no values", Hint: "true, false, or both as a dimension: [false, true]"})
		}
	}
	if err := dec.Decode(p); err != nil && !errors.Is(err, io.EOF) {
		for _, e := range located.FromYAML(file, err) {
			if !autoLines[e.Line] {
				errs = append(errs, unknownField(e))
			}
		}
	}
	if failIf != nil && failIf.Kind == yaml.MappingNode {
		errs = append(errs, p.readFailIf(failIf)...)
	}
	p.expandAgainst(against)
	p.resolveFolders()
	p.applyDefaults()
	errs = append(errs, p.validate(catalog)...)
	errs.Sort()
	if len(errs) > 0 {
		return p, errs
	}
	return p, nil
}

// unknownField turns the decoder's "field x not found in type T" into a
// problem of field x with a hint.
func unknownField(e *Error) *Error {
	if strings.Contains(e.Msg, "not found in type") {
		e.Field = strings.Fields(e.Msg)[1]
		e.Msg = "unknown field"
		e.Hint = "see plans/README.md for the fields a plan may have"
	}
	return e
}

func (p *Plan) applyDefaults() {
	if p.TrialsAuto {
		p.Trials = 3 // at least three starts before an interval means anything
		if p.TrialsMax == 0 {
			p.TrialsMax = DefaultTrialsMax
		}
	}
	if p.ServiceRestart == "" {
		p.ServiceRestart = "trial"
	}
	if p.Verify == "" {
		p.Verify = VerifyFull
	}
	if p.Load.Model == "" {
		p.Load.Model = "closed"
	}
	if p.Load.Duration == 0 {
		p.Load.Duration = Duration(DefaultDuration)
		if p.Load.Iterations > 0 {
			p.Load.Duration = Duration(DefaultIterationsMax)
		}
	}
	if !p.has("load", "warmup") && p.Load.WarmupRequests == 0 {
		p.Load.WarmupAuto = true
	}
	if p.Load.WarmupRequests > 0 && p.Load.WarmupMax == 0 {
		p.Load.WarmupMax = Duration(DefaultWarmupMax)
	}
	if p.Load.WarmupAuto {
		p.Load.Warmup = 0
		if p.Load.WarmupMax == 0 {
			p.Load.WarmupMax = Duration(DefaultWarmupMax)
		}
	}
	for i := range p.Implementations {
		if w := p.Implementations[i].Warmup; w != nil && w.Max == 0 && (w.Auto || w.Requests > 0) {
			w.Max = p.Load.WarmupMax
			if w.Max == 0 {
				w.Max = Duration(DefaultWarmupMax)
			}
		}
	}
	if p.Load.Timeout == 0 {
		p.Load.Timeout = Duration(DefaultTimeout)
	}
	if p.Env == nil {
		p.Env = map[string]string{}
	}
	for k, v := range DefaultEnv() {
		if _, ok := p.Env[k]; !ok {
			p.Env[k] = v
		}
	}
	if f := p.Faults; f != nil {
		if len(f.Inject) == 0 {
			f.Inject = append([]Fault(nil), FaultNames...)
		}
		if f.PerFault == 0 {
			f.PerFault = Duration(DefaultFaultWindow)
		}
		if f.Workers == 0 {
			f.Workers = DefaultFaultWorkers
		}
		if f.Pause == 0 {
			f.Pause = Duration(DefaultFaultPause)
		}
	}
	d := &p.Database
	if d.MaxConnections == 0 {
		d.MaxConnections = DefaultMaxConnections
	}
	if d.Reset == "" {
		d.Reset = "level"
	}
	if d.Restart == "" {
		d.Restart = "trial"
	}
	if d.SKURows == 0 {
		d.SKURows = DefaultSKURows
	}
	if len(d.SKUIndexes) > 0 {
		first := d.SKUIndexes[0]
		d.SKUIndex = &first
	}
	if d.SKUIndex == nil {
		t := true
		d.SKUIndex = &t
	}
	if d.Seed == 0 {
		d.Seed = DefaultSeed
	}
	// On two or more CPUs the service gets CPU 0 to itself, like the
	// sources' one-vCPU boxes, and the generator and databases share the
	// rest: the generator's own CPU is measured, so a saturated
	// generator is reported rather than silently skewing the result.
	if len(p.Cores) > 0 {
		p.applyCores()
	} else if cpus := p.machine.CPUs; !p.has("placement") && len(cpus) >= 2 {
		rest := p.machine.span(1, len(cpus)-1)
		p.Placement = Placement{ServiceCPUs: p.machine.span(0, 0), GeneratorCPUs: rest, DatabaseCPUs: rest}
	}
	p.applyCapacityDefaults()
	// Last: whether the plan interleaves depends on the defaults above.
	p.applyCompareDefaults()
	p.applyRoundDefaults()
	if p.Trials == 0 {
		p.Trials = DefaultTrials
	} else {
		p.trialsSet = true
	}
	if p.TrialsMax == 0 && p.Rounds.Budget > 0 {
		// A budget, not a count, bounds the starts: more while a pair is
		// wide and another start fits, up to the default most.
		p.TrialsMax = DefaultTrialsMax
	}
	if p.TrialsMax < p.Trials {
		p.TrialsMax = p.Trials
	}
}

// has reports whether the plan file sets the field at path.
func (p *Plan) has(path ...string) bool { return p.node(path...) != nil }

// node finds the YAML node of a field path; list items are "0", "1", ...
func (p *Plan) node(path ...string) *yaml.Node {
	if p.root == nil || len(p.root.Content) == 0 {
		return nil
	}
	n := p.root.Content[0]
	for _, key := range path {
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					next = n.Content[i+1]
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(key)
			if err != nil || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
	}
	return n
}

// line returns the line of the deepest existing node along path.
func (p *Plan) line(path ...string) int {
	for k := len(path); k >= 0; k-- {
		if n := p.node(path[:k]...); n != nil {
			return n.Line
		}
	}
	return 0
}
