"""The string workload: POST /uppercase and POST /count, no database."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from app.httpjson import get_str, json_response, read_object

router = APIRouter()


@router.post("/uppercase")
async def uppercase(request: Request) -> Response:
    # str.upper is Unicode's full, locale-independent mapping, SpecialCasing
    # included: "straße" -> "STRASSE".
    s = get_str(await read_object(request), "s")
    return json_response({"v": s.upper()})


@router.post("/count")
async def count(request: Request) -> Response:
    # len counts code points: "😀" is 1.
    s = get_str(await read_object(request), "s")
    return json_response({"v": len(s)})
