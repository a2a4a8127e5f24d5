package service

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// CoresPlaceholder is what a manifest's cores value is replaced with: the
// service's CPU count.
const CoresPlaceholder = "{cores}"

// Cores is how a stack uses the CPUs it is given, from the manifest's
// cores: {env: KNOB, value: "{cores}"}: the knob the harness sets at
// each core count of a plan, its value with CoresPlaceholder replaced by
// the count. A manifest without it is automatic: the stack sizes itself
// from the CPUs it may run on (its affinity), as Go's GOMAXPROCS,
// tokio's worker threads and the JVM's processor count do.
type Cores struct {
	// Env is the knob; empty for an automatic stack.
	Env string
	// Value is its value, CoresPlaceholder standing for the count.
	Value string
}

// Automatic reports a stack that follows its CPUs by itself.
func (c Cores) Automatic() bool { return c.Env == "" }

// EnvAt is the environment that gives the stack n cores: the knob set to
// its value at n, or nothing for an automatic stack.
func (c Cores) EnvAt(n int) map[string]string {
	if c.Automatic() || n < 1 {
		return nil
	}
	return map[string]string{c.Env: strings.ReplaceAll(c.Value, CoresPlaceholder, strconv.Itoa(n))}
}

// parseCores reads the cores field; add reports a problem.
func parseCores(v *yaml.Node, knobs map[string]Knob, add func(n *yaml.Node, field, format string, args ...any)) Cores {
	var c Cores
	if v.Kind != yaml.MappingNode {
		add(v, "cores", `must be a mapping {env: KNOB, value: "{cores}"}`)
		return c
	}
	var envNode *yaml.Node
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		field := "cores." + k.Value
		if val.Kind != yaml.ScalarNode || val.Tag == "!!null" {
			add(val, field, "must be a string")
			continue
		}
		switch k.Value {
		case "env":
			c.Env, envNode = val.Value, val
		case "value":
			c.Value = val.Value
		default:
			add(k, field, "unknown field%s", suggest(k.Value, []string{"env", "value"}))
		}
	}
	switch {
	case envNode == nil:
		add(v, "cores.env", "missing: the knob that sets the stack's concurrency, e.g. env: WORKERS")
	case !envRE.MatchString(c.Env):
		add(envNode, "cores.env", "%q is not a valid environment variable name", c.Env)
	default:
		if _, ok := knobs[c.Env]; !ok {
			add(envNode, "cores.env", "%q is not one of the manifest's knobs (declare it under knobs: with its default and help)", c.Env)
		}
	}
	if strings.TrimSpace(c.Value) == "" {
		add(v, "cores.value", `missing: the knob's value at n cores, %s standing for n, e.g. value: "%s"`, CoresPlaceholder, CoresPlaceholder)
	}
	return c
}
