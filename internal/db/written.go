package db

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/showdownlab/showdown/workloads"
)

// WrittenFile names the queries that count the rows a workload's requests
// write (workloads/<w>/written.sql): each `-- name: METHOD /path STATUS`
// block counts the rows a request answered with STATUS must have written.
const WrittenFile = "written.sql"

// Written counts the rows of each kind workload's requests write, by
// query name ("POST /transaction 200"); nil for a workload without a
// WrittenFile (one that writes nothing).
func Written(ctx context.Context, workload string, s Servers) (map[string]int64, error) {
	if _, err := workloads.FS.ReadFile(workload + "/" + WrittenFile); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	queries, err := workloads.Queries(workload, WrittenFile)
	if err != nil {
		return nil, err
	}
	c, ok, err := connect(ctx, workload, s)
	if err != nil || !ok {
		return nil, err
	}
	defer c.close()
	out := map[string]int64{}
	for name, q := range queries {
		_, vals, err := c.row(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("workloads/%s/%s: query %s: %w", workload, WrittenFile, name, err)
		}
		if len(vals) != 1 {
			return nil, fmt.Errorf("workloads/%s/%s: query %s returns %d columns, want one count", workload, WrittenFile, name, len(vals))
		}
		n, err := strconv.ParseInt(strings.TrimSpace(vals[0]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("workloads/%s/%s: query %s: %q is not a count", workload, WrittenFile, name, vals[0])
		}
		out[name] = n
	}
	return out, nil
}

// ParseWrittenName splits a WrittenFile query name into the request's
// method, its path pattern and the status of a committed answer.
func ParseWrittenName(name string) (method, path string, status int, err error) {
	f := strings.Fields(name)
	if len(f) == 3 {
		status, err = strconv.Atoi(f[2])
	}
	if len(f) != 3 || err != nil || !strings.HasPrefix(f[1], "/") || status < 100 || status > 599 {
		return "", "", 0, fmt.Errorf("query name %q is not METHOD /path STATUS (e.g. POST /user 201)", name)
	}
	return f[0], f[1], status, nil
}
