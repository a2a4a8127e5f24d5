package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// The bank statements, verbatim from workloads/bank/queries.sql.
const (
	sqlCreateClient = `WITH c AS (INSERT INTO client (balance) VALUES ($1) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c`
	sqlLockClients  = `SELECT id, balance FROM client WHERE id IN ($1, $2) ORDER BY id FOR UPDATE`
	sqlTransfer     = `WITH debit AS (UPDATE client SET balance = balance - $1 WHERE id = $2), credit AS (UPDATE client SET balance = balance + $3 WHERE id = $4) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES ($5, $6, $7) RETURNING id`
	sqlBalance      = `SELECT balance FROM client WHERE id = $1`
	// sqlLedgerRow looks for a transfer's ledger row after an in-doubt
	// COMMIT. The id alone is not enough: after a crash, ids handed out by
	// transactions that never committed can be handed out again (the
	// sequence's advance was not yet durable either), so another transfer
	// may hold it; the row must be this transfer's.
	sqlLedgerRow = `SELECT id FROM transaction WHERE id = $1 AND from_client_id = $2 AND to_client_id = $3 AND amount = $4`
)

// bank serves transfers between clients on PostgreSQL.
type bank struct {
	db *postgres // nil when DATABASE_URL is unset
	// resolved counts in-doubt COMMITs by outcome (committed, not_committed, unknown).
	resolved *prometheus.CounterVec
}

// newBank returns the bank on db and registers its counter with reg.
func newBank(db *postgres, reg prometheus.Registerer) bank {
	resolved := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bank_commit_resolved_total",
		Help: "Transfers whose COMMIT failed, by the outcome the service then found.",
	}, []string{"outcome"})
	reg.MustRegister(resolved)
	return bank{db: db, resolved: resolved}
}

func (b bank) register(r gin.IRoutes) {
	r.POST("/client/new/:balance", needsDB(b.db != nil, b.createClient))
	r.POST("/transaction", needsDB(b.db != nil, b.transfer))
	r.GET("/client/:id/balance", needsDB(b.db != nil, b.balance))
}

// clientBody is the answer of /client/new/{balance}.
type clientBody struct {
	ID      int64 `json:"id"`
	Balance int64 `json:"balance"`
}

// balanceBody is the answer of /client/{id}/balance.
type balanceBody struct {
	Balance int64 `json:"balance"`
}

// transferBody is the answer of /transaction.
type transferBody struct {
	ID           int64 `json:"id"`
	FromClientID int64 `json:"from_client_id"`
	ToClientID   int64 `json:"to_client_id"`
	Amount       int64 `json:"amount"`
}

var (
	errClientNotFound    = notFound("client not found")
	errInsufficientFunds = &apiError{http.StatusConflict, "insufficient funds"}
)

func (b bank) createClient(c *gin.Context) (err error) {
	balance, err := pathInt(c, "balance", 0, maxAmount)
	if err != nil {
		return err
	}
	conn, ctx, done, err := b.db.acquire(c.Request.Context())
	if err != nil {
		return err
	}
	defer done()
	var body clientBody
	if err := conn.QueryRow(ctx, sqlCreateClient, balance).Scan(&body.ID, &body.Balance); err != nil {
		return err
	}
	c.JSON(http.StatusOK, body)
	return nil
}

func (b bank) balance(c *gin.Context) (err error) {
	id, err := pathInt(c, "id", 1, maxID)
	if err != nil {
		return err
	}
	conn, ctx, done, err := b.db.acquire(c.Request.Context())
	if err != nil {
		return err
	}
	defer done()
	var body balanceBody
	err = conn.QueryRow(ctx, sqlBalance, id).Scan(&body.Balance)
	if errors.Is(err, pgx.ErrNoRows) {
		return errClientNotFound
	}
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, body)
	return nil
}

