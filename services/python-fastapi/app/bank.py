"""The bank workload: transfers between clients on PostgreSQL."""

from __future__ import annotations

from fastapi import FastAPI, Request
from starlette.responses import Response

from app.httpjson import MAX_AMOUNT, MAX_ID, ApiError, bad_request, get_int, json_response, path_int, read_object

# The bank statements, verbatim from workloads/bank/queries.sql.
SQL_CREATE_CLIENT = "WITH c AS (INSERT INTO client (balance) VALUES ($1) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c"
SQL_LOCK_CLIENTS = "SELECT id, balance FROM client WHERE id IN ($1, $2) ORDER BY id FOR UPDATE"
SQL_TRANSFER = "WITH debit AS (UPDATE client SET balance = balance - $1 WHERE id = $2), credit AS (UPDATE client SET balance = balance + $3 WHERE id = $4) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES ($5, $6, $7) RETURNING id"
SQL_BALANCE = "SELECT balance FROM client WHERE id = $1"

CLIENT_NOT_FOUND = ApiError(404, "client not found")
INSUFFICIENT_FUNDS = ApiError(409, "insufficient funds")

async def create_client(request: Request) -> Response:
    balance = path_int(request, "balance", 0, MAX_AMOUNT)
    async with request.app.state.pg.connection() as conn:
        row = await conn.fetchrow(SQL_CREATE_CLIENT, balance)
    return json_response({"id": row[0], "balance": row[1]})


async def balance(request: Request) -> Response:
    client_id = path_int(request, "id", 1, MAX_ID)
    async with request.app.state.pg.connection() as conn:
        value = await conn.fetchval(SQL_BALANCE, client_id)
    if value is None:
        raise CLIENT_NOT_FOUND
    return json_response({"balance": value})


async def transfer(request: Request) -> Response:
    obj = await read_object(request)
    src = get_int(obj, "from_client_id", 1, MAX_ID)
    dst = get_int(obj, "to_client_id", 1, MAX_ID)
    amount = get_int(obj, "amount", 1, MAX_AMOUNT)
    if src == dst:
        raise bad_request("from_client_id and to_client_id must differ")
    async with request.app.state.pg.connection() as conn:
        tx_id = await move(conn, src, dst, amount)
    return json_response({"id": tx_id, "from_client_id": src, "to_client_id": dst, "amount": amount})


async def move(conn, src: int, dst: int, amount: int) -> int:
    """move runs one transfer as one READ COMMITTED transaction and returns
    the ledger id. lock_clients locks both rows in ascending id order, the
    same order for every transfer, so concurrent transfers never deadlock;
    the checks then see committed, locked balances. Any way out of the block
    but its end rolls back (asyncpg's transaction), 404 and 409 included.

    Four round trips: asyncpg sends BEGIN on its own (it has no pipelining
    of a BEGIN with the next statement, as pgjdbc and pgx batches do)."""
    async with conn.transaction(isolation="read_committed"):
        rows = await conn.fetch(SQL_LOCK_CLIENTS, src, dst)
        if len(rows) < 2:
            raise CLIENT_NOT_FOUND
        payer = rows[0] if rows[0][0] == src else rows[1]
        if payer[1] < amount:
            raise INSUFFICIENT_FUNDS
        return await conn.fetchval(SQL_TRANSFER, amount, src, amount, dst, src, dst, amount)


def register(app: FastAPI) -> None:
    """register adds the workload's routes to app itself (an APIRouter
    included in the app adds a layer of route matching per request)."""
    app.post("/client/new/{balance}")(create_client)
    app.get("/client/{id}/balance")(balance)
    app.post("/transaction")(transfer)
