package stack

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/workloads"
)

// HarnessConnections is the most connections the harness itself holds on
// one database server while services run: the fault test's two readers
// (faults.DefaultReaders) and its row-lock holder, and one for statement
// counts, audits and open-transaction checks, which take one at a time.
// They connect as the superuser, so they may also use PostgreSQL's
// superuser_reserved_connections (3), which the services may not.
const HarnessConnections = 4

// Pool is what one service alive at once may open on each database
// server: Processes x Size connections.
type Pool struct {
	// ID names the implementation in messages.
	ID string
	// Size is its DB_POOL_SIZE.
	Size int
	// Processes is how many processes open Size each (1 when its
	// processes share one pool).
	Processes int
}

// Connections is the most the pool opens on one server.
func (p Pool) Connections() int { return p.Processes * p.Size }

// PoolOf returns the pool of manifest m started as id with env (its whole
// environment, DB_POOL_SIZE included; unset, the contract's default)
// on cpus CPUs.
func PoolOf(id string, m *service.Manifest, env map[string]string, cpus int) (Pool, error) {
	size := workloads.DefaultPoolSize
	if raw, ok := env["DB_POOL_SIZE"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || n < 1 {
			return Pool{}, fmt.Errorf("%s: DB_POOL_SIZE=%q is not a number of connections", id, raw)
		}
		size = n
	}
	procs, err := m.PoolProcesses(env, cpus)
	if err != nil {
		return Pool{}, err
	}
	return Pool{ID: id, Size: size, Processes: procs}, nil
}

// BudgetError says that the services alive at once and the harness may
// open more connections than a database server accepts.
type BudgetError struct {
	// Alive are the pools of the services alive at once.
	Alive []Pool
	// MaxConnections is the servers' limit.
	MaxConnections int
}

// total is what the services and the harness may open together.
func (e *BudgetError) total() int {
	n := HarnessConnections
	for _, p := range e.Alive {
		n += p.Connections()
	}
	return n
}

func (e *BudgetError) Error() string {
	var terms []string
	same := len(e.Alive) > 1
	for _, p := range e.Alive {
		same = same && p.Processes == 1 && p.Size == e.Alive[0].Size
	}
	switch {
	case same:
		terms = append(terms, fmt.Sprintf("%d services × %d", len(e.Alive), e.Alive[0].Size))
	default:
		for _, p := range e.Alive {
			if p.Processes == 1 {
				terms = append(terms, fmt.Sprintf("%s %d", p.ID, p.Size))
			} else {
				terms = append(terms, fmt.Sprintf("%s %d processes × %d", p.ID, p.Processes, p.Size))
			}
		}
	}
	return fmt.Sprintf("database connections: %s + %d harness = %d > max_connections %d (each database server; nothing was started)",
		strings.Join(terms, " + "), HarnessConnections, e.total(), e.MaxConnections)
}

// Hint says which DB_POOL_SIZE would fit, and which max_connections.
func (e *BudgetError) Hint() string {
	procs := 0
	for _, p := range e.Alive {
		procs += p.Processes
	}
	raise := fmt.Sprintf("raise max_connections to %d (a plan's database.max_connections)", e.total())
	if fit := (e.MaxConnections - HarnessConnections) / max(procs, 1); fit >= 1 {
		return fmt.Sprintf("set DB_POOL_SIZE to %d or less (a plan's env:, or --env), or %s", fit, raise)
	}
	return raise
}

// CheckConnections returns a *BudgetError when the pools of the services
// alive at once, plus HarnessConnections, exceed maxConnections on a
// database server. Every service reaches every server the harness
// started, so one sum holds for each.
func CheckConnections(alive []Pool, maxConnections int) error {
	e := &BudgetError{Alive: alive, MaxConnections: maxConnections}
	if e.total() > maxConnections {
		return e
	}
	return nil
}