func (b bank) transfer(c *gin.Context) (err error) {
	obj, err := readObject(c)
	if err != nil {
		return err
	}
	var t transferBody
	if t.FromClientID, err = obj.int("from_client_id", 1, maxID); err != nil {
		return err
	}
	if t.ToClientID, err = obj.int("to_client_id", 1, maxID); err != nil {
		return err
	}
	if t.Amount, err = obj.int("amount", 1, maxAmount); err != nil {
		return err
	}
	if t.FromClientID == t.ToClientID {
		return badRequest("from_client_id and to_client_id must differ")
	}
	conn, ctx, done, err := b.db.acquire(c.Request.Context())
	if err != nil {
		return err
	}
	defer done()
	if t.ID, err = move(ctx, conn, t.FromClientID, t.ToClientID, t.Amount); err != nil {
		var doubt *inDoubtError
		if !errors.As(err, &doubt) {
			return err
		}
		conn.Release() // closed by move: the pool destroys it and may open another
		return b.resolve(c, t, doubt)
	}
	c.JSON(http.StatusOK, t)
	return nil
}

// sqlBegin opens the transfer's transaction; READ COMMITTED is
// PostgreSQL's default, but saying it guards against a changed
// default_transaction_isolation.
const sqlBegin = `BEGIN ISOLATION LEVEL READ COMMITTED`

// move runs one transfer as one READ COMMITTED transaction and returns the
// ledger id. lock_clients locks both rows in ascending id order, the same
// order for every transfer, so concurrent transfers never deadlock; the
// checks then see committed, locked balances.
//
// BEGIN travels with lock_clients in one pipelined batch, as pgjdbc sends
// its implicit BEGIN with the first statement: three round trips instead
// of four (BEGIN+lock, transfer, COMMIT), the same statements in the same
// order. Any way out but a successful COMMIT rolls back; should even the
// ROLLBACK fail, the connection is left in a transaction and pgxpool
// destroys it on Release instead of reusing it.
func move(ctx context.Context, conn *pgxpool.Conn, from, to, amount int64) (id int64, err error) {
	var batch pgx.Batch
	batch.Queue(sqlBegin)
	batch.Queue(sqlLockClients, from, to)
	br := conn.SendBatch(ctx, &batch)
	ended := false // committed, or in doubt: no ROLLBACK
	defer func() {
		if !ended && conn.Conn().PgConn().TxStatus() != 'I' {
			_, _ = conn.Exec(ctx, "ROLLBACK")
		}
	}()
	found, payerBalance, err := lockClients(br, from)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if found < 2 {
		return 0, errClientNotFound
	}
	if payerBalance < amount {
		return 0, errInsufficientFunds
	}
	if err := conn.QueryRow(ctx, sqlTransfer, amount, from, amount, to, from, to, amount).Scan(&id); err != nil {
		return 0, err
	}
	tag, err := conn.Exec(ctx, "COMMIT")
	if err != nil {
		// The COMMIT may or may not have been carried out. Never lend this
		// connection again: close it (a Terminate behind the COMMIT, which
		// a stopped server still reads in order) and let the caller resolve.
		ended = true
		cctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		_ = conn.Conn().Close(cctx)
		cancel()
		return 0, &inDoubtError{id: id, err: err}
	}
	if tag.String() != "COMMIT" { // PostgreSQL answers ROLLBACK to COMMIT in a failed transaction
		return 0, fmt.Errorf("transfer not committed: the server answered %q", tag.String())
	}
	ended = true
	return id, nil
}

// lockClients reads the batch's BEGIN and lock_clients results: how many of
// the two clients exist, and the payer's balance.
func lockClients(br pgx.BatchResults, from int64) (found int, payerBalance int64, err error) {
	if _, err := br.Exec(); err != nil {
		return 0, 0, err
	}
	rows, err := br.Query()
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, balance int64
		if err := rows.Scan(&id, &balance); err != nil {
			return 0, 0, err
		}
		found++
		if id == from {
			payerBalance = balance
		}
	}
	return found, payerBalance, rows.Err()
}

// inDoubtError is a COMMIT that failed without an answer from the server
// (a broken connection, a timeout, a shutdown): the transfer with ledger
// row id may or may not have been committed.
type inDoubtError struct {
	id  int64
	err error
}

func (e *inDoubtError) Error() string {
	return fmt.Sprintf("COMMIT of ledger row %d in doubt: %v", e.id, e.err)
}

