package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The bank's own view for the fault test: read as the administrator,
// straight from PostgreSQL, never through the service under test.

// Transfer is one ledger row of the bank that moved money between two
// clients (deposits, whose from_client_id is NULL, are left out).
type Transfer struct {
	ID       int64
	From, To int64
	Amount   int64
}

// bankConn connects to the bank's database as the administrator.
func bankConn(ctx context.Context, s Servers) (*pgx.Conn, error) {
	if s.Postgres == nil {
		return nil, errors.New("workload bank needs PostgreSQL, which is not started")
	}
	c, err := pgx.Connect(ctx, s.Postgres.adminURL(s.Postgres.Port(), dbName))
	if err != nil {
		return nil, fmt.Errorf("bank: connect to PostgreSQL: %w", err)
	}
	return c, nil
}

// BankReader sums the bank's balances, each time in one REPEATABLE READ
// transaction, on a connection of its own.
type BankReader struct{ c *pgx.Conn }

// OpenBankReader connects a BankReader to the bank's database.
func OpenBankReader(ctx context.Context, s Servers) (*BankReader, error) {
	c, err := bankConn(ctx, s)
	if err != nil {
		return nil, err
	}
	return &BankReader{c}, nil
}

// Total returns the sum of all balances and the number of clients, read
// in one snapshot.
func (r *BankReader) Total(ctx context.Context) (total, clients int64, err error) {
	err = pgx.BeginTxFunc(ctx, r.c, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT coalesce(sum(balance), 0)::bigint, count(*) FROM client").Scan(&total, &clients)
	})
	return total, clients, err
}

// Close closes the reader's connection.
func (r *BankReader) Close() { r.c.Close(context.Background()) }

// BankTransfers returns every ledger row of the bank that moved money
// between two clients, in id order.
func BankTransfers(ctx context.Context, s Servers) ([]Transfer, error) {
	c, err := bankConn(ctx, s)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, "SELECT id, from_client_id, to_client_id, amount FROM transaction WHERE from_client_id IS NOT NULL ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("bank: read the ledger: %w", err)
	}
	var out []Transfer
	for rows.Next() {
		var t Transfer
		if err := rows.Scan(&t.ID, &t.From, &t.To, &t.Amount); err != nil {
			return nil, fmt.Errorf("bank: read the ledger: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ClientLock holds the row locks of some bank clients in an open
// transaction, so that a transfer touching them waits inside its own.
type ClientLock struct{ c *pgx.Conn }

// LockClients locks the rows of clients ids (SELECT ... FOR UPDATE in an
// open transaction) until Release.
func LockClients(ctx context.Context, s Servers, ids ...int64) (*ClientLock, error) {
	c, err := bankConn(ctx, s)
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		c.Close(context.Background())
		return nil, fmt.Errorf("bank: begin: %w", err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM (SELECT id FROM client WHERE id = ANY($1) ORDER BY id FOR UPDATE) l", ids).Scan(&n); err != nil {
		c.Close(context.Background())
		return nil, fmt.Errorf("bank: lock clients %v: %w", ids, err)
	}
	if n != len(ids) {
		c.Close(context.Background())
		return nil, fmt.Errorf("bank: lock clients %v: found %d of them", ids, n)
	}
	return &ClientLock{c}, nil
}

// Waiters counts the service's statements waiting for a lock this
// transaction holds (other waits, a transfer behind another, are not
// counted).
func (l *ClientLock) Waiters(ctx context.Context) (int, error) {
	// Inside a transaction the activity view is read once and kept:
	// clear that snapshot to see the present.
	if _, err := l.c.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return 0, err
	}
	var n int
	err := l.c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND pg_backend_pid() = ANY(pg_blocking_pids(pid))", dbUser).Scan(&n)
	return n, err
}

// Release rolls the locking transaction back and closes its connection.
func (l *ClientLock) Release(ctx context.Context) error {
	defer l.c.Close(context.Background())
	if _, err := l.c.Exec(ctx, "ROLLBACK"); err != nil {
		return fmt.Errorf("bank: release the client locks: %w", err)
	}
	return nil
}
