"""The database pools, made once per worker at startup, and the one place
that tells a database that is down (503) from a bug (500).

Neither pool connects at start: connections open on demand and stay open,
so the service starts, and later recovers, whether or not the database is
up. A request borrows a connection for at most DB_ACQUIRE_TIMEOUT (opening
one included, each open bounded by CONNECT_TIMEOUT): with the defaults a
database that is down costs a request at most 2 s before its 503.

Both pools let a request that arrives while a connection is free take it
ahead of the requests already waiting, and a waiter that loses that race
goes back to the end of the queue: past the pool's size, some requests
wait far longer than the rest and run into the acquire timeout. So a FIFO
semaphore with one permit per connection stands in front of each pool
(asyncio.Semaphore hands a released permit to the oldest waiter): only
requests holding a permit ask the pool, which then always has a connection
for them, and the wait is in arrival order, like go-stdlib's.
"""

# showdown:shared begin db-pools

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import AsyncIterator

import asyncmy
import asyncmy.errors
import asyncpg

from app.config import CONNECT_TIMEOUT, Config
from app.httpjson import NOT_CONFIGURED

log = logging.getLogger("python-fastapi")

# IDLE_CHECK: when no request has finished well for longer (seconds), a
# borrowed connection is pinged within IDLE_PING_TIMEOUT first, as pgx and
# HikariCP check a connection idle over a second. That is how a hung
# database (connections open, nothing answers) gets a 503 in time without
# cutting slow queries short; the pool's idle time stands in for the
# connection's, which neither driver shares.
IDLE_CHECK = 1.0
IDLE_PING_TIMEOUT = 1.0


async def _no_session_state(conn: asyncpg.Connection) -> None:
    """_no_session_state replaces asyncpg's default reset on release, a
    round trip per request (pg_advisory_unlock_all, CLOSE ALL, UNLISTEN *,
    RESET ALL) undoing session state this service never creates. asyncpg
    still rolls back a transaction left open before calling it."""


class Postgres:
    """Postgres is the asyncpg pool with the time bounds of its requests;
    without DATABASE_URL it has no pool and every borrow is a 503
    "database not configured"."""

    def __init__(self, cfg: Config) -> None:
        self.url = cfg.database_url
        self.size = cfg.worker_pool_size
        self.acquire_timeout = cfg.acquire_timeout
        self.query_timeout = cfg.query_timeout
        self.pool: asyncpg.Pool | None = None
        self.gate = asyncio.Semaphore(self.size)
        self.last_ok = 0.0  # time.monotonic() of the last borrow that ended well; 0: none yet

    async def open(self) -> None:
        if not self.url:
            return
        # min_size=0: no connection at start; max_inactive_connection_lifetime=0:
        # keep idle connections. The statement cache (100 per connection)
        # prepares each statement once per connection: later runs are one
        # round trip (Bind, Execute, Sync).
        self.pool = await asyncpg.create_pool(
            self.url,
            min_size=0,
            max_size=self.size,
            max_inactive_connection_lifetime=0,
            timeout=CONNECT_TIMEOUT,
            command_timeout=self.query_timeout,
            reset=_no_session_state,
        )

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[asyncpg.Connection]:
        """connection borrows a connection for the block, waiting at most
        the acquire timeout (a TimeoutError past it: 503)."""
        pool = self.pool
        if pool is None:
            raise NOT_CONFIGURED
        async with asyncio.timeout(self.acquire_timeout):
            await self.gate.acquire()
            try:
                conn = await pool.acquire()
            except BaseException:
                self.gate.release()
                raise
        ok = False
        try:
            if self.last_ok and time.monotonic() - self.last_ok > IDLE_CHECK:
                try:
                    await conn.fetchval("SELECT 1", timeout=IDLE_PING_TIMEOUT)
                except BaseException:
                    conn.terminate()  # never lent again; a reset on release would wait on the database
                    raise
            yield conn
            ok = True
        except BaseException as exc:
            if unavailable(exc):
                # One the database dropped, or out of step with its
                # protocol, is never lent again (it may be gone already).
                with contextlib.suppress(asyncpg.InterfaceError):
                    conn.terminate()
            raise
        finally:
            if ok:
                self.last_ok = time.monotonic()
            try:
                await pool.release(conn)
            finally:
                self.gate.release()

    async def ping(self, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            async with self.connection() as conn:
                await conn.fetchval("SELECT 1")

    async def close(self) -> None:
        if self.pool is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.pool.close(), 1.0)


