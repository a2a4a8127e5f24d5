// Package workloads embeds the contract's data files: schemas, SQL,
// audits and default scenarios, so the showdown binary carries them
// wherever it runs.
package workloads

import (
	"embed"
	"fmt"
	"strings"
)

// FS holds every workload folder: <name>/schema.sql, queries.sql, ... .
//
//go:embed */*.sql */*.md */*.yaml
var FS embed.FS

// Defaults of the contract and its data, shared by the databases, the
// plans and verify.
const (
	// DefaultMaxConnections is the databases' connection limit: PostgreSQL's
	// own default, which the sources ran with.
	DefaultMaxConnections = 100
	// DefaultPoolSize is DB_POOL_SIZE unless a plan says otherwise: the
	// contract's default, under DefaultMaxConnections.
	DefaultPoolSize = 20
	// DefaultSKURows is the sku table's size: the source's 2,000,000.
	DefaultSKURows = 2_000_000
	// DefaultSeed is the seed generated data comes from.
	DefaultSeed = 1
)

// Names lists the workloads in the order reports show them.
var Names = []string{"string", "bank", "users", "sku"}

// Engine is a database engine a workload needs.
type Engine string

// The engines workloads use; NoDatabase is a workload without one.
const (
	NoDatabase Engine = ""
	Postgres   Engine = "postgres"
	MySQL      Engine = "mysql" // served by MariaDB
)

// Name is the server that serves the engine, as a report names it:
// "PostgreSQL", "MariaDB"; "" for NoDatabase.
func (e Engine) Name() string {
	switch e {
	case Postgres:
		return "PostgreSQL"
	case MySQL:
		return "MariaDB"
	}
	return string(e)
}

// Engines lists every engine a workload may need, in start order.
var Engines = []Engine{Postgres, MySQL}

// Database is the engine a workload needs, NoDatabase for none: the one
// place that says which workload uses which database.
func Database(workload string) Engine {
	switch workload {
	case "bank", "users":
		return Postgres
	case "sku":
		return MySQL
	}
	return NoDatabase
}

// Queries reads the named statements of a workload's SQL file (for example
// Queries("bank", "audit.sql")): each block starts with a `-- name: X` line
// and holds the SQL up to the next one; other `--` lines are comments, and
// a trailing semicolon is dropped.
func Queries(workload, file string) (map[string]string, error) {
	path := workload + "/" + file
	src, err := FS.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseQueries(path, string(src))
}

// ParseQueries parses `-- name: X` blocks from src as Queries does; path
// names the source in errors.
func ParseQueries(path, src string) (map[string]string, error) {
	out := map[string]string{}
	name, body, start := "", "", 0
	flush := func() error {
		if name == "" {
			return nil
		}
		body = trimSQL(body)
		if body == "" {
			return fmt.Errorf("%s:%d: query %s has no SQL", path, start, name)
		}
		out[name] = body
		return nil
	}
	for i, l := range strings.Split(src, "\n") {
		line := i + 1
		t := trimSQL(l)
		if c, ok := strings.CutPrefix(t, "--"); ok {
			if n, ok := strings.CutPrefix(trimSQL(c), "name:"); ok {
				if err := flush(); err != nil {
					return nil, err
				}
				name, body, start = trimSQL(n), "", line
				if name == "" {
					return nil, fmt.Errorf("%s:%d: empty query name", path, line)
				}
				if _, dup := out[name]; dup {
					return nil, fmt.Errorf("%s:%d: duplicate query name %s", path, line, name)
				}
			}
			continue
		}
		if name != "" && t != "" {
			if body != "" {
				body += "\n"
			}
			body += l
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no `-- name:` blocks", path)
	}
	return out, nil
}

// trimSQL drops surrounding white space and trailing semicolons.
func trimSQL(s string) string {
	return strings.TrimRight(strings.TrimSpace(s), "; \t\r\n")
}
