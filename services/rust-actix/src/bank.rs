//! The bank workload on PostgreSQL: clients, transfers, balances.

use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use deadpool_postgres::Object;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::db::{bounded, DbError, Postgres};
use crate::http::{int, json, no_answer, parse_object, path_int, read_body, within, ApiError, ApiResult, JsonInt, MAX_AMOUNT, MAX_ID};
use crate::App;

// The bank statements, verbatim from workloads/bank/queries.sql.
const SQL_CREATE_CLIENT: &str = "WITH c AS (INSERT INTO client (balance) VALUES ($1) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c";
const SQL_LOCK_CLIENTS: &str = "SELECT id, balance FROM client WHERE id IN ($1, $2) ORDER BY id FOR UPDATE";
const SQL_TRANSFER: &str = "WITH debit AS (UPDATE client SET balance = balance - $1 WHERE id = $2), credit AS (UPDATE client SET balance = balance + $3 WHERE id = $4) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES ($5, $6, $7) RETURNING id";
const SQL_BALANCE: &str = "SELECT balance FROM client WHERE id = $1";
/// SQL_LEDGER_ROW looks for a transfer's ledger row after an in-doubt
/// COMMIT. The id alone is not enough: after a crash, ids handed out by
/// transactions that never committed can be handed out again (the
/// sequence's advance was not yet durable either), so another transfer may
/// hold it; the row must be this transfer's.
const SQL_LEDGER_ROW: &str = "SELECT id FROM transaction WHERE id = $1 AND from_client_id = $2 AND to_client_id = $3 AND amount = $4";

/// RESOLVE_TIMEOUT is how long after a failed COMMIT the service keeps
/// trying to learn its outcome before it closes the client's connection
/// without an answer.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(30);
/// RESOLVE_PAUSE is the pause between two failed attempts to learn it.
pub const RESOLVE_PAUSE: Duration = Duration::from_millis(150);

/// SQL_BEGIN opens the transfer's transaction; READ COMMITTED is
/// PostgreSQL's default, but saying it guards against a changed
/// default_transaction_isolation.
const SQL_BEGIN: &str = "BEGIN ISOLATION LEVEL READ COMMITTED";

#[derive(Serialize)]
struct ClientBody {
    id: i64,
    balance: i64,
}

#[derive(Serialize)]
struct BalanceBody {
    balance: i64,
}

#[derive(Deserialize)]
struct TransferRequest {
    from_client_id: Option<JsonInt>,
    to_client_id: Option<JsonInt>,
    amount: Option<JsonInt>,
}

#[derive(Serialize)]
struct TransferBody {
    id: i64,
    from_client_id: i64,
    to_client_id: i64,
    amount: i64,
}

fn client_not_found() -> ApiError {
    ApiError::not_found("client not found")
}

/// create_client answers POST /client/new/{balance}; the body is ignored.
pub async fn create_client(app: App, req: HttpRequest) -> ApiResult {
    let balance = path_int(&req, "balance", 0, MAX_AMOUNT)?;
    let pg = app.pg.as_ref().ok_or_else(ApiError::not_configured)?;
    let c = pg.acquire().await?;
    let row = within(pg.limits.query, async {
        let st = c.prepare_cached(SQL_CREATE_CLIENT).await?;
        Ok(c.query_one(&st, &[&balance]).await?)
    })
    .await?;
    Ok(json(StatusCode::OK, &ClientBody { id: row.try_get(0)?, balance: row.try_get(1)? }))
}

/// balance answers GET /client/{id}/balance.
pub async fn balance(app: App, req: HttpRequest) -> ApiResult {
    let id = path_int(&req, "id", 1, MAX_ID)?;
    let pg = app.pg.as_ref().ok_or_else(ApiError::not_configured)?;
    let c = pg.acquire().await?;
    let row = within(pg.limits.query, async {
        let st = c.prepare_cached(SQL_BALANCE).await?;
        Ok(c.query_opt(&st, &[&id]).await?)
    })
    .await?;
    let row = row.ok_or_else(client_not_found)?;
    Ok(json(StatusCode::OK, &BalanceBody { balance: row.try_get(0)? }))
}

/// transfer answers POST /transaction. Validation (400) happens before the
/// database is touched.
pub async fn transfer(app: App, req: HttpRequest, body: web::Payload) -> ApiResult {
    let raw = read_body(&req, body).await?;
    let t: TransferRequest = parse_object(&raw)?;
    let from = int(t.from_client_id, "from_client_id", 1, MAX_ID)?;
    let to = int(t.to_client_id, "to_client_id", 1, MAX_ID)?;
    let amount = int(t.amount, "amount", 1, MAX_AMOUNT)?;
    if from == to {
        return Err(ApiError::bad_request("from_client_id and to_client_id must differ"));
    }
    let pg = app.pg.as_ref().ok_or_else(ApiError::not_configured)?;
    let c = pg.acquire().await?;
    let t = TransferBody { id: 0, from_client_id: from, to_client_id: to, amount };
    match move_money(c, from, to, amount, Instant::now() + pg.limits.query).await {
        Ok(id) => Ok(json(StatusCode::OK, &TransferBody { id, ..t })),
        Err(Failure::Refused(e)) => Err(e),
        Err(Failure::InDoubt { id, error }) => resolve(&app, pg, TransferBody { id, ..t }, error).await,
    }
}

