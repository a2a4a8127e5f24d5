"""JSON in and out, and the contract's input rules (workloads/README.md):
the request body (1 MiB at most), I-JSON integers, strings and path
parameters, and the one error shape, {"error": "..."}.

Bodies are parsed by hand with orjson rather than bound to pydantic models:
the contract's integers are I-JSON (10.0 and 1e1 are 10, "10" and true are
400), which neither pydantic's lax mode (accepts "10") nor its strict mode
(refuses 10.0) gives, and a failure must be a 400 with the error shape,
not FastAPI's 422 with its own.
"""

from __future__ import annotations

import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

MAX_BODY_BYTES = 1 << 20  # 1 MiB: a larger body is 413
MAX_ID = (1 << 53) - 1  # ids are in 1 .. 2^53-1
MAX_AMOUNT = 1_000_000_000_000  # balances and amounts are at most 10^12
MAX_PATH_DIGITS = 16  # path parameters have at most 16 digits


class ApiError(Exception):
    """ApiError is a failure with the status and message the client gets."""

    def __init__(self, status: int, msg: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(msg)
        self.status = status
        self.msg = msg
        self.headers = headers


class NoAnswer(BaseException):
    """NoAnswer ends a request without any answer: the front (Observe)
    closes the client's connection instead of writing a response. A
    BaseException, so no exception handler of the framework turns it into
    a 500."""


def bad_request(msg: str) -> ApiError:
    return ApiError(400, msg)


NOT_CONFIGURED = ApiError(503, "database not configured")
TOO_LARGE = ApiError(413, "request body over 1 MiB (1048576 bytes)")
NOT_OBJECT = ApiError(400, "the request body must be a JSON object")
CUT_SHORT = ApiError(400, "the request body ended before its Content-Length")


class JSON(Response):
    """JSON is a response whose content is already encoded JSON bytes."""

    media_type = "application/json"


def json_response(value: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """json_response encodes value with orjson (UTF-8, no spaces)."""
    return JSON(orjson.dumps(value), status, headers)


def error_response(status: int, msg: str, headers: dict[str, str] | None = None) -> Response:
    return JSON(orjson.dumps({"error": msg}), status, headers)


async def read_object(request: Request) -> dict:
    """read_object reads the body (at most 1 MiB, else 413) as a JSON object.

    A Content-Length over the limit is refused before reading (and so before
    a 100 Continue). Duplicate keys: orjson keeps the last, as the contract
    allows."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
        raise TOO_LARGE
    chunks = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise TOO_LARGE
            chunks.append(chunk)
    except ClientDisconnect:
        # The client closed before the body it announced was complete.
        raise CUT_SHORT from None
    body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise bad_request(f"malformed JSON: {e}") from None
    if type(obj) is not dict:
        raise NOT_OBJECT
    return obj


def _kind(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return "a number"


def get_int(obj: dict, name: str, lo: int, hi: int) -> int:
    """get_int reads the integer field name, following I-JSON (RFC 7493):
    the number is read as an IEEE-754 double, as JavaScript does, and must be
    integral and within [lo, hi]. So 10, 10.0 and 1e1 are the same value, and
    9007199254740993 (which rounds to 2^53) is out of range."""
    if name not in obj:
        raise bad_request(f'field "{name}" is required')
    v = obj[name]
    t = type(v)
    if t is not int and t is not float:  # bool is a subclass of int: refused here
        raise bad_request(f'field "{name}" must be an integer, not {_kind(v)}')
    try:
        f = float(v)  # an int beyond a double's range raises OverflowError
    except OverflowError:
        raise bad_request(f'field "{name}" is out of range {lo} .. {hi}') from None
    if not f.is_integer():  # also false for inf and nan
        if f != f or f in (float("inf"), float("-inf")):
            raise bad_request(f'field "{name}" is out of range {lo} .. {hi}')
        raise bad_request(f'field "{name}" must be an integer, not {v!r}')
    if f < lo or f > hi:
        raise bad_request(f'field "{name}" is out of range {lo} .. {hi}')
    return int(f)


def get_str(obj: dict, name: str) -> str:
    """get_str reads the string field name: present, a string, not empty, no
    U+0000 (PostgreSQL cannot store it)."""
    if name not in obj:
        raise bad_request(f'field "{name}" is required')
    v = obj[name]
    if type(v) is not str:
        raise bad_request(f'field "{name}" must be a string, not {_kind(v)}')
    if not v:
        raise bad_request(f'field "{name}" must not be empty')
    if "\x00" in v:
        raise bad_request(f'field "{name}" must not contain U+0000')
    return v


def path_int(request: Request, name: str, lo: int, hi: int) -> int:
    """path_int reads the path parameter name: decimal digits only (ASCII),
    at most 16, within [lo, hi]."""
    raw = request.path_params[name]
    if not (0 < len(raw) <= MAX_PATH_DIGITS and raw.isascii() and raw.isdigit()):
        raise bad_request(f'path parameter "{name}" must be 1 to {MAX_PATH_DIGITS} decimal digits')
    v = int(raw)
    if v < lo or v > hi:
        raise bad_request(f'path parameter "{name}" is out of range {lo} .. {hi}')
    return v