func (e *inDoubtError) Unwrap() error { return e.err }

// Bounds of the resolution of an in-doubt COMMIT.
const (
	// DefaultResolveTimeout is how long after the failed COMMIT the
	// service keeps trying to learn its outcome before it gives up and
	// closes the client's connection without an answer.
	DefaultResolveTimeout = 30 * time.Second
	// DefaultResolvePause is the pause between two failed attempts.
	DefaultResolvePause = 150 * time.Millisecond
)

// errUnavailable is the answer to a transfer that did not commit.
var errUnavailable = &apiError{http.StatusServiceUnavailable, "database unavailable"}

// resolve answers a transfer whose COMMIT failed with the truth: 200 when
// its ledger row exists, 503 when it does not, and no answer at all (the
// connection is closed) when the database cannot tell within
// DefaultResolveTimeout.
func (b bank) resolve(c *gin.Context, t transferBody, doubt *inDoubtError) error {
	start := time.Now()
	committed, attempts, err := b.db.ledgerRowExists(t.FromClientID, t.ToClientID, t.Amount, doubt.id, DefaultResolveTimeout, DefaultResolvePause)
	outcome := "not_committed"
	switch {
	case err != nil:
		outcome = "unknown"
	case committed:
		outcome = "committed"
	}
	b.resolved.WithLabelValues(outcome).Inc()
	attrs := []any{"outcome", outcome, "ledger_id", doubt.id, "from_client_id", t.FromClientID, "to_client_id", t.ToClientID,
		"attempts", attempts, "resolve_ms", time.Since(start).Milliseconds(), "commit_error", doubt.err.Error()}
	if err != nil {
		errorLog.Warn("in-doubt COMMIT unresolved: closing the client's connection without an answer", append(attrs, "error", err.Error())...)
		panic(http.ErrAbortHandler) // net/http closes the connection and writes nothing (recoverJSON passes it on)
	}
	errorLog.Info("in-doubt COMMIT resolved", attrs...)
	if !committed {
		return errUnavailable
	}
	c.JSON(http.StatusOK, transferBody{ID: doubt.id, FromClientID: t.FromClientID, ToClientID: t.ToClientID, Amount: t.Amount})
	return nil
}

// ledgerRowExists tells whether ledger row id exists, as this transfer's, trying on fresh
// pooled connections until one attempt succeeds or timeout has passed,
// pausing between failed attempts. Each attempt locks the transfer's two
// clients first (lock_clients), so it waits until the original
// transaction, should its backend still be alive, has ended.
func (p *postgres) ledgerRowExists(from, to, amount, id int64, timeout, pause time.Duration) (exists bool, attempts int, err error) {
	deadline := time.Now().Add(timeout)
	maxAttempts := int(timeout/pause) + 1
	for attempts = 1; ; attempts++ {
		exists, err = p.ledgerRowOnce(deadline, from, to, amount, id)
		if err == nil || attempts >= maxAttempts || time.Until(deadline) < pause {
			return exists, attempts, err
		}
		time.Sleep(pause)
	}
}

// ledgerRowOnce is one attempt of ledgerRowExists: a READ COMMITTED
// transaction on a pooled connection (the pool closes a broken one) that
// runs lock_clients and ledger_row, then rolls back.
func (p *postgres) ledgerRowOnce(deadline time.Time, from, to, amount, id int64) (exists bool, err error) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	actx, acancel := context.WithTimeout(ctx, p.limits.acquire)
	conn, err := p.pool.Acquire(actx)
	acancel()
	if err != nil {
		return false, err
	}
	defer conn.Release()
	qctx, qcancel := context.WithTimeout(ctx, p.limits.query)
	defer qcancel()
	tx, err := conn.BeginTx(qctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback(qctx) }()
	rows, err := tx.Query(qctx, sqlLockClients, from, to)
	if err != nil {
		return false, err
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	var got int64
	err = tx.QueryRow(qctx, sqlLedgerRow, id, from, to, amount).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // the deferred ROLLBACK ends the transaction; its failure changes nothing read
	}
	if err != nil {
		return false, err
	}
	return true, nil
}
