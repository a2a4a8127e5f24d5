package stack

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/workloads"
)

func TestEngines(t *testing.T) {
	tests := []struct {
		ws   []string
		want []workloads.Engine
	}{
		{nil, nil},                // nothing to start
		{[]string{"string"}, nil}, // no database
		{[]string{"sku", "bank"}, []workloads.Engine{workloads.Postgres, workloads.MySQL}}, // start order, not plan order
		{[]string{"bank", "users"}, []workloads.Engine{workloads.Postgres}},                // one server for both
	}
	for _, tt := range tests {
		if got := Engines(tt.ws); !slices.Equal(got, tt.want) {
			t.Errorf("Engines(%v) = %v, want %v", tt.ws, got, tt.want)
		}
	}
}

// TestDatabasesWithoutServers: a workload whose engine is not started is
// an error naming the engine, and nothing is reset, restarted or audited
// for a workload without a database.
func TestDatabasesWithoutServers(t *testing.T) {
	d := Use(db.Servers{}, DatabaseOptions{})
	if _, err := d.For("bank"); err == nil || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Errorf("For(bank) error %v, want one naming PostgreSQL", err)
	}
	if _, err := d.For("string"); err == nil {
		t.Error("For(string): no error for a workload without a database")
	}
	if env := d.Env(); len(env) != 0 {
		t.Errorf("Env() = %v, want empty", env)
	}
	ctx := context.Background()
	if err := d.Reset(ctx, "string"); err != nil {
		t.Errorf("Reset(string) = %v", err)
	}
	if err := d.Restart(ctx, "string"); err != nil {
		t.Errorf("Restart(string) = %v", err)
	}
	if vs, err := d.Audit(ctx, "string", -1, -1); vs != nil || err != nil {
		t.Errorf("Audit(string) = %v, %v", vs, err)
	}
	d.Stop() // servers it does not own: nothing to do, no panic
}
