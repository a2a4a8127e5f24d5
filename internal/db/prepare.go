package db

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/showdownlab/showdown/workloads"
)

// PrepareOptions tunes Prepare; the zero value is the source's setup.
type PrepareOptions struct {
	SKURows    int   // rows in purch_sku_master, default DefaultSKURows
	Seed       int64 // default DefaultSeed; same seed, same rows
	NoSKUIndex bool  // leave out index.sql: reproduce the source's full table scans
	KnownSKUs  int   // how many known sku_ids to return, default DefaultKnownSKUs
}

// Prepared is what Prepare set up.
type Prepared struct {
	KnownSKUs []int64 // sku_ids known to exist (sku only)
}

// Violation is one broken invariant found by Audit.
type Violation struct {
	Check  string // the audit query's name, e.g. "money"
	Detail string // what was found, e.g. "balances 100 != deposits 90"
}

// conn is one connection to a workload's database, whatever the engine.
type conn interface {
	exec(ctx context.Context, stmt string) error
	// row runs a query returning one row and gives its columns as text.
	row(ctx context.Context, query string) (cols, vals []string, err error)
	close()
}

// connect opens a connection to the database workload w needs, as the
// server's administrator; ok is false for a workload without a database.
func connect(ctx context.Context, w string, s Servers) (c conn, ok bool, err error) {
	if !slices.Contains(workloads.Names, w) {
		return nil, false, fmt.Errorf("unknown workload %q (known: %s)", w, strings.Join(workloads.Names, ", "))
	}
	switch workloads.Database(w) {
	case "postgres":
		if s.Postgres == nil {
			return nil, false, fmt.Errorf("workload %s needs PostgreSQL, which is not started", w)
		}
		pc, err := pgx.Connect(ctx, s.Postgres.adminURL(s.Postgres.Port(), dbName))
		if err != nil {
			return nil, false, fmt.Errorf("workload %s: connect to PostgreSQL: %w", w, err)
		}
		return pgConn{pc}, true, nil
	case "mysql":
		if s.MariaDB == nil {
			return nil, false, fmt.Errorf("workload %s needs MariaDB, which is not started", w)
		}
		db, err := s.MariaDB.openAdmin(s.MariaDB.Port())
		if err != nil {
			return nil, false, err
		}
		mc, err := db.Conn(ctx)
		if err != nil {
			db.Close()
			return nil, false, fmt.Errorf("workload %s: connect to MariaDB: %w", w, err)
		}
		return myConn{db, mc}, true, nil
	}
	return nil, false, nil
}

type pgConn struct{ c *pgx.Conn }

func (p pgConn) exec(ctx context.Context, stmt string) error {
	_, err := p.c.Exec(ctx, stmt)
	return err
}

func (p pgConn) row(ctx context.Context, q string) ([]string, []string, error) {
	rows, err := p.c.Query(ctx, q, pgx.QueryExecModeSimpleProtocol) // text results
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var cols, vals []string
	for _, f := range rows.FieldDescriptions() {
		cols = append(cols, f.Name)
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, errors.New("no row")
	}
	for _, v := range rows.RawValues() {
		vals = append(vals, string(v))
	}
	rows.Close()
	return cols, vals, rows.Err()
}

func (p pgConn) close() { p.c.Close(context.Background()) }

type myConn struct {
	db *sql.DB
	c  *sql.Conn
}

func (m myConn) exec(ctx context.Context, stmt string) error {
	_, err := m.c.ExecContext(ctx, stmt)
	return err
}

func (m myConn) row(ctx context.Context, q string) ([]string, []string, error) {
	rows, err := m.c.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, errors.New("no row")
	}
	raw := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, nil, err
	}
	vals := make([]string, len(cols))
	for i, r := range raw {
		vals[i] = r.String
	}
	return cols, vals, rows.Close()
}

func (m myConn) close() {
	m.c.Close()
	m.db.Close()
}

