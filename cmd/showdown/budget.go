package main

import (
	"errors"
	"runtime"

	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/workloads"
)

// connectionBudget turns a failed connection budget check into a usage
// error (exit 2): the plan or the flags ask the databases for more
// connections than they accept, and nothing was started.
func connectionBudget(err error) error {
	if err == nil {
		return nil
	}
	hint := "lower DB_POOL_SIZE or raise the databases' max_connections"
	var be *stack.BudgetError
	if errors.As(err, &be) {
		hint = be.Hint()
	}
	return usageError{err: err, hint: hint}
}

// upConnections checks that the targets `showdown up` keeps alive at once
// (all of them, unpinned) and the harness fit maxConns (0: PostgreSQL's
// default), when a workload needs a database.
func upConnections(targets []upTarget, ws []string, maxConns int) error {
	if len(stack.Engines(ws)) == 0 {
		return nil
	}
	if maxConns == 0 {
		maxConns = workloads.DefaultMaxConnections
	}
	var alive []stack.Pool
	for _, t := range targets {
		pool, err := stack.PoolOf(t.id, t.m, t.env, runtime.NumCPU())
		if err != nil {
			return connectionBudget(err)
		}
		alive = append(alive, pool)
	}
	return connectionBudget(stack.CheckConnections(alive, maxConns))
}
