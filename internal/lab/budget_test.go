package lab

import (
	"errors"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

// TestCheckConnections checks plans against the shipped manifests: a
// sequential plan keeps one implementation alive at a time, so each must
// fit alone; an interleaved one is sized for all (TestConnectionsAlive).
func TestCheckConnections(t *testing.T) {
	ms, err := service.Discover("../..")
	if err != nil {
		t.Fatal(err)
	}
	catalog := plan.Catalog{}
	for _, m := range ms {
		catalog[m.Name] = m.Workloads
	}
	for _, tt := range []struct {
		name, yaml string
		want       string // in the error; "" for none
	}{
		// Six implementations at 20 each: one alive at a time fits 100.
		{"stacks", "implementations: [go-stdlib, rust-axum, java-spring, java-helidon, node-http, python-fastapi]\nworkloads: [bank]\ninterleave: false\n", ""},
		// Four node workers with pools of 30 each: 120 + 4.
		{"node workers", "implementations:\n  - go-stdlib\n  - {service: node-http, env: {WORKERS: \"4\"}}\nworkloads: [bank]\nenv: {DB_POOL_SIZE: \"30\"}\ninterleave: false\n",
			"node-http 4 processes × 30 + 4 harness = 124 > max_connections 100"},
		// python's workers share the pool: 96 + 4 fits.
		{"python workers", "implementations:\n  - {service: python-fastapi, env: {WORKERS: \"4\"}}\nworkloads: [sku]\nenv: {DB_POOL_SIZE: \"96\"}\n", ""},
		// A pool larger than the limit allows alone.
		{"pool", "implementations: [go-stdlib]\nworkloads: [users]\nenv: {DB_POOL_SIZE: \"50\"}\ndatabase: {max_connections: 50}\n",
			"go-stdlib 50 + 4 harness = 54 > max_connections 50"},
		// No database: nothing to check.
		{"string", "implementations: [go-stdlib]\nworkloads: [string]\nenv: {DB_POOL_SIZE: \"500\"}\n", ""},
	} {
		p, err := plan.ParsePlan(tt.name+".yaml", []byte("name: "+tt.name+"\nload: {levels: [10]}\n"+tt.yaml), catalog, thisMachine())
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		err = CheckConnections(p, ms)
		var be *stack.BudgetError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want none", tt.name, err)
		case tt.want != "" && (!errors.As(err, &be) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestConnectionsAlive sums what every arm of an interleaved plan may
// open at once: node's workers multiply their pools, python's share one,
// an A/A arm counts twice.
func TestConnectionsAlive(t *testing.T) {
	ms, err := service.Discover("../..")
	if err != nil {
		t.Fatal(err)
	}
	catalog := plan.Catalog{}
	for _, m := range ms {
		catalog[m.Name] = m.Workloads
	}
	for _, tt := range []struct {
		name, yaml string
		want       int
	}{
		{"six stacks", "implementations: [go-stdlib, rust-axum, java-spring, java-helidon, node-http, python-fastapi]\n", 6*20 + stack.HarnessConnections},
		{"node workers", "implementations:\n  - go-stdlib\n  - {service: node-http, env: {WORKERS: \"4\"}}\n  - {service: python-fastapi, env: {WORKERS: \"4\"}}\n", 20 + 4*20 + 20 + stack.HarnessConnections},
		{"a/a", "implementations: [go-stdlib]\naa: true\n", 2*20 + stack.HarnessConnections},
	} {
		p, err := plan.ParsePlan(tt.name+".yaml", []byte("name: n\nworkloads: [bank]\nload: {levels: [10]}\n"+tt.yaml), catalog, thisMachine())
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, err := ConnectionsAlive(p, ms)
		if err != nil || got != tt.want {
			t.Errorf("%s: %d (%v), want %d", tt.name, got, err, tt.want)
		}
		if err := CheckConnections(p, ms); err != nil {
			t.Errorf("%s: interleaved plan refused: %v", tt.name, err)
		}
	}
}