// readSQL returns the statements of workloads/<w>/<file>, or nil if the
// workload has no such file.
func readSQL(w, file string) ([]string, error) {
	b, err := workloads.FS.ReadFile(w + "/" + file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return splitSQL(string(b)), nil
}

// splitSQL splits a script into statements at semicolons outside quotes,
// dropping `--` comments and empty statements.
func splitSQL(src string) []string {
	var out []string
	var cur strings.Builder
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			cur.WriteByte('\n')
			continue
		case c == ';':
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

var createTable = regexp.MustCompile(`(?i)CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)`)

// tablesOf lists the tables a schema creates.
func tablesOf(stmts []string) []string {
	var t []string
	for _, s := range stmts {
		if m := createTable.FindStringSubmatch(s); m != nil {
			t = append(t, m[1])
		}
	}
	return t
}

// execFile runs a workload's SQL file statement by statement; a failure
// names the file and the statement.
func execFile(ctx context.Context, c conn, w, file string, stmts []string) error {
	for _, st := range stmts {
		if err := c.exec(ctx, st); err != nil {
			return fmt.Errorf("workloads/%s/%s: %w\nin: %s", w, file, err, st)
		}
	}
	return nil
}

// PrepareStep is one step of preparing a workload's database. Prepare
// runs the steps on a live server; WriteStep writes one as SQL (what a
// database image runs on its first start). Both follow PrepareSteps, so
// the two preparations cannot drift apart.
type PrepareStep struct {
	// Name says what the step does: "drop", "schema", "owner", "rows",
	// "index" or "analyze".
	Name string
	// Source is the workload's file the statements come from
	// ("schema.sql"); empty for statements the harness adds.
	Source string
	// Stmts are the step's statements, without their semicolons.
	Stmts []string
	// Rows is how many generated sku rows the rows step loads, from Seed
	// (SKURowAt).
	Rows int
	Seed int64
}

// PrepareSteps lists, in order, what preparing workload's database with
// opts does: drop the tables its schema.sql creates (with CASCADE on
// PostgreSQL), create them, give them to the services' role (PostgreSQL),
// load the generated rows (sku), create index.sql's indexes (sku unless
// NoSKUIndex) and refresh the statistics (sku). A workload without a
// database has no steps.
func PrepareSteps(workload string, opts PrepareOptions) ([]PrepareStep, error) {
	if !slices.Contains(workloads.Names, workload) {
		return nil, fmt.Errorf("unknown workload %q (known: %s)", workload, strings.Join(workloads.Names, ", "))
	}
	engine := workloads.Database(workload)
	if engine == workloads.NoDatabase {
		return nil, nil
	}
	schema, err := readSQL(workload, "schema.sql")
	if err != nil {
		return nil, err
	}
	drop, owner := PrepareStep{Name: "drop"}, PrepareStep{Name: "owner"}
	for _, t := range tablesOf(schema) {
		d := "DROP TABLE IF EXISTS " + t
		if engine == workloads.Postgres {
			d += " CASCADE"
		}
		drop.Stmts = append(drop.Stmts, d)
		// The service's role owns its workload's tables (and with them
		// their sequences and indexes), and nothing else.
		owner.Stmts = append(owner.Stmts, "ALTER TABLE "+t+" OWNER TO "+dbUser)
	}
	steps := []PrepareStep{drop, {Name: "schema", Source: "schema.sql", Stmts: schema}}
	if engine == workloads.Postgres {
		steps = append(steps, owner)
	}
	if workload == "sku" {
		if opts.SKURows <= 0 {
			opts.SKURows = DefaultSKURows
		}
		if opts.Seed == 0 {
			opts.Seed = DefaultSeed
		}
		if opts.SKURows > skuIDMask {
			return nil, fmt.Errorf("sku: %d rows is more than the generator's %d", opts.SKURows, skuIDMask)
		}
		steps = append(steps, PrepareStep{Name: "rows", Rows: opts.SKURows, Seed: opts.Seed})
	}
	if workload != "sku" || !opts.NoSKUIndex {
		index, err := readSQL(workload, "index.sql")
		if err != nil {
			return nil, err
		}
		if len(index) > 0 {
			steps = append(steps, PrepareStep{Name: "index", Source: "index.sql", Stmts: index})
		}
	}
	if workload == "sku" {
		// Fresh statistics, so the optimizer uses the index at once.
		steps = append(steps, PrepareStep{Name: "analyze", Stmts: []string{"ANALYZE TABLE purch_sku_master"}})
	}
	return steps, nil
}

// Prepare runs PrepareSteps on the server of the workload's database: it
// creates the workload's tables from workloads/<w>/schema.sql (dropping
// any old ones), plus its index.sql (for sku unless NoSKUIndex), and
// loads its seed data (sku: opts.SKURows deterministic rows,
// bulk-loaded). A workload without a database needs nothing.
func Prepare(ctx context.Context, workload string, s Servers, opts PrepareOptions) (*Prepared, error) {
	steps, err := PrepareSteps(workload, opts)
	if err != nil {
		return nil, err
	}
	c, ok, err := connect(ctx, workload, s)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &Prepared{}, nil // no database, nothing to prepare
	}
	defer c.close()
	p := &Prepared{}
	for _, st := range steps {
		switch {
		case st.Name == "rows":
			mc, isMy := c.(myConn)
			if !isMy {
				return nil, errors.New("sku: the bulk load needs MariaDB/MySQL")
			}
			if err := loadSKU(ctx, mc, st.Seed, st.Rows); err != nil {
				return nil, err
			}
			if opts.KnownSKUs <= 0 {
				opts.KnownSKUs = DefaultKnownSKUs
			}
			p.KnownSKUs = KnownSKUIDs(st.Seed, st.Rows, opts.KnownSKUs)
		case st.Name == "analyze":
			// ANALYZE TABLE answers with a row, which MySQL wants read.
			for _, q := range st.Stmts {
				if _, _, err := c.row(ctx, q); err != nil {
					return nil, fmt.Errorf("%s: analyze: %w", workload, err)
				}
			}
		case st.Source != "":
			if err := execFile(ctx, c, workload, st.Source, st.Stmts); err != nil {
				return nil, err
			}
		default:
			for _, q := range st.Stmts {
				if err := c.exec(ctx, q); err != nil {
					return nil, fmt.Errorf("workload %s: %s: %w", workload, q, err)
				}
			}
		}
	}
	return p, nil
}

// WriteStep writes st as an SQL script any client of its engine runs:
// its statements, or for the rows step the generated rows as multi-row
// INSERTs (LOAD DATA would need local_infile on both sides).
func WriteStep(w io.Writer, st PrepareStep) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for _, q := range st.Stmts {
		bw.WriteString(q)
		bw.WriteString(";\n")
	}
	for i := 0; i < st.Rows; i++ {
		if i%skuInsertBatch == 0 {
			if i > 0 {
				bw.WriteString(";\n")
			}
			bw.WriteString("INSERT INTO purch_sku_master (" + skuColumns + ") VALUES\n")
		} else {
			bw.WriteString(",\n")
		}
		r := SKURowAt(st.Seed, i)
		fmt.Fprintf(bw, "(%d,%d,%s,%d,%s,%s,%s,%s)", r.ID, r.MemID, sqlString(r.MemCode), r.SKUID, sqlString(r.SKUCode), sqlString(r.Item), sqlString(r.SKUName), sqlString(r.SKUAbbr))
	}
	if st.Rows > 0 {
		bw.WriteString(";\n")
	}
	return bw.Flush()
}

