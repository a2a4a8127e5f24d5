"""The FastAPI application: every workload's routes, /health, /metrics,
the contract's error answers, and the pools' lifetime."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from app import bank, sku, strings, users
from app.config import Config
from app.db import DB_ERRORS, MySQL, Postgres, unavailable
from app.httpjson import ApiError, error_response, json_response
from app.observe import Observe, metrics_text, request_logger

PING_TIMEOUT = 1.0  # each database ping of /health

errors = logging.getLogger("python-fastapi")


def create_app(cfg: Config):
    """create_app builds the ASGI application for cfg: FastAPI wrapped in
    the metrics and logging layer."""
    pg, my = Postgres(cfg), MySQL(cfg)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        await pg.open()
        await my.open()
        try:
            yield
        finally:
            await pg.close()
            await my.close()

    app = FastAPI(
        lifespan=lifespan,
        # The contract has no /docs, /redoc or /openapi.json: unknown paths are 404.
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        # /health/ is 404 in the contract, not a redirect to /health.
        redirect_slashes=False,
        # No OpenTelemetry spans or metrics per request: /metrics is
        # Prometheus (below) and no exporter is configured.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.pg = pg
    app.state.my = my
    for module in (strings, bank, users, sku):
        module.register(app)

    @app.get("/health")
    async def health(request: Request) -> Response:
        # Every configured database must answer a ping within a second.
        for name, db in (("postgres", pg), ("mysql", my)):
            if db.pool is None:
                continue
            try:
                await db.ping(PING_TIMEOUT)
            except (*DB_ERRORS, asyncio.TimeoutError) as e:
                return error_response(503, f"{name} unavailable ({type(e).__name__})")  # no driver text
        return json_response({"status": "ok"})

    @app.get("/metrics")
    async def metrics() -> Response:
        body, content_type = metrics_text()
        return Response(body, 200, media_type=content_type)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> Response:
        return error_response(exc.status, exc.msg, exc.headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        # The router's own 404 (no route) and 405 (with its Allow header).
        if exc.status_code == 404:
            msg = f"no route for path {request.url.path}"
        elif exc.status_code == 405:
            msg = f"method {request.method} not allowed; allowed: {(exc.headers or {}).get('Allow', '')}"
        else:
            msg = str(exc.detail)
        return error_response(exc.status_code, msg, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        # FastAPI's default is 422 with its own shape; the contract says 400.
        return error_response(400, f"invalid request: {exc.errors()}")

    async def db_error(request: Request, exc: Exception) -> Response:
        if unavailable(exc):
            return error_response(503, "database unavailable")  # the driver's text names the address, user and database
        errors.error("internal error: %s %s: %r", request.method, request.url.path, exc)
        return error_response(500, "internal error (a bug in the service; see its log)")

    for cls in DB_ERRORS:
        app.add_exception_handler(cls, db_error)

    @app.exception_handler(Exception)
    async def bug(request: Request, exc: Exception) -> Response:
        # Starlette logs the traceback after this answer.
        return error_response(500, f"internal error: {type(exc).__name__}")

    return Observe(app, request_logger() if cfg.log_requests else None)
