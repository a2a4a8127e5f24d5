"""The URLconf: every workload's routes, /health, /metrics, and a last
pattern that answers every other path 404 in JSON.

Each route is one async view made by route(): it dispatches on the method
(405 with an Allow header otherwise), answers the contract's errors in
JSON, and names the route's pattern for the metrics. Path parameters are
<str:...> and checked by the views (decimal digits only), so "abc" is a
400 and not a 404, as the contract asks.
"""

from __future__ import annotations

import asyncio
import logging

from django.http import HttpRequest, HttpResponse
from django.urls import path, re_path

from app import bank, db, sku, strings, users
from app.httpjson import ApiError, error_response, json_response
from app.observe import ROUTE_KEY, metrics_text

PING_TIMEOUT = 1.0  # each database ping of /health

errors = logging.getLogger("python-django")


def route(label: str, **methods):
    """route makes the view of one route pattern: methods maps an HTTP
    method to its handler. label is the pattern as the contract writes it
    (/client/{id}/balance), the metrics' route label."""
    allow = ", ".join(methods)

    async def view(request: HttpRequest, **params: str) -> HttpResponse:
        request.scope[ROUTE_KEY] = label
        handler = methods.get(request.method)
        if handler is None:
            return error_response(405, f"method {request.method} not allowed; allowed: {allow}", {"Allow": allow})
        try:
            return await handler(request, **params)
        except ApiError as e:
            return error_response(e.status, e.msg, e.headers)
        except db.DB_ERRORS as e:
            if db.unavailable(e):
                return error_response(503, "database unavailable")  # the driver's text names the address, user and database
            errors.exception("internal error: %s %s", request.method, request.path)
            return error_response(500, "internal error (a bug in the service; see its log)")
        except Exception as e:
            errors.exception("internal error: %s %s", request.method, request.path)
            return error_response(500, f"internal error: {type(e).__name__}")

    view.route_label = label  # what observe.py names a request it answers itself (413)
    return view


async def health(request: HttpRequest) -> HttpResponse:
    # Every configured database must answer a ping within a second.
    for name, pool in (("postgres", db.PG), ("mysql", db.MY)):
        if pool.pool is None:
            continue
        try:
            await pool.ping(PING_TIMEOUT)
        except (*db.DB_ERRORS, asyncio.TimeoutError) as e:
            return error_response(503, f"{name} unavailable ({type(e).__name__})")  # no driver text
    return json_response({"status": "ok"})


async def metrics(request: HttpRequest) -> HttpResponse:
    body, content_type = metrics_text()
    return HttpResponse(body, content_type=content_type)


async def not_found(request: HttpRequest) -> HttpResponse:
    return error_response(404, f"no route for path {request.path}")


urlpatterns = [
    path("uppercase", route("/uppercase", POST=strings.uppercase)),
    path("count", route("/count", POST=strings.count)),
    path("client/new/<str:balance>", route("/client/new/{balance}", POST=bank.create_client)),
    path("transaction", route("/transaction", POST=bank.transfer)),
    path("client/<str:id>/balance", route("/client/{id}/balance", GET=bank.balance)),
    path("user", route("/user", POST=users.create_user)),
    path("user/<str:id>", route("/user/{id}", GET=users.get_user)),
    path("sku/<str:sku_id>", route("/sku/{sku_id}", GET=sku.get_sku)),
    path("health", route("/health", GET=health)),
    path("metrics", route("/metrics", GET=metrics)),
    re_path(r"", not_found),  # every other path: 404 in JSON, counted as "unmatched"
]
