// Package workloads embeds the contract's data files (schemas, SQL, audits,
// default scenarios) so the showdown binary carries them wherever it runs.
package workloads

import "embed"

// FS holds every workload folder: <name>/schema.sql, queries.sql, ... .
//
//go:embed */*.sql */*.md
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
