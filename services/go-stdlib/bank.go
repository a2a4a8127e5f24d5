package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The bank statements, verbatim from workloads/bank/queries.sql.
const (
	sqlCreateClient = `WITH c AS (INSERT INTO client (balance) VALUES ($1) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c`
	sqlLockClients  = `SELECT id, balance FROM client WHERE id IN ($1, $2) ORDER BY id FOR UPDATE`
	sqlTransfer     = `WITH debit AS (UPDATE client SET balance = balance - $1 WHERE id = $2), credit AS (UPDATE client SET balance = balance + $3 WHERE id = $4) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES ($5, $6, $7) RETURNING id`
	sqlBalance      = `SELECT balance FROM client WHERE id = $1`
)

// bank serves transfers between clients on PostgreSQL.
type bank struct {
	db *postgres // nil when DATABASE_URL is unset
}

func (b bank) register(mux *http.ServeMux) {
	mux.Handle("POST /client/new/{balance}", b.needsDB(b.createClient))
	mux.Handle("POST /transaction", b.needsDB(b.transfer))
	mux.Handle("GET /client/{id}/balance", b.needsDB(b.balance))
}

func (b bank) needsDB(h apiHandler) http.Handler {
	if b.db == nil {
		return apiHandler(func(http.ResponseWriter, *http.Request) error { return errNotConfigured })
	}
	return h
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

func (b bank) createClient(w http.ResponseWriter, r *http.Request) (err error) {
	balance, err := pathInt(r, "balance", 0, maxAmount)
	if err != nil {
		return err
	}
	conn, ctx, done, err := b.db.acquire(r)
	if err != nil {
		return err
	}
	defer done(&err)
	var c clientBody
	if err := conn.QueryRow(ctx, sqlCreateClient, balance).Scan(&c.ID, &c.Balance); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (b bank) balance(w http.ResponseWriter, r *http.Request) (err error) {
	id, err := pathInt(r, "id", 1, maxID)
	if err != nil {
		return err
	}
	conn, ctx, done, err := b.db.acquire(r)
	if err != nil {
		return err
	}
	defer done(&err)
	var body balanceBody
	err = conn.QueryRow(ctx, sqlBalance, id).Scan(&body.Balance)
	if errors.Is(err, pgx.ErrNoRows) {
		return errClientNotFound
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (b bank) transfer(w http.ResponseWriter, r *http.Request) (err error) {
	obj, err := readObject(w, r)
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
	conn, ctx, done, err := b.db.acquire(r)
	if err != nil {
		return err
	}
	defer done(&err)
	if t.ID, err = move(ctx, conn, t.FromClientID, t.ToClientID, t.Amount); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
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
	committed := false
	defer func() {
		if !committed && conn.Conn().PgConn().TxStatus() != 'I' {
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
		return 0, err
	}
	if tag.String() != "COMMIT" { // PostgreSQL answers ROLLBACK to COMMIT in a failed transaction
		return 0, fmt.Errorf("transfer not committed: the server answered %q", tag.String())
	}
	committed = true
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