// skuInsertBatch is the rows per INSERT WriteStep writes.
const skuInsertBatch = 1000

// sqlString quotes s as a SQL string literal for MySQL.
func sqlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `''`)
	return "'" + r.Replace(s) + "'"
}

var loadSeq atomic.Int64

// loadSKU streams the generated rows into purch_sku_master with one LOAD
// DATA LOCAL INFILE: the generator writes into a pipe the driver reads
// from, so no row is stored anywhere but in the table.
//
// One stream on purpose: under the default innodb_autoinc_lock_mode a LOAD
// DATA holds the table's AUTO-INC lock to its end, so parallel streams run
// one after the other; the interleaved mode lets them overlap but spent 50%
// more CPU on latch contention for about 10% less time on two cores.
//
// The server runs with local_infile off; it is on only while this load
// runs, and off again whatever happens.
func loadSKU(ctx context.Context, c myConn, seed int64, n int) error {
	if err := c.exec(ctx, "SET GLOBAL local_infile = 1"); err != nil {
		return fmt.Errorf("sku: allow the bulk load: %w", err)
	}
	defer func() {
		// A fresh context: the load's may be the one that ended.
		off, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.exec(off, "SET GLOBAL local_infile = 0")
	}()
	for _, st := range loadSession {
		if err := c.exec(ctx, st); err != nil {
			return fmt.Errorf("sku: %s: %w", st, err)
		}
	}
	pr, pw := io.Pipe()
	name := fmt.Sprintf("showdown-sku-%d", loadSeq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return pr })
	defer mysql.DeregisterReaderHandler(name)
	go func() { pw.CloseWithError(WriteSKURows(pw, seed, n)) }()
	res, err := c.c.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE purch_sku_master "+
		"CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ESCAPED BY '' LINES TERMINATED BY '\\n' ("+skuColumns+")")
	pr.CloseWithError(errors.New("load finished")) // unblock the generator if the load failed
	if err != nil {
		return fmt.Errorf("sku: bulk load of %d rows: %w", n, err)
	}
	if got, err := res.RowsAffected(); err != nil || got != int64(n) {
		return fmt.Errorf("sku: loaded %d rows, want %d (%v)", got, n, err)
	}
	return nil
}

