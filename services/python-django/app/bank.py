"""The bank workload: transfers between clients on PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import asyncpg
from django.http import HttpRequest, HttpResponse
from prometheus_client import Counter

from app import db
from app.httpjson import MAX_AMOUNT, MAX_ID, ApiError, NoAnswer, bad_request, get_int, json_response, path_int, read_object

log = logging.getLogger("python-django")

# The bank statements, verbatim from workloads/bank/queries.sql.
SQL_CREATE_CLIENT = "WITH c AS (INSERT INTO client (balance) VALUES ($1) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c"
SQL_LOCK_CLIENTS = "SELECT id, balance FROM client WHERE id IN ($1, $2) ORDER BY id FOR UPDATE"
SQL_TRANSFER = "WITH debit AS (UPDATE client SET balance = balance - $1 WHERE id = $2), credit AS (UPDATE client SET balance = balance + $3 WHERE id = $4) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES ($5, $6, $7) RETURNING id"
SQL_BALANCE = "SELECT balance FROM client WHERE id = $1"
# Run only after a COMMIT that failed: is the transfer's ledger row there?
# The id alone is not enough: after a crash, ids handed out by transactions
# that never committed can be handed out again (the sequence's advance was
# not yet durable either), so another transfer may hold it; the row must be
# this transfer's.
SQL_LEDGER_ROW = "SELECT id FROM transaction WHERE id = $1 AND from_client_id = $2 AND to_client_id = $3 AND amount = $4"

# RESOLVE_TIMEOUT is how long (seconds) after a failed COMMIT the service
# keeps trying to learn its outcome before it closes the client's
# connection without an answer; RESOLVE_PAUSE is the pause between two
# failed attempts.
RESOLVE_TIMEOUT = 30.0
RESOLVE_PAUSE = 0.15

COMMIT_RESOLVED = Counter(
    "bank_commit_resolved", "Transfers whose COMMIT failed, by the outcome the service then found.", ["outcome"]
)

CLIENT_NOT_FOUND = ApiError(404, "client not found")
INSUFFICIENT_FUNDS = ApiError(409, "insufficient funds")
UNAVAILABLE = ApiError(503, "database unavailable")


class InDoubt(Exception):
    """InDoubt is a COMMIT that failed (a broken connection, a timeout, a
    shutdown): the transfer with ledger row tx_id may or may not be
    committed. The connection it ran on is already terminated."""

    def __init__(self, tx_id: int, cause: BaseException) -> None:
        super().__init__(f"COMMIT of ledger row {tx_id} in doubt: {cause!r}")
        self.tx_id = tx_id
        self.cause = cause

async def create_client(request: HttpRequest, balance: str) -> HttpResponse:
    balance = path_int(balance, "balance", 0, MAX_AMOUNT)
    async with db.PG.connection() as conn:
        row = await conn.fetchrow(SQL_CREATE_CLIENT, balance)
    return json_response({"id": row[0], "balance": row[1]})


async def balance(request: HttpRequest, id: str) -> HttpResponse:
    client_id = path_int(id, "id", 1, MAX_ID)
    async with db.PG.connection() as conn:
        value = await conn.fetchval(SQL_BALANCE, client_id)
    if value is None:
        raise CLIENT_NOT_FOUND
    return json_response({"balance": value})


async def transfer(request: HttpRequest) -> HttpResponse:
    obj = read_object(request)
    src = get_int(obj, "from_client_id", 1, MAX_ID)
    dst = get_int(obj, "to_client_id", 1, MAX_ID)
    amount = get_int(obj, "amount", 1, MAX_AMOUNT)
    if src == dst:
        raise bad_request("from_client_id and to_client_id must differ")
    pg = db.PG
    try:
        async with pg.connection() as conn:
            tx_id = await move(conn, src, dst, amount)
    except InDoubt as doubt:
        tx_id = await resolve(pg, src, dst, amount, doubt)
    return json_response({"id": tx_id, "from_client_id": src, "to_client_id": dst, "amount": amount})


async def move(conn, src: int, dst: int, amount: int) -> int:
    """move runs one transfer as one READ COMMITTED transaction and returns
    the ledger id. lock_clients locks both rows in ascending id order, the
    same order for every transfer, so concurrent transfers never deadlock;
    the checks then see committed, locked balances. Any way out of the block
    but its end rolls back (asyncpg's transaction), 404 and 409 included.

    Four round trips: asyncpg sends BEGIN on its own (it has no pipelining
    of a BEGIN with the next statement, as pgjdbc and pgx batches do).

    A COMMIT that fails (the block's end) raises InDoubt, the connection
    terminated: never lent again."""
    tx_id = None
    try:
        async with conn.transaction(isolation="read_committed"):
            rows = await conn.fetch(SQL_LOCK_CLIENTS, src, dst)
            if len(rows) < 2:
                raise CLIENT_NOT_FOUND
            payer = rows[0] if rows[0][0] == src else rows[1]
            if payer[1] < amount:
                raise INSUFFICIENT_FUNDS
            tx_id = await conn.fetchval(SQL_TRANSFER, amount, src, amount, dst, src, dst, amount)
    except Exception as exc:
        if tx_id is None:
            raise  # before the COMMIT: rolled back (or the connection is gone), 503 is the truth
        terminate(conn)
        raise InDoubt(tx_id, exc) from exc
    return tx_id


async def resolve(pg, src: int, dst: int, amount: int, doubt: InDoubt) -> int:
    """resolve answers a transfer whose COMMIT failed with the truth: its
    ledger id when the row exists (200), a 503 when it does not, and
    NoAnswer (the client's connection is closed without a response) when
    the database cannot tell within RESOLVE_TIMEOUT. One log line says
    which."""
    start = time.monotonic()
    deadline = start + RESOLVE_TIMEOUT
    max_attempts = int(RESOLVE_TIMEOUT / RESOLVE_PAUSE) + 1
    error: BaseException | None = None
    committed = False
    attempts = 0
    while attempts < max_attempts:
        attempts += 1
        try:
            async with asyncio.timeout(max(0.001, deadline - time.monotonic())):
                committed = await ledger_row_once(pg, src, dst, amount, doubt.tx_id)
            error = None
            break
        except Exception as exc:  # the database still away: try again
            error = exc
        if time.monotonic() + RESOLVE_PAUSE >= deadline:
            break
        await asyncio.sleep(RESOLVE_PAUSE)
    outcome = "unknown" if error is not None else "committed" if committed else "not_committed"
    COMMIT_RESOLVED.labels(outcome).inc()
    fields = (
        f"outcome={outcome} ledger_id={doubt.tx_id} from_client_id={src} to_client_id={dst} attempts={attempts} "
        f"resolve_ms={int((time.monotonic() - start) * 1000)} commit_error={doubt.cause!r}"
    )
    if error is not None:
        log.warning("in-doubt COMMIT unresolved: closing the client's connection without an answer: %s error=%r", fields, error)
        raise NoAnswer(str(doubt))
    log.warning("in-doubt COMMIT resolved: %s", fields)
    if not committed:
        raise UNAVAILABLE
    return doubt.tx_id


async def ledger_row_once(pg, src: int, dst: int, amount: int, tx_id: int) -> bool:
    """ledger_row_once is one attempt of resolve: a READ COMMITTED
    transaction on a pooled connection that runs lock_clients (it waits
    until the original transaction, should its backend still be alive, has
    ended) and ledger_row, then rolls back. A connection that failed is
    terminated, never lent again."""
    async with pg.connection() as conn:
        tr = conn.transaction(isolation="read_committed")
        try:
            await tr.start()
            await conn.fetch(SQL_LOCK_CLIENTS, src, dst)
            found = await conn.fetchval(SQL_LEDGER_ROW, tx_id, src, dst, amount) is not None
        except BaseException:
            terminate(conn)
            raise
        try:
            await tr.rollback()
        except Exception:
            terminate(conn)  # what was read stands; closing rolls back
        return found


def terminate(conn) -> None:
    """terminate closes conn for good. A connection the server already
    dropped is detached from the pool by asyncpg, and saying so is all its
    terminate() would do then."""
    with contextlib.suppress(asyncpg.InterfaceError):
        conn.terminate()

