package service

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Pool sharing modes of a manifest's pools.per.
const (
	// PoolPerService: the service's processes together open at most
	// DB_POOL_SIZE connections to each database (one process, or workers
	// that split the pool between them). The default.
	PoolPerService = "service"
	// PoolPerProcess: each process opens its own pools of DB_POOL_SIZE
	// (node:cluster workers), so the service opens processes x DB_POOL_SIZE.
	PoolPerProcess = "process"
)

// Pools is how a service's processes share its database pools, from the
// manifest's pools: {per: service|process, processes: KNOB}.
type Pools struct {
	// Per is PoolPerService or PoolPerProcess.
	Per string
	// Processes names the knob that counts the processes ("" for one);
	// its value "auto" or "0" means one per CPU the service may use.
	Processes string
}

// parsePools reads the pools field; add reports a problem.
func parsePools(v *yaml.Node, knobs map[string]Knob, add func(n *yaml.Node, field, format string, args ...any)) Pools {
	ps := Pools{Per: PoolPerService}
	if v.Kind != yaml.MappingNode {
		add(v, "pools", "must be a mapping {per: service|process, processes: KNOB}")
		return ps
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		field := "pools." + k.Value
		if val.Kind != yaml.ScalarNode {
			add(val, field, "must be a string")
			continue
		}
		switch k.Value {
		case "per":
			if val.Value != PoolPerService && val.Value != PoolPerProcess {
				add(val, field, "%q: want %s (the processes share DB_POOL_SIZE) or %s (each opens its own)", val.Value, PoolPerService, PoolPerProcess)
				continue
			}
			ps.Per = val.Value
		case "processes":
			if _, ok := knobs[val.Value]; !ok {
				add(val, field, "%q is not one of the manifest's knobs", val.Value)
				continue
			}
			ps.Processes = val.Value
		default:
			add(k, field, "unknown field%s", suggest(k.Value, []string{"per", "processes"}))
		}
	}
	if ps.Per == PoolPerProcess && ps.Processes == "" {
		add(v, "pools.processes", "missing: per: process needs the knob that counts the processes")
	}
	return ps
}

// PoolProcesses returns how many times DB_POOL_SIZE the service started
// with env may open to one database server: its process count when each
// process has its own pools, else 1. cpus is how many CPUs it may use
// (for a process count of auto).
func (m *Manifest) PoolProcesses(env map[string]string, cpus int) (int, error) {
	if m.Pools.Per != PoolPerProcess {
		return 1, nil
	}
	raw, ok := env[m.Pools.Processes]
	if !ok {
		raw = m.Knobs[m.Pools.Processes].Default
	}
	switch v := strings.ToLower(strings.TrimSpace(raw)); v {
	case "", "auto", "0":
		return max(cpus, 1), nil
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%s: %s=%q is not a number of processes", m.Name, m.Pools.Processes, raw)
		}
		return n, nil
	}
}