// loadSession is the bulk load's session setup. Not unique_checks=0: that
// turns on InnoDB's bulk insert into an empty table, which on MariaDB
// 10.11 took twice the CPU of the ordinary path for this table.
var loadSession = []string{"SET SESSION foreign_key_checks = 0"}

// Reset empties what a run wrote (workloads/<w>/reset.sql) and, on
// PostgreSQL, checkpoints so every level starts from the same state; a
// workload without reset.sql (sku is read-only) is untouched.
func Reset(ctx context.Context, workload string, s Servers) error {
	stmts, err := readSQL(workload, "reset.sql")
	if err != nil || stmts == nil {
		if err == nil && !slices.Contains(workloads.Names, workload) {
			err = fmt.Errorf("unknown workload %q (known: %s)", workload, strings.Join(workloads.Names, ", "))
		}
		return err
	}
	c, ok, err := connect(ctx, workload, s)
	if err != nil || !ok {
		return err
	}
	defer c.close()
	// A service that left a transaction open holds locks the reset needs;
	// waiting for them would hang the run for good.
	if err := c.exec(ctx, lockWait(c, ResetLockWait)); err != nil {
		return fmt.Errorf("workload %s: bound the reset's lock wait: %w", workload, err)
	}
	if err := execFile(ctx, c, workload, "reset.sql", stmts); err != nil {
		if n := openTransactions(c); n != "" {
			return fmt.Errorf("%w\nhint: %s: a service holds locks the reset needs (a transaction left open, a connection back in its pool inside BEGIN .. COMMIT, or a statement still running for a client that stopped reading); the reset waited %s for them", err, n, ResetLockWait)
		}
		return err
	}
	if _, isPG := c.(pgConn); isPG {
		// Write out the last level's dirty pages now, so that no checkpoint
		// it caused lands in the middle of the next level.
		if err := c.exec(ctx, "CHECKPOINT"); err != nil {
			return fmt.Errorf("workload %s: CHECKPOINT after reset: %w", workload, err)
		}
	}
	return nil
}

// ResetLockWait bounds how long Reset waits for a lock another session
// holds (a variable for the tests).
var ResetLockWait = 30 * time.Second

// lockWait is the statement that bounds c's session's lock waits to d.
func lockWait(c conn, d time.Duration) string {
	if _, isPG := c.(pgConn); isPG {
		return fmt.Sprintf("SET lock_timeout = '%dms'", d.Milliseconds())
	}
	// TRUNCATE waits on the table's metadata lock; rows wait on InnoDB's.
	s := int(d.Seconds())
	return fmt.Sprintf("SET SESSION lock_wait_timeout = %d, innodb_lock_wait_timeout = %d", s, s)
}

// openTransactions says how many other sessions sit inside a transaction
// or run a statement now, in which states, and for how long the oldest
// has; "" when none or unknown.
func openTransactions(c conn) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	q := `SELECT count(*), coalesce(max(extract(epoch FROM now() - coalesce(xact_start, query_start)))::int, 0), coalesce(string_agg(DISTINCT state, ', '), '') FROM pg_stat_activity WHERE state IS NOT NULL AND state <> 'idle' AND backend_type = 'client backend' AND pid <> pg_backend_pid()`
	if _, isPG := c.(pgConn); !isPG {
		q = `SELECT count(*), coalesce(max(timestampdiff(SECOND, trx_started, now())), 0) FROM information_schema.innodb_trx`
	}
	_, v, err := c.row(ctx, q)
	if err != nil || len(v) < 2 || v[0] == "0" {
		return ""
	}
	if len(v) > 2 && v[2] != "" {
		return fmt.Sprintf("%s other session(s) busy (%s), the oldest for %s s", v[0], v[2], v[1])
	}
	return fmt.Sprintf("%s session(s) inside a transaction, the oldest for %s s", v[0], v[1])
}

