"""Metrics, request logs, the body limit and the pools' lifetime: a plain
ASGI wrapper around Django's ASGI handler.

An ASGI wrapper rather than a Django middleware, for what a middleware
cannot see: Django's handler reads the whole body, of any size, before any
middleware runs (so the 1 MiB limit is enforced here, before it), it has no
ASGI lifespan (so the pools open and close here), and a request ended
without an answer (an in-doubt COMMIT, bank.py) never comes back through
the middleware chain. It is the same wrapper as python-fastapi's, so the
two Python stacks are measured the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time

import orjson
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client import multiprocess
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from app import db
from app.httpjson import MAX_BODY_BYTES, NoAnswer

# Finer than the default buckets at the low end, like go-stdlib's: most
# answers here take well under a millisecond.
BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

REQUESTS = Counter("http_requests", "HTTP requests by route pattern and status code.", ["route", "status"])
DURATION = Histogram("http_request_duration_seconds", "HTTP request latency by route pattern.", ["route"], buckets=BUCKETS)


def metrics_text() -> tuple[bytes, str]:
    """metrics_text renders every metric. With several workers
    (PROMETHEUS_MULTIPROC_DIR set by the supervisor), it sums the series of
    all of them from their files, so a scrape that lands on any worker sees
    the whole service."""
    if "PROMETHEUS_MULTIPROC_DIR" in os.environ:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    from prometheus_client import REGISTRY

    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


class _JSONFormatter(logging.Formatter):
    """_JSONFormatter writes a record as one JSON object: time, level, msg
    and the fields passed in extra={"fields": {...}}."""

    def format(self, record: logging.LogRecord) -> str:
        out = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "msg": record.getMessage(),
        }
        out.update(getattr(record, "fields", {}))
        return orjson.dumps(out).decode()


def request_logger() -> logging.Logger:
    """request_logger logs one JSON line per request on stdout."""
    logger = logging.getLogger("python-django.requests")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    if not logger.handlers:
        h = logging.StreamHandler(sys.stdout)
        h.setFormatter(_JSONFormatter())
        logger.addHandler(h)
    return logger


# ROUTE_KEY is the scope key under which a view (urls.route) names the
# route pattern it served.
ROUTE_KEY = "showdown.route"

TOO_LARGE = orjson.dumps({"error": "request body over 1 MiB (1048576 bytes)"})
CUT_SHORT = orjson.dumps({"error": "the request body ended before its Content-Length"})


class Observe:
    """Observe counts and times every request under its route pattern
    ("unmatched" for an unknown path), and logs it when logger is set; it
    reads the body (413 past 1 MiB) before Django does, and opens and
    closes this worker's pools (the ASGI lifespan)."""

    def __init__(self, app, logger: logging.Logger | None) -> None:
        self.app = app
        self.logger = logger
        # Label children by (route, status): prometheus_client's labels()
        # checks and locks on every call; a dict lookup does not.
        self._counters: dict[tuple[str, int], object] = {}
        self._histograms: dict[str, object] = {}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        if not clean_path(scope.get("raw_path") or scope["path"].encode()):
            # /client/../balance does not match a route: 404, as go-stdlib's
            # mux does, rather than {id} = ".." (400).
            await self._not_found(scope, send)
            self._record(scope, 404, start)
            return
        body = await read_body(scope, receive)
        if type(body) is not bytes:
            status, msg = body
            scope[ROUTE_KEY] = route_of(scope["path"])
            await answer(send, status, msg)
            self._record(scope, status, start)
            return
        replayed = False

        async def replay():
            # Django reads the body again through receive: it gets it in
            # one message, then the real receive (a disconnect).
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        status = 0

        async def send_and_record(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif not message.get("more_body", False):
                # Counted before the last byte leaves: a client that reads
                # /metrics right after its answer sees its request counted,
                # whichever worker serves the scrape.
                self._record(scope, status, start)
                status = -1
            await send(message)

        try:
            await self.app(scope, replay, send_and_record)
        except NoAnswer:
            if status == 0:
                await abort(receive, send)
            status = -1  # not counted: no answer
        finally:
            if status != -1:  # no complete answer: the app failed (500) or the client left
                self._record(scope, status or 500, start)

    def _record(self, scope, status: int, start: float) -> None:
        elapsed = time.perf_counter() - start
        label = scope.get(ROUTE_KEY, "unmatched")
        c = self._counters.get((label, status))
        if c is None:
            c = self._counters[(label, status)] = REQUESTS.labels(label, str(status))
        c.inc()
        h = self._histograms.get(label)
        if h is None:
            h = self._histograms[label] = DURATION.labels(label)
        h.observe(elapsed)
        if self.logger is not None:
            self.logger.info(
                "request",
                extra={"fields": {
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 3),
                }},
            )

    @staticmethod
    async def _not_found(scope, send) -> None:
        await answer(send, 404, orjson.dumps({"error": "no route for path " + scope["path"]}))


