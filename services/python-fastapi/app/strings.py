"""The string workload: POST /uppercase and POST /count, no database."""

from __future__ import annotations

from fastapi import FastAPI, Request
from starlette.responses import Response

from app.httpjson import get_str, json_response, read_object

async def uppercase(request: Request) -> Response:
    # str.upper is Unicode's full, locale-independent mapping, SpecialCasing
    # included: "straße" -> "STRASSE".
    s = get_str(await read_object(request), "s")
    return json_response({"v": s.upper()})


async def count(request: Request) -> Response:
    # len counts code points: "😀" is 1.
    s = get_str(await read_object(request), "s")
    return json_response({"v": len(s)})


def register(app: FastAPI) -> None:
    """register adds the workload's routes to app itself (an APIRouter
    included in the app adds a layer of route matching per request)."""
    app.post("/uppercase")(uppercase)
    app.post("/count")(count)
