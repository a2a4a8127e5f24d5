"""The sku workload: a read-heavy lookup on MariaDB/MySQL."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from app import db
from app.httpjson import MAX_ID, ApiError, json_response, path_int

# The sku statement, verbatim from workloads/sku/queries.sql. asyncmy runs
# it as a server-side prepared statement with the native ? placeholder:
# parameters travel in binary, never escaped into the SQL text.
SQL_GET_SKU = "SELECT id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr FROM purch_sku_master WHERE sku_id = ?"

COLUMNS = ("id", "mem_id", "mem_code", "sku_id", "sku_code", "item", "sku_name", "sku_abbr")
SKU_NOT_FOUND = ApiError(404, "sku not found")


async def get_sku(request: HttpRequest, sku_id: str) -> HttpResponse:
    sku_id = path_int(sku_id, "sku_id", 1, MAX_ID)
    async with db.MY.statement(SQL_GET_SKU) as stmt:
        result = await stmt.execute((sku_id,))
    if not result.rows:
        raise SKU_NOT_FOUND
    return json_response(dict(zip(COLUMNS, result.rows[0])))