async def answer(send, status: int, body: bytes) -> None:
    """answer sends a whole JSON response that Django never saw."""
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    })
    await send({"type": "http.response.body", "body": body})


async def read_body(scope, receive) -> bytes | tuple[int, bytes]:
    """read_body reads the request body, at most 1 MiB: a declared or
    actual larger one is (413, error body), one cut short (400, ...). A
    Content-Length over the limit is refused before reading (and so before
    a 100 Continue)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            if value.isdigit() and int(value) > MAX_BODY_BYTES:
                return 413, TOO_LARGE
            break
    chunks = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return 400, CUT_SHORT  # the client left before its body was complete; nobody reads this
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return 413, TOO_LARGE
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def route_of(path: str) -> str:
    """route_of is the route label of path, for a request answered before
    Django routed it (413); "unmatched" when it matches no route."""
    from django.urls import Resolver404, resolve

    try:
        return getattr(resolve(path).func, "route_label", "unmatched")
    except Resolver404:
        return "unmatched"


async def lifespan(receive, send) -> None:
    """lifespan opens this worker's pools at the server's startup and
    closes them at its shutdown (Django's ASGI handler refuses the
    lifespan scope)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await db.PG.open()
                await db.MY.open()
            except Exception as e:
                await send({"type": "lifespan.startup.failed", "message": repr(e)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await db.PG.close()
            await db.MY.close()
            await send({"type": "lifespan.shutdown.complete"})
            return


# ABORT_WAIT bounds the wait for the server to notice the closed connection.
ABORT_WAIT = 1.0


async def abort(receive, send) -> None:
    """abort ends a request without an answer. ASGI has no message for
    that; each server has its own way:

    - uvicorn: the connection's transport (the protocol object behind its
      receive callable) is aborted, so not a byte of a response goes out;
      then receive() reports the disconnect, after which uvicorn writes
      nothing (not even its 500 for an application without a response).
    - granian (no transport within reach): the response is started with a
      Content-Length it never reaches and the application then fails, so
      granian drops the connection mid-body; an HTTP client reports the
      body cut short (no answer), never a whole response.
    """
    transport = getattr(getattr(receive, "__self__", None), "transport", None)
    if transport is not None and hasattr(transport, "abort"):
        transport.abort()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(ABORT_WAIT):
                while (await receive())["type"] != "http.disconnect":
                    pass
        return
    await send({
        "type": "http.response.start",
        "status": 503,
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"1048576")],
    })
    await send({"type": "http.response.body", "body": b"", "more_body": True})
    raise RuntimeError("in-doubt COMMIT unresolved: response cut short on purpose (no answer)")


def clean_path(raw: bytes) -> bool:
    """clean_path reports whether the raw request path has no empty, "." or
    ".." segment (as it came, before percent-decoding: %2e%2e is a value)."""
    p = raw.split(b"?", 1)[0]
    if not p.startswith(b"/"):
        return False
    if b"//" not in p and b"/." not in p:
        return True  # the common case, without splitting
    segments = p[1:].split(b"/")
    for i, seg in enumerate(segments):
        if seg in (b".", b"..") or (seg == b"" and i < len(segments) - 1):
            return False
    return True