// Audit checks the workload's invariants in the database directly with the
// named queries of workloads/<w>/audit.sql, each returning one row: a
// one-column row must be 0, except the query named "rows", which must equal
// created (skipped when created < 0); a two-column row's values must be
// equal. For bank that is: total money equals deposits, no negative
// balance, every balance matches its ledger; for users: the row count
// equals created. A nil slice means all is well.
func Audit(ctx context.Context, workload string, s Servers, created int64) ([]Violation, error) {
	return AuditWithin(ctx, workload, s, created, created)
}

// AuditWithin is Audit with the "rows" rule relaxed to a range: at least
// atLeast rows (nothing lost) and at most atMost (nothing duplicated
// beyond the requests that may still have been in flight); skipped when
// atLeast < 0.
func AuditWithin(ctx context.Context, workload string, s Servers, atLeast, atMost int64) ([]Violation, error) {
	if _, err := workloads.FS.ReadFile(workload + "/audit.sql"); errors.Is(err, fs.ErrNotExist) {
		if !slices.Contains(workloads.Names, workload) {
			return nil, fmt.Errorf("unknown workload %q (known: %s)", workload, strings.Join(workloads.Names, ", "))
		}
		return nil, nil
	}
	c, ok, err := connect(ctx, workload, s)
	if err != nil || !ok {
		return nil, err
	}
	defer c.close()
	return auditConn(ctx, c, workload, atLeast, atMost)
}

// auditConn runs the audit queries of workload over c.
func auditConn(ctx context.Context, c conn, workload string, atLeast, atMost int64) ([]Violation, error) {
	queries, err := workloads.Queries(workload, "audit.sql")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(queries))
	for n := range queries {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Violation
	for _, n := range names {
		cols, vals, err := c.row(ctx, queries[n])
		if err != nil {
			return nil, fmt.Errorf("workloads/%s/audit.sql: query %s: %w", workload, n, err)
		}
		v, err := check(n, cols, vals, atLeast, atMost)
		if err != nil {
			return nil, fmt.Errorf("workloads/%s/audit.sql: query %s: %w", workload, n, err)
		}
		if v != "" {
			out = append(out, Violation{Check: n, Detail: v})
		}
	}
	return out, nil
}

// check applies the audit rule to one query's row; "" means it holds.
func check(name string, cols, vals []string, atLeast, atMost int64) (string, error) {
	num := func(i int) (*big.Rat, error) {
		r, ok := new(big.Rat).SetString(strings.TrimSpace(vals[i]))
		if !ok {
			return nil, fmt.Errorf("column %s: %q is not a number", cols[i], vals[i])
		}
		return r, nil
	}
	switch len(vals) {
	case 1:
		got, err := num(0)
		if err != nil {
			return "", err
		}
		if name == "rows" {
			switch {
			case atLeast < 0:
			case atLeast == atMost && got.Cmp(new(big.Rat).SetInt64(atLeast)) != 0:
				return fmt.Sprintf("%s rows, want %d (created)", vals[0], atLeast), nil
			case got.Cmp(new(big.Rat).SetInt64(atLeast)) < 0:
				return fmt.Sprintf("%s rows but %d created: writes were lost", vals[0], atLeast), nil
			case got.Cmp(new(big.Rat).SetInt64(atMost)) > 0:
				return fmt.Sprintf("%s rows for %d created (at most %d more could have been in flight)", vals[0], atLeast, atMost-atLeast), nil
			}
			return "", nil
		}
		if got.Sign() != 0 {
			return fmt.Sprintf("%s = %s, want 0", cols[0], vals[0]), nil
		}
		return "", nil
	case 2:
		a, err := num(0)
		if err != nil {
			return "", err
		}
		b, err := num(1)
		if err != nil {
			return "", err
		}
		if a.Cmp(b) != 0 {
			return fmt.Sprintf("%s %s != %s %s", cols[0], vals[0], cols[1], vals[1]), nil
		}
		return "", nil
	}
	return "", fmt.Errorf("returns %d columns; an audit query returns 1 (must be 0) or 2 (must be equal)", len(vals))
}
