package db

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/showdownlab/showdown/workloads"
)

// AuditURL is AuditWithin against a database the harness did not start,
// named by the URL its services use: postgres://user:pw@host:5432/db or
// mysql://user:pw@host:3306/db (a Kubernetes run's in-cluster database,
// or a managed one). The login needs only to read the workload's tables.
func AuditURL(ctx context.Context, workload, rawURL string, atLeast, atMost int64) ([]Violation, error) {
	if !slices.Contains(workloads.Names, workload) {
		return nil, fmt.Errorf("unknown workload %q (known: %s)", workload, strings.Join(workloads.Names, ", "))
	}
	if _, err := workloads.FS.ReadFile(workload + "/audit.sql"); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	var c conn
	switch u.Scheme {
	case "postgres", "postgresql":
		pc, err := pgx.Connect(ctx, rawURL)
		if err != nil {
			return nil, fmt.Errorf("workload %s: connect to PostgreSQL at %s: %w", workload, u.Host, err)
		}
		c = pgConn{pc}
	case "mysql", "mariadb":
		mc := mysql.NewConfig()
		mc.User = u.User.Username()
		mc.Passwd, _ = u.User.Password()
		mc.Net, mc.Addr = "tcp", u.Host
		mc.DBName = strings.TrimPrefix(u.Path, "/")
		mc.AllowNativePasswords = true
		db, err := openMySQL(mc)
		if err != nil {
			return nil, err
		}
		sc, err := db.Conn(ctx)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("workload %s: connect to MariaDB at %s: %w", workload, u.Host, err)
		}
		c = myConn{db, sc}
	default:
		return nil, fmt.Errorf("database URL scheme %q: want postgres:// or mysql://", u.Scheme)
	}
	defer c.close()
	return auditConn(ctx, c, workload, atLeast, atMost)
}
