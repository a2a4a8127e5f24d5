// Package workloads embeds the contract's data files (schemas, SQL, audits,
// default scenarios) so the showdown binary carries them wherever it runs.
package workloads

import "embed"

// FS holds every workload folder: <name>/schema.sql, queries.sql, ... .
//
//go:embed */*.sql */*.md */*.yaml
var FS embed.FS

// Names lists the workloads in the order reports show them.
var Names = []string{"string", "bank", "users", "sku"}

// Database names the database engine a workload needs: "postgres",
// "mysql", or "" for none.
func Database(workload string) string {
	switch workload {
	case "bank", "users":
		return "postgres"
	case "sku":
		return "mysql"
	}
	return ""
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
			return queryError(path + ":" + itoa(start) + ": query " + name + " has no SQL")
		}
		out[name] = body
		return nil
	}
	line := 0
	for len(src) > 0 {
		var l string
		if i := indexByte(src, '\n'); i >= 0 {
			l, src = src[:i], src[i+1:]
		} else {
			l, src = src, ""
		}
		line++
		t := trimSQL(l)
		if hasPrefix(t, "--") {
			c := trimSQL(t[2:])
			if hasPrefix(c, "name:") {
				if err := flush(); err != nil {
					return nil, err
				}
				name, body, start = trimSQL(c[len("name:"):]), "", line
				if name == "" {
					return nil, queryError(path + ":" + itoa(line) + ": empty query name")
				}
				if _, dup := out[name]; dup {
					return nil, queryError(path + ":" + itoa(line) + ": duplicate query name " + name)
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
		return nil, queryError(path + ": no `-- name:` blocks")
	}
	return out, nil
}

// queryError is an error in a SQL file's `-- name:` blocks.
type queryError string

func (e queryError) Error() string { return string(e) }

func trimSQL(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r' || s[0] == '\n') {
		s = s[1:]
	}
	for len(s) > 0 {
		c := s[len(s)-1]
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ';' {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}
