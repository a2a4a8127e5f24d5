"""The string workload: POST /uppercase and POST /count, no database."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from app.httpjson import get_str, json_response, read_object


async def uppercase(request: HttpRequest) -> HttpResponse:
    # str.upper is Unicode's full, locale-independent mapping, SpecialCasing
    # included: "straße" -> "STRASSE".
    s = get_str(read_object(request), "s")
    return json_response({"v": s.upper()})


async def count(request: HttpRequest) -> HttpResponse:
    # len counts code points: "😀" is 1.
    s = get_str(read_object(request), "s")
    return json_response({"v": len(s)})