/// Failure is how a transfer that did not answer 200 ended.
enum Failure {
    /// Refused: the COMMIT was never sent (or the server refused it), so
    /// nothing was committed; the error is the answer.
    Refused(ApiError),
    /// InDoubt: the COMMIT of ledger row id failed without the server's
    /// answer (a broken connection, a timeout, a shutdown): it may or may
    /// not have been carried out. The connection is already closed.
    InDoubt { id: i64, error: ApiError },
}

impl<E: Into<ApiError>> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Refused(e.into())
    }
}

/// resolve answers a transfer whose COMMIT failed with the truth: 200 when
/// its ledger row exists, 503 when it does not, and no answer at all (the
/// connection is dropped: see http::no_answer) when the database cannot tell within
/// RESOLVE_TIMEOUT. One log line says which.
async fn resolve(app: &App, pg: &Postgres, t: TransferBody, error: ApiError) -> ApiResult {
    let start = std::time::Instant::now();
    let (found, attempts) = ledger_row_exists(pg, t.from_client_id, t.to_client_id, t.amount, t.id).await;
    let outcome = match &found {
        Ok(true) => "committed",
        Ok(false) => "not_committed",
        Err(_) => "unknown",
    };
    app.commit_resolved.with_label_values(&[outcome]).inc();
    let commit_error = match &error {
        ApiError::Db(e) => e.to_string(),
        ApiError::Status(_, m) => m.to_string(),
    };
    let resolve_ms = start.elapsed().as_millis() as u64;
    match found {
        Ok(committed) => {
            tracing::info!(outcome, ledger_id = t.id, from_client_id = t.from_client_id, to_client_id = t.to_client_id,
                attempts, resolve_ms, commit_error = commit_error.as_str(), "in-doubt COMMIT resolved");
            if committed {
                Ok(json(StatusCode::OK, &t))
            } else {
                Err(ApiError::Status(StatusCode::SERVICE_UNAVAILABLE, "database unavailable".into()))
            }
        }
        Err(e) => {
            tracing::warn!(outcome, ledger_id = t.id, from_client_id = t.from_client_id, to_client_id = t.to_client_id,
                attempts, resolve_ms, commit_error = commit_error.as_str(), error = %e,
                "in-doubt COMMIT unresolved: closing the client's connection without an answer");
            Ok(no_answer())
        }
    }
}

/// ledger_row_exists tells whether ledger row id exists, as this transfer's, trying on fresh
/// pooled connections until one attempt succeeds or RESOLVE_TIMEOUT has
/// passed, pausing RESOLVE_PAUSE between failed attempts; it returns the
/// number of attempts too.
async fn ledger_row_exists(pg: &Postgres, from: i64, to: i64, amount: i64, id: i64) -> (Result<bool, DbError>, u32) {
    let deadline = Instant::now() + RESOLVE_TIMEOUT;
    let max_attempts = (RESOLVE_TIMEOUT.as_millis() / RESOLVE_PAUSE.as_millis()) as u32 + 1;
    let mut attempts = 0;
    loop {
        attempts += 1;
        let r = match tokio::time::timeout_at(deadline, ledger_row_once(pg, from, to, amount, id)).await {
            Ok(r) => r,
            Err(_) => Err(DbError::Timeout("the in-doubt COMMIT was not resolved in time")),
        };
        if r.is_ok() || attempts >= max_attempts || Instant::now() + RESOLVE_PAUSE >= deadline {
            return (r, attempts);
        }
        tokio::time::sleep(RESOLVE_PAUSE).await;
    }
}

/// ledger_row_once is one attempt of ledger_row_exists: a READ COMMITTED
/// transaction on a pooled connection that runs lock_clients (it waits
/// until the original transaction, should its backend still be alive, has
/// ended) and ledger_row, then rolls back. A connection left inside the
/// transaction by an error is closed, never lent again.
async fn ledger_row_once(pg: &Postgres, from: i64, to: i64, amount: i64, id: i64) -> Result<bool, DbError> {
    let conn = pg.acquire().await?;
    bounded(pg.limits.query, "the database did not answer in time (DB_QUERY_TIMEOUT)", async move {
        let lock = conn.prepare_cached(SQL_LOCK_CLIENTS).await?;
        let ledger = conn.prepare_cached(SQL_LEDGER_ROW).await?;
        let mut tx = Tx { conn: Some(conn), open: true };
        let c = tx.conn.as_ref().expect("set above");
        c.batch_execute(SQL_BEGIN).await?;
        c.query(&lock, &[&from, &to]).await?;
        let found = c.query_opt(&ledger, &[&id, &from, &to, &amount]).await?.is_some();
        if c.batch_execute("ROLLBACK").await.is_ok() {
            tx.open = false;
        }
        Ok::<_, DbError>(found)
    })
    .await
}

