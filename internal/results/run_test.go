package results

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
)

// TestReadOldRun reads a run.json written by an earlier version (the
// report's fixture): the records results now owns (limits, placement,
// the plan) come back.
func TestReadOldRun(t *testing.T) {
	r, err := ReadRun("../report/testdata/run")
	if err != nil {
		t.Fatal(err)
	}
	if r.Plan == nil || r.Plan.Name != "tiny" {
		t.Errorf("plan %+v, want the plan named tiny", r.Plan)
	}
	if r.Limits.Mechanism != "taskset" || r.Limits.CPUs != "0" {
		t.Errorf("limits %+v, want taskset on CPU 0", r.Limits)
	}
	if r.Placement.ServiceCPUs != "0" || r.Placement.GeneratorCPUs != "1" {
		t.Errorf("placement %+v, want service on 0, generator on 1", r.Placement)
	}
	if r.Machine.Hostname != "vm" || len(r.Services) == 0 {
		t.Errorf("machine %q and %d service runs, want vm and some", r.Machine.Hostname, len(r.Services))
	}
}

// TestRunFieldNames decodes the noise floor and the limits as run.json
// has held them since they were recorded, and encodes them back under the
// same names.
func TestRunFieldNames(t *testing.T) {
	const old = `{"machine":{"hostname":"h","noise":{"seconds":11,"cpus":[0,1],"rates":[[10,11],[12,13]],"cv":[0.07,0.18],"max_cv":0.18}},` +
		`"limits":{"mechanism":"taskset + cgroup v1","cpus":"0","cpu_quota":1.5,"memory_bytes":1048576,"notes":["no memory.swap"]}}`
	var r Run
	if err := json.Unmarshal([]byte(old), &r); err != nil {
		t.Fatal(err)
	}
	if n := r.Machine.Noise; n == nil || n.Seconds != 11 || n.Max != 0.18 || len(n.Rates) != 2 || n.CV[1] != 0.18 {
		t.Errorf("noise %+v", n)
	}
	if l := r.Limits; l.Mechanism != "taskset + cgroup v1" || l.CPUQuota != 1.5 || l.MemoryBytes != 1<<20 || len(l.Notes) != 1 {
		t.Errorf("limits %+v", l)
	}
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	json.Unmarshal([]byte(old), &want)
	json.Unmarshal(b, &got)
	if w, g := want["limits"], got["limits"]; !reflect.DeepEqual(w, g) {
		t.Errorf("limits encode as %v, want %v", g, w)
	}
	wn := want["machine"].(map[string]any)["noise"]
	gn := got["machine"].(map[string]any)["noise"]
	if !reflect.DeepEqual(wn, gn) {
		t.Errorf("noise encodes as %v, want %v", gn, wn)
	}
}

// TestCellsReplicas: a Kubernetes run at several replica counts records
// go-stdlib@x1 and go-stdlib@x2; each is a cell of its own with its
// level, and no cell is left for the bare name.
func TestCellsReplicas(t *testing.T) {
	p := &plan.Plan{Implementations: []plan.Implementation{{Service: "go-stdlib"}}, Workloads: []plan.Workload{{Name: "string"}},
		Replicas: []int{1, 2}}
	p.Load.Levels = []int{100}
	r := &Run{Plan: p, Kubernetes: json.RawMessage(`{"namespace":"n"}`)}
	for _, id := range []string{"go-stdlib@x1", "go-stdlib@x2"} {
		r.Services = append(r.Services, &ServiceRun{Implementation: id, Service: "go-stdlib", Workload: "string",
			Levels: []*LevelRun{{Level: 100, Status: OK}}})
	}
	var got []string
	for _, c := range Cells(r) {
		got = append(got, fmt.Sprintf("%s:%d", c.Implementation, len(c.Levels)))
	}
	if strings.Join(got, " ") != "go-stdlib@x1:1 go-stdlib@x2:1" {
		t.Errorf("cells %v, want one measured cell for each replica count", got)
	}
	// A local run of the same plan ignores replicas: one cell, its own.
	local := &Run{Plan: p, Services: []*ServiceRun{{Implementation: "go-stdlib", Service: "go-stdlib", Workload: "string",
		Levels: []*LevelRun{{Level: 100, Status: OK}}}}}
	if cs := Cells(local); len(cs) != 1 || cs[0].Implementation != "go-stdlib" || len(cs[0].Levels) != 1 {
		t.Errorf("local run's cells %+v, want go-stdlib measured", cs)
	}
}
