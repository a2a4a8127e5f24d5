package lab

import (
	"reflect"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

// coresPlan parses a plan with cores: [1] (what a 2-CPU machine fits),
// then gives it the counts of a larger machine: Arms and the pools read
// them, the placement is not used here.
func coresPlan(t *testing.T, ms []*service.Manifest, text string, cores ...int) *plan.Plan {
	t.Helper()
	catalog := plan.Catalog{}
	for _, m := range ms {
		catalog[m.Name] = m.Workloads
	}
	p, err := plan.ParsePlan("cores.yaml", []byte(text+"cores: [1]\n"), catalog, thisMachine())
	if err != nil {
		t.Skipf("cores: [1] does not fit here: %v", err)
	}
	p.Cores = cores
	return p
}

// TestArmEnv: each arm gets its manifest's cores knob at its count, after
// the plan's env and before the implementation's own.
func TestArmEnv(t *testing.T) {
	ms, err := service.Discover("../..")
	if err != nil {
		t.Fatal(err)
	}
	p := coresPlan(t, ms, "name: env\nimplementations:\n  - node-http\n  - {service: node-http, variant: one, env: {WORKERS: \"1\"}}\n  - go-stdlib\n  - python-fastapi\nworkloads: [string]\nload: {levels: [10]}\nenv: {WORKERS: \"3\"}\n", 1, 4)
	got := map[string]string{}
	for _, im := range p.Arms() {
		m, err := service.Lookup(ms, im.Service)
		if err != nil {
			t.Fatal(err)
		}
		env := ArmEnv(p, im, m)
		got[im.ID()] = env["WORKERS"]
	}
	want := map[string]string{
		// node-http: one worker per core, over the plan's WORKERS.
		"node-http@1": "1", "node-http@4": "4",
		// A variant that pins WORKERS keeps it at every count.
		"node-http+one@1": "1", "node-http+one@4": "1",
		// go-stdlib follows its affinity: no knob; the plan's env stays.
		"go-stdlib@1": "3", "go-stdlib@4": "3",
		// python-fastapi: one worker process per core.
		"python-fastapi@1": "1", "python-fastapi@4": "4",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("WORKERS by arm:\ngot  %v\nwant %v", got, want)
	}
}

// TestConnectionsAliveCores: the connection budget counts the workers a
// core count implies: node-http at 1 and 4 cores opens 1 + 4 pools,
// python-fastapi's workers share one pool at any count.
func TestConnectionsAliveCores(t *testing.T) {
	ms, err := service.Discover("../..")
	if err != nil {
		t.Fatal(err)
	}
	p := coresPlan(t, ms, "name: pools\nimplementations: [node-http, python-fastapi]\nworkloads: [bank]\nload: {levels: [10]}\nenv: {DB_POOL_SIZE: \"10\"}\n", 1, 4)
	got, err := ConnectionsAlive(p, ms)
	if err != nil {
		t.Fatal(err)
	}
	// node 1×10 + 4×10, python 10 + 10, the harness's own.
	if want := 50 + 20 + stack.HarnessConnections; got != want {
		t.Errorf("ConnectionsAlive = %d, want %d", got, want)
	}
}