/// Tx is a connection inside a transaction that must end before the
/// connection goes back to the pool. Dropped while still open (an error,
/// a failed ROLLBACK, or the request's future dropped mid-way), it takes
/// the connection out of the pool and closes it, so no later request ever
/// runs inside this transaction.
struct Tx {
    conn: Option<Object>,
    open: bool,
}

impl Drop for Tx {
    fn drop(&mut self) {
        if self.open {
            if let Some(c) = self.conn.take() {
                drop(Object::take(c));
            }
        }
    }
}

/// move_money runs one transfer as one READ COMMITTED transaction and
/// returns the ledger id. lock_clients locks both rows in ascending id
/// order, the same order for every transfer, so concurrent transfers never
/// deadlock; the checks then see committed, locked balances.
///
/// BEGIN and lock_clients go out together (tokio-postgres pipelines
/// requests polled together on one connection), as pgjdbc sends its
/// implicit BEGIN with the first statement: three round trips (BEGIN+lock,
/// transfer, COMMIT), the same statements in the contract's order. All of
/// it runs before deadline (DB_QUERY_TIMEOUT from the start); a COMMIT that
/// fails or runs out of time is in doubt.
///
/// The guard exists before BEGIN goes out: the server drops a request's
/// future when its connection fails or the worker is stopped past the
/// shutdown timeout, and a connection dropped inside BEGIN .. COMMIT
/// without it would go back to the pool idle in transaction, holding both
/// clients' row locks for good (rust-axum met this under hyper).
async fn move_money(conn: Object, from: i64, to: i64, amount: i64, deadline: Instant) -> Result<i64, Failure> {
    let mut tx = Tx { conn: Some(conn), open: true };
    let id = within_until(deadline, before_commit(tx.conn.as_ref().expect("set above"), from, to, amount)).await;
    let id = match id {
        Ok(Ok(id)) => id,
        Ok(Err(refusal)) => {
            tx.open = false; // rolled back
            return Err(Failure::Refused(refusal));
        }
        Err(e) => return Err(e), // the Tx drop closes the connection if the transaction is still open
    };
    let c = tx.conn.as_ref().expect("set above");
    match tokio::time::timeout_at(deadline, c.batch_execute("COMMIT")).await {
        Ok(Ok(())) => {
            tx.open = false;
            Ok(id)
        }
        // tx is dropped open: the connection is closed, never lent again.
        Ok(Err(e)) => Err(Failure::InDoubt { id, error: e.into() }),
        Err(_) => Err(Failure::InDoubt { id, error: DbError::Timeout("COMMIT did not answer in time (DB_QUERY_TIMEOUT)").into() }),
    }
}

/// within_until runs fut before deadline, or fails as a DB_QUERY_TIMEOUT.
async fn within_until<T>(deadline: Instant, fut: impl std::future::Future<Output = Result<T, Failure>>) -> Result<T, Failure> {
    match tokio::time::timeout_at(deadline, fut).await {
        Ok(r) => r,
        Err(_) => Err(Failure::Refused(ApiError::Db(DbError::Timeout("the database did not answer in time (DB_QUERY_TIMEOUT)")))),
    }
}

/// before_commit runs BEGIN, lock_clients and transfer on conn and returns
/// the ledger id, or the refusal (404, 409) once rolled back. On an error
/// the transaction may still be open: the caller closes the connection.
async fn before_commit(conn: &Object, from: i64, to: i64, amount: i64) -> Result<Result<i64, ApiError>, Failure> {
    let lock = conn.prepare_cached(SQL_LOCK_CLIENTS).await?;
    let transfer = conn.prepare_cached(SQL_TRANSFER).await?;
    let c = conn;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&from, &to];
    let (begun, rows) = tokio::join!(c.batch_execute(SQL_BEGIN), c.query(&lock, &params));
    begun?;
    let rows = rows?;
    let mut payer = None;
    for r in &rows {
        if r.try_get::<_, i64>(0)? == from {
            payer = Some(r.try_get::<_, i64>(1)?);
        }
    }
    let refusal = match payer {
        _ if rows.len() < 2 => Some(client_not_found()),
        Some(b) if b < amount => Some(ApiError::Status(StatusCode::CONFLICT, "insufficient funds".into())),
        _ => None,
    };
    if let Some(e) = refusal {
        c.batch_execute("ROLLBACK").await?;
        return Ok(Err(e));
    }
    let row = c.query_one(&transfer, &[&amount, &from, &amount, &to, &from, &to, &amount]).await?;
    Ok(Ok(row.try_get(0)?))
}
