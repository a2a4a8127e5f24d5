package db

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/showdownlab/showdown/workloads"
)

// The prepare tests share one server of each kind, started on first use.
var (
	sharedOnce sync.Once
	sharedErr  error
	shared     Servers
)

func servers(t *testing.T) Servers {
	t.Helper()
	sharedOnce.Do(func() {
		ctx := context.Background()
		if shared.Postgres, sharedErr = StartPostgres(ctx); sharedErr != nil {
			return
		}
		shared.MariaDB, sharedErr = StartMariaDB(ctx)
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Postgres.Stop()
	shared.MariaDB.Stop()
	os.Exit(code)
}

// testRows keeps the sku table small in tests; the benchmark loads the full one.
const testRows = 10_000

func TestDefaultMaxConnections(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	tests := []struct {
		e    engine
		url  string
		want string
	}{
		{engines[0], s.Postgres.URL(), "100"}, // PostgreSQL's default, the sources' limit
		{engines[1], s.MariaDB.URL(), "151"},  // MariaDB's default
	}
	for _, tt := range tests {
		if v, err := tt.e.value(ctx, tt.url, tt.e.maxConns); err != nil || v != tt.want {
			t.Errorf("%s: max_connections = %q, %v; want %s", tt.e.name, v, err, tt.want)
		}
	}
}

// pgQueries runs a workload's contract statements (queries.sql) on PostgreSQL.
type pgQueries struct {
	t *testing.T
	c *pgx.Conn
	q map[string]string
}

func contract(t *testing.T, s Servers, workload string) *pgQueries {
	t.Helper()
	q, err := workloads.Queries(workload, "queries.sql")
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(context.Background(), s.Postgres.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return &pgQueries{t, c, q}
}

func (p *pgQueries) exec(sql string, args ...any) {
	p.t.Helper()
	if _, err := p.c.Exec(context.Background(), sql, args...); err != nil {
		p.t.Fatalf("%s: %v", sql, err)
	}
}

func (p *pgQueries) int(sql string, args ...any) int64 {
	p.t.Helper()
	var v int64
	if err := p.c.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		p.t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// client creates a client with the contract's statement and returns its id.
func (p *pgQueries) client(balance int64) int64 {
	p.t.Helper()
	var id, b int64
	if err := p.c.QueryRow(context.Background(), p.q["create_client"], balance).Scan(&id, &b); err != nil {
		p.t.Fatalf("create_client: %v", err)
	}
	return id
}

// seedBank creates three clients and moves money between them with the
// contract's own statements, as a service would.
func seedBank(p *pgQueries) {
	p.t.Helper()
	for _, b := range []int64{100, 50, 0} {
		p.client(b)
	}
	ctx := context.Background()
	for _, tr := range []struct{ from, to, amount int64 }{{1, 2, 30}, {2, 3, 70}, {3, 1, 5}} {
		tx, err := p.c.Begin(ctx)
		if err != nil {
			p.t.Fatal(err)
		}
		rows, _ := tx.Query(ctx, p.q["lock_clients"], tr.from, tr.to)
		rows.Close()
		if _, err := tx.Exec(ctx, p.q["transfer"], tr.amount, tr.from, tr.amount, tr.to, tr.from, tr.to, tr.amount); err != nil {
			p.t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			p.t.Fatal(err)
		}
	}
}

func checks(v []Violation) []string {
	var c []string
	for _, x := range v {
		c = append(c, x.Check)
	}
	return c
}

func TestBankAudit(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		break_ []string // statements that break an invariant behind the service's back
		want   []string // the audit checks that must fail
	}{
		// A run that followed the rules.
		{"clean", nil, nil},
		// Money appears from nowhere: the total and that client's ledger disagree.
		{"balance raised", []string{"UPDATE client SET balance = balance + 10 WHERE id = 1"}, []string{"ledger", "money"}},
		// A transfer that moved money but wrote no ledger row.
		{"unrecorded transfer", []string{"UPDATE client SET balance = balance - 5 WHERE id = 1", "UPDATE client SET balance = balance + 5 WHERE id = 2"}, []string{"ledger"}},
		// An overdraft: possible only without the schema's CHECK.
		{"negative balance", []string{"ALTER TABLE client DROP CONSTRAINT client_balance_check",
			"UPDATE client SET balance = -1 WHERE id = 3"}, []string{"ledger", "money", "negative"}},
		// A ledger row with no movement of money.
		{"phantom ledger row", []string{"INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES (1, 2, 1)"}, []string{"ledger"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Prepare(ctx, "bank", s, PrepareOptions{}); err != nil {
				t.Fatal(err)
			}
			p := contract(t, s, "bank")
			seedBank(p)
			for _, st := range tt.break_ {
				p.exec(st)
			}
			v, err := Audit(ctx, "bank", s, -1)
			if err != nil {
				t.Fatal(err)
			}
			if got := checks(v); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("violations %v (%+v), want %v", got, v, tt.want)
			}
			// The same audit over the service's own login and URL, as a
			// Kubernetes run audits its in-cluster database.
			vu, err := AuditURL(ctx, "bank", s.Postgres.URL(), -1, -1)
			if err != nil {
				t.Fatal(err)
			}
			if got := checks(vu); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("by URL: violations %v (%+v), want %v", got, vu, tt.want)
			}
			for _, x := range v {
				if x.Detail == "" {
					t.Errorf("violation %s has no detail", x.Check)
				}
			}
		})
	}
}

func TestBankReset(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	if _, err := Prepare(ctx, "bank", s, PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	p := contract(t, s, "bank")
	seedBank(p)
	if err := Reset(ctx, "bank", s); err != nil {
		t.Fatal(err)
	}
	if n := p.int("SELECT (SELECT count(*) FROM client) + (SELECT count(*) FROM transaction)"); n != 0 {
		t.Errorf("%d rows left after Reset, want 0", n)
	}
	// Ids start again at 1.
	if id := p.client(10); id != 1 {
		t.Errorf("first id after Reset = %d, want 1", id)
	}
}

// TestResetOpenTransaction: a service connection left inside a
// transaction holds locks TRUNCATE needs; Reset gives up after
// ResetLockWait and says why, instead of hanging the run, and works again
// once the transaction ends.
func TestResetOpenTransaction(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	if _, err := Prepare(ctx, "bank", s, PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	p := contract(t, s, "bank")
	seedBank(p)
	openTx := func(want int) {
		t.Helper()
		if n, err := OpenTransactions(ctx, "bank", s); err != nil || n != want {
			t.Errorf("OpenTransactions = %d, %v; want %d", n, err, want)
		}
	}
	busy := func(want string) {
		t.Helper()
		got, err := BusySessions(ctx, "bank", s)
		if err != nil || !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("BusySessions = %q, %v; want %q", got, err, want)
		}
	}
	openTx(0)
	busy("")
	p.exec("BEGIN")
	p.int("SELECT count(*) FROM ("+p.q["lock_clients"]+") l", int64(1), int64(2))
	openTx(1)
	busy("1 session(s) of the service's login busy (idle in transaction)")
	defer func(d time.Duration) { ResetLockWait = d }(ResetLockWait)
	ResetLockWait = time.Second
	start := time.Now()
	err := Reset(ctx, "bank", s)
	named := err != nil && (strings.Contains(err.Error(), "1 other session(s) busy (idle in transaction)") || strings.Contains(err.Error(), "1 session(s) inside a transaction"))
	if !named || !strings.Contains(err.Error(), "holds locks the reset needs") {
		t.Errorf("Reset beside an open transaction: %v; want a lock timeout naming it", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Reset waited %s for a 1 s lock wait", took)
	}
	p.exec("ROLLBACK")
	openTx(0)
	busy("")
	if err := Reset(ctx, "bank", s); err != nil {
		t.Fatalf("Reset after the transaction ended: %v", err)
	}
}

func TestUsers(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	if _, err := Prepare(ctx, "users", s, PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	p := contract(t, s, "users")
	for i := range 3 {
		p.int(p.q["create_user"], fmt.Sprintf("u%d@example.com", i), "secret")
	}
	tests := []struct {
		created int64
		want    []string
	}{
		{3, nil},              // every 201 left one row
		{2, []string{"rows"}}, // a row without a 201
		{4, []string{"rows"}}, // a 201 without a row
		{-1, nil},             // check skipped
	}
	for _, tt := range tests {
		v, err := Audit(ctx, "users", s, tt.created)
		if err != nil {
			t.Fatal(err)
		}
		if got := checks(v); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Audit(created=%d) = %+v, want checks %v", tt.created, v, tt.want)
		}
	}
	if err := Reset(ctx, "users", s); err != nil {
		t.Fatal(err)
	}
	if n := p.int("SELECT count(*) FROM users"); n != 0 {
		t.Errorf("%d users after Reset, want 0", n)
	}
	// Prepare again replaces the table.
	p.int(p.q["create_user"], "a@b.c", "x")
	if _, err := Prepare(ctx, "users", s, PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := p.int("SELECT count(*) FROM users"); n != 0 {
		t.Errorf("%d users after a second Prepare, want 0", n)
	}
}

// skuChecksum digests the whole table inside MariaDB.
func skuChecksum(t *testing.T, s Servers) string {
	t.Helper()
	v, err := engines[1].value(context.Background(), s.MariaDB.URL(),
		"SELECT concat(count(*), ':', sum(crc32(concat_ws('|', id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr)))) FROM purch_sku_master")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSKU(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	p, err := Prepare(ctx, "sku", s, PrepareOptions{SKURows: testRows, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	first := skuChecksum(t, s)
	if !strings.HasPrefix(first, fmt.Sprint(testRows)+":") {
		t.Errorf("checksum %s: want %d rows", first, testRows)
	}
	if want := KnownSKUIDs(42, testRows, DefaultKnownSKUs); !reflect.DeepEqual(p.KnownSKUs, want) || len(want) != DefaultKnownSKUs {
		t.Errorf("KnownSKUs = %v, want %d: %v", p.KnownSKUs, DefaultKnownSKUs, want)
	}
	q, err := workloads.Queries("sku", "queries.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := openURL(s.MariaDB.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seen := map[int64]bool{}
	for _, id := range p.KnownSKUs {
		if seen[id] {
			t.Errorf("known sku_id %d listed twice", id)
		}
		seen[id] = true
		var r SKURow
		err := db.QueryRowContext(ctx, q["get_sku"], id).Scan(&r.ID, &r.MemID, &r.MemCode, &r.SKUID, &r.SKUCode, &r.Item, &r.SKUName, &r.SKUAbbr)
		if err != nil {
			t.Errorf("known sku_id %d: %v", id, err)
			continue
		}
		if want := SKURowAt(42, int(r.ID-1)); r != want {
			t.Errorf("row %d = %+v, want the generator's %+v", r.ID, r, want)
		}
	}
	var key string
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(index_name), '') FROM information_schema.statistics WHERE table_schema = 'showdown' AND table_name = 'purch_sku_master' AND column_name = 'sku_id'").Scan(&key); err != nil || key == "" {
		t.Errorf("no index on sku_id (%q, %v)", key, err)
	}

	// Reset leaves the read-only table alone.
	if err := Reset(ctx, "sku", s); err != nil {
		t.Fatal(err)
	}
	if got := skuChecksum(t, s); got != first {
		t.Errorf("checksum after Reset = %s, want %s", got, first)
	}
	if v, err := Audit(ctx, "sku", s, 0); err != nil || v != nil {
		t.Errorf("Audit(sku) = %v, %v; want nothing to check", v, err)
	}

	// Same seed, same table; another seed, another table; no index when asked.
	if _, err := Prepare(ctx, "sku", s, PrepareOptions{SKURows: testRows, Seed: 42, NoSKUIndex: true}); err != nil {
		t.Fatal(err)
	}
	if got := skuChecksum(t, s); got != first {
		t.Errorf("checksum with the same seed = %s, want %s", got, first)
	}
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(index_name), '') FROM information_schema.statistics WHERE table_schema = 'showdown' AND table_name = 'purch_sku_master' AND column_name = 'sku_id'").Scan(&key); err != nil || key != "" {
		t.Errorf("index %q on sku_id with NoSKUIndex (%v)", key, err)
	}
	if _, err := Prepare(ctx, "sku", s, PrepareOptions{SKURows: testRows, Seed: 43, KnownSKUs: 3}); err != nil {
		t.Fatal(err)
	}
	if got := skuChecksum(t, s); got == first {
		t.Errorf("seed 43 gave the same table as seed 42")
	}
}

func TestSKUGenerator(t *testing.T) {
	digest := func(seed int64, n int) string {
		h := sha256.New()
		if err := WriteSKURows(h, seed, n); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", h.Sum(nil))
	}
	if a, b := digest(1, 5000), digest(1, 5000); a != b {
		t.Errorf("seed 1 gave two different tables: %s, %s", a, b)
	}
	if a, b := digest(1, 5000), digest(2, 5000); a == b {
		t.Errorf("seeds 1 and 2 gave the same table")
	}
	const n = 200_000
	ids := make(map[int64]bool, n)
	g := newSKUGen(7)
	for i := range n {
		id := g.skuID(i)
		if ids[id] {
			t.Fatalf("sku_id %d repeats at row %d", id, i)
		}
		if id < 1 || id > 1<<53-1 {
			t.Fatalf("sku_id %d out of the contract's range", id)
		}
		ids[id] = true
	}
	// Every field fits its column (schema.sql).
	for i := 0; i < n; i += 997 {
		r := g.Row(i)
		for _, f := range []struct {
			name string
			v    string
			max  int
		}{{"mem_code", r.MemCode, 32}, {"sku_code", r.SKUCode, 32}, {"item", r.Item, 64}, {"sku_name", r.SKUName, 128}, {"sku_abbr", r.SKUAbbr, 64}} {
			if f.v == "" || len(f.v) > f.max {
				t.Fatalf("row %d: %s %q is empty or longer than %d", i, f.name, f.v, f.max)
			}
		}
		if r.ID != int64(i)+1 {
			t.Fatalf("row %d has id %d", i, r.ID)
		}
	}
	known := KnownSKUIDs(7, n, 10)
	if !reflect.DeepEqual(known, KnownSKUIDs(7, n, 10)) {
		t.Error("KnownSKUIDs is not deterministic")
	}
	for _, id := range known {
		if !ids[id] {
			t.Errorf("known sku_id %d is not in the table", id)
		}
	}
	if got := KnownSKUIDs(7, 3, 10); len(got) != 3 {
		t.Errorf("KnownSKUIDs of 3 rows = %v, want all 3", got)
	}
}

func TestPrepareErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		workload string
		s        Servers
		want     string // in the error; "" for success
	}{
		{"string", Servers{}, ""},                      // no database, nothing to do
		{"bank", Servers{}, "needs PostgreSQL"},        // server missing
		{"sku", Servers{}, "needs MariaDB"},            // server missing
		{"nope", Servers{}, `unknown workload "nope"`}, // a typo
	}
	for _, tt := range tests {
		_, err := Prepare(ctx, tt.workload, tt.s, PrepareOptions{})
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Prepare(%s) = %v, want %q", tt.workload, err, tt.want)
		}
		rerr := Reset(ctx, tt.workload, tt.s)
		aerr := func() error { _, err := Audit(ctx, tt.workload, tt.s, 0); return err }()
		if tt.workload == "nope" && (rerr == nil || aerr == nil) {
			t.Errorf("Reset/Audit of an unknown workload: %v, %v; want errors", rerr, aerr)
		}
	}
}

// TestPrepareSteps checks the order both preparations follow (Prepare on
// a live server, the Kubernetes database images through WriteStep).
func TestPrepareSteps(t *testing.T) {
	tests := []struct {
		workload string
		opts     PrepareOptions
		want     string
	}{
		// PostgreSQL: the services' role owns the tables (no index.sql).
		{"bank", PrepareOptions{}, "drop schema owner"},
		{"users", PrepareOptions{}, "drop schema owner"},
		// MariaDB: the rows, then the index, then fresh statistics.
		{"sku", PrepareOptions{SKURows: 10}, "drop schema rows index analyze"},
		// The source's full table scans: no index.
		{"sku", PrepareOptions{SKURows: 10, NoSKUIndex: true}, "drop schema rows analyze"},
		// No database, no steps.
		{"string", PrepareOptions{}, ""},
	}
	for _, tt := range tests {
		steps, err := PrepareSteps(tt.workload, tt.opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.workload, err)
		}
		var names []string
		for _, st := range steps {
			names = append(names, st.Name)
		}
		if got := strings.Join(names, " "); got != tt.want {
			t.Errorf("%s %+v: steps %q, want %q", tt.workload, tt.opts, got, tt.want)
		}
	}
	if _, err := PrepareSteps("nope", PrepareOptions{}); err == nil {
		t.Error("an unknown workload has steps")
	}
}
