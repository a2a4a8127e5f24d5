//! The bank workload on PostgreSQL: clients, transfers, balances.

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use deadpool_postgres::Object;
use serde::{Deserialize, Serialize};

use crate::http::{int, json, parse_object, path_int, read_body, within, ApiError, ApiResult, JsonInt, MAX_AMOUNT, MAX_ID};
use crate::App;

// The bank statements, verbatim from workloads/bank/queries.sql.
const SQL_CREATE_CLIENT: &str = "WITH c AS (INSERT INTO client (balance) VALUES ($1) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c";
const SQL_LOCK_CLIENTS: &str = "SELECT id, balance FROM client WHERE id IN ($1, $2) ORDER BY id FOR UPDATE";
const SQL_TRANSFER: &str = "WITH debit AS (UPDATE client SET balance = balance - $1 WHERE id = $2), credit AS (UPDATE client SET balance = balance + $3 WHERE id = $4) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES ($5, $6, $7) RETURNING id";
const SQL_BALANCE: &str = "SELECT balance FROM client WHERE id = $1";

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
pub async fn create_client(State(app): State<App>, p: Result<Path<String>, PathRejection>) -> ApiResult {
    let balance = path_int(p, "balance", 0, MAX_AMOUNT)?;
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
pub async fn balance(State(app): State<App>, p: Result<Path<String>, PathRejection>) -> ApiResult {
    let id = path_int(p, "id", 1, MAX_ID)?;
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
pub async fn transfer(State(app): State<App>, headers: HeaderMap, body: Body) -> ApiResult {
    let raw = read_body(&headers, body).await?;
    let t: TransferRequest = parse_object(&raw)?;
    let from = int(t.from_client_id, "from_client_id", 1, MAX_ID)?;
    let to = int(t.to_client_id, "to_client_id", 1, MAX_ID)?;
    let amount = int(t.amount, "amount", 1, MAX_AMOUNT)?;
    if from == to {
        return Err(ApiError::bad_request("from_client_id and to_client_id must differ"));
    }
    let pg = app.pg.as_ref().ok_or_else(ApiError::not_configured)?;
    let c = pg.acquire().await?;
    let id = within(pg.limits.query, move_money(c, from, to, amount)).await?;
    Ok(json(StatusCode::OK, &TransferBody { id, from_client_id: from, to_client_id: to, amount }))
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
/// transfer, COMMIT), the same statements in the contract's order.
async fn move_money(conn: Object, from: i64, to: i64, amount: i64) -> Result<i64, ApiError> {
    let lock = conn.prepare_cached(SQL_LOCK_CLIENTS).await?;
    let transfer = conn.prepare_cached(SQL_TRANSFER).await?;
    let mut tx = Tx { conn: Some(conn), open: true };
    let c = tx.conn.as_ref().expect("set above");
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
        tx.open = false;
        return Err(e);
    }
    let row = c.query_one(&transfer, &[&amount, &from, &amount, &to, &from, &to, &amount]).await?;
    let id: i64 = row.try_get(0)?;
    c.batch_execute("COMMIT").await?;
    tx.open = false;
    Ok(id)
}
