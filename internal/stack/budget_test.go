package stack

import (
	"errors"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/service"
)

func TestCheckConnections(t *testing.T) {
	six := []Pool{{"go-stdlib", 20, 1}, {"rust-axum", 20, 1}, {"java-spring", 20, 1}, {"java-helidon", 20, 1}, {"node-http", 20, 1}, {"python-fastapi", 20, 1}}
	for _, tt := range []struct {
		name  string
		alive []Pool
		max   int
		want  string // the error, "" for none
		hint  string
	}{
		// One service at a time (today's lab): 20 + 4 fit 100.
		{"one alive", six[:1], 100, "", ""},
		// The largest pool that fits alone: 96 + 4 = 100.
		{"one at the limit", []Pool{{"go-stdlib", 96, 1}}, 100, "", ""},
		{"one over", []Pool{{"go-stdlib", 97, 1}}, 100,
			"go-stdlib 97 + 4 harness = 101 > max_connections 100", "DB_POOL_SIZE to 96 or less"},
		// Every implementation of a plan alive at once.
		{"all alive", six, 100,
			"6 services × 20 + 4 harness = 124 > max_connections 100", "DB_POOL_SIZE to 16 or less (a plan's env:, or --env), or raise max_connections to 124"},
		{"all alive, room", six, 124, "", ""},
		// node's cluster workers multiply its pools.
		{"node workers", []Pool{{"go-stdlib", 20, 1}, {"node-http", 20, 4}}, 100,
			"go-stdlib 20 + node-http 4 processes × 20 + 4 harness = 104 > max_connections 100", "DB_POOL_SIZE to 19 or less"},
		// No pool size fits: only a larger limit helps.
		{"no room", six, 9, "124 > max_connections 9", "raise max_connections to 124"},
	} {
		err := CheckConnections(tt.alive, tt.max)
		var be *BudgetError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want none", tt.name, err)
		case tt.want != "" && !errors.As(err, &be):
			t.Errorf("%s: got %v, want a BudgetError", tt.name, err)
		case tt.want != "" && (!strings.Contains(err.Error(), tt.want) || !strings.Contains(be.Hint(), tt.hint)):
			t.Errorf("%s: got %q, hint %q; want %q, %q", tt.name, err, be.Hint(), tt.want, tt.hint)
		}
	}
}

// TestPoolOf reads the shipped manifests: node-http's workers each open
// DB_POOL_SIZE, python-fastapi's split it, the others have one process.
func TestPoolOf(t *testing.T) {
	ms, err := service.Discover("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		service string
		env     map[string]string
		want    int
	}{
		{"go-stdlib", map[string]string{"DB_POOL_SIZE": "20"}, 20},
		{"node-http", map[string]string{"DB_POOL_SIZE": "20"}, 20},
		{"node-http", map[string]string{"DB_POOL_SIZE": "20", "WORKERS": "4"}, 80},
		{"node-http", map[string]string{"DB_POOL_SIZE": "10", "WORKERS": "auto"}, 30}, // 3 CPUs
		{"python-fastapi", map[string]string{"DB_POOL_SIZE": "20", "WORKERS": "8"}, 20},
		{"rust-axum", nil, 20}, // the contract's default
	} {
		m, err := service.Lookup(ms, tt.service)
		if err != nil {
			t.Fatal(err)
		}
		p, err := PoolOf(tt.service, m, tt.env, 3)
		if err != nil || p.Connections() != tt.want {
			t.Errorf("%s %v: %d connections (%v), want %d", tt.service, tt.env, p.Connections(), err, tt.want)
		}
	}
}