class MySQL:
    """MySQL is the asyncmy pool. asyncmy's acquire has no time bound of its
    own (and opens connections one at a time under a lock), so the wait for a
    connection is bounded here."""

    def __init__(self, cfg: Config) -> None:
        self.target = cfg.mysql  # None: MYSQL_URL unset
        self.size = cfg.worker_pool_size
        self.acquire_timeout = cfg.acquire_timeout
        self.query_timeout = cfg.query_timeout
        self.pool = None
        self.gate = asyncio.Semaphore(self.size)
        self.last_ok = 0.0  # time.monotonic() of the last borrow that ended well; 0: none yet
        # Prepared statements by connection; a connection the pool drops
        # takes its statements with it.
        self._statements: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    async def open(self) -> None:
        t = self.target
        if t is None:
            return
        self.pool = await asyncmy.create_pool(
            minsize=0,
            maxsize=self.size,
            pool_recycle=3600,
            host=t.host,
            port=t.port,
            user=t.user,
            password=t.password,
            database=t.database,
            connect_timeout=CONNECT_TIMEOUT,
            read_timeout=self.query_timeout,  # safety net for a database that hangs
            autocommit=True,  # a SELECT outside autocommit leaves a transaction open, and the pool then drops the connection
            charset="utf8mb4",
        )

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[asyncmy.Connection]:
        pool = self.pool
        if pool is None:
            raise NOT_CONFIGURED
        async with asyncio.timeout(self.acquire_timeout):
            await self.gate.acquire()
            try:
                conn = await pool.acquire()
            except BaseException:
                self.gate.release()
                raise
        ok = False
        try:
            if self.last_ok and time.monotonic() - self.last_ok > IDLE_CHECK:
                try:
                    await asyncio.wait_for(conn.ping(reconnect=False), IDLE_PING_TIMEOUT)
                except BaseException:
                    conn.close()  # a closed connection is dropped by release
                    raise
            yield conn
            ok = True
        finally:
            if ok:
                self.last_ok = time.monotonic()
            pool.release(conn)
            self.gate.release()

    @contextlib.asynccontextmanager
    async def statement(self, sql: str) -> AsyncIterator[object]:
        """statement borrows a connection for the block and yields sql
        prepared on it: prepared once per connection (lazily, so the service
        starts while the database is down), then one round trip per run, its
        parameters bound in binary by the server."""
        async with self.connection() as conn:
            stmts = self._statements.get(conn)
            if stmts is None:
                stmts = self._statements[conn] = {}
            stmt = stmts.get(sql)
            if stmt is None:
                stmt = stmts[sql] = await conn.prepare(sql)
            yield stmt

    async def ping(self, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            async with self.connection() as conn:
                await conn.ping(reconnect=False)

    async def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.pool.wait_closed(), 1.0)


# MySQL errors that mean the server is down, refusing or overloaded.
_MYSQL_UNAVAILABLE = {
    1040,  # too many connections
    1045,  # access denied
    1053,  # server shutdown in progress
    1077,  # normal shutdown
    1152, 1153, 1158, 1159, 1160, 1161, 1927,  # aborted connection, network errors, killed
    1205,  # lock wait timeout
    2002, 2003, 2006, 2013, 2055,  # client: cannot connect, server gone, connection lost
}

# The exception classes the database drivers raise; db_error sorts them.
DB_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.exceptions.InternalClientError, asyncmy.errors.Error, OSError, RuntimeError)


def unavailable(exc: BaseException) -> bool:
    """unavailable reports whether exc means the database is down,
    unreachable, refusing connections or too slow (503), rather than a bug."""
    if isinstance(exc, asyncpg.PostgresError):
        state = getattr(exc, "sqlstate", "") or ""
        return state.startswith(("08", "53", "57P")) or state in ("28P01", "28000")
    if isinstance(exc, asyncpg.exceptions.InternalClientError):
        # asyncpg's protocol out of step with its connection, as after the
        # server ended the session (57P01, a crash) between two statements:
        # the connection is unusable, the database is what went away.
        return True
    if isinstance(exc, asyncpg.InterfaceError):
        # A connection closed under a request, or the pool closing at exit.
        # "another operation is in progress": a statement (a ROLLBACK on the
        # way out of a transaction) on a connection whose last operation the
        # lost connection cut short.
        return (
            isinstance(exc, asyncpg.exceptions.ConnectionDoesNotExistError)
            or "closed" in str(exc)
            or "closing" in str(exc)
            or "another operation is in progress" in str(exc)
        )
    if isinstance(exc, asyncmy.errors.Error):
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
        return code in _MYSQL_UNAVAILABLE or isinstance(exc, asyncmy.errors.InterfaceError)
    if isinstance(exc, RuntimeError):
        return "closing pool" in str(exc)  # asyncmy after close
    # OSError covers refused and reset connections, name lookups and
    # TimeoutError (the acquire bound; asyncio.TimeoutError is the same class).
    return isinstance(exc, OSError)
# showdown:shared end db-pools
