"""JSON in and out, and the contract's input rules (workloads/README.md):
the request body (1 MiB at most), I-JSON integers, strings and path
parameters, and the one error shape, {"error": "..."}.

Bodies are parsed by hand with orjson rather than through a Django form or
a serializer library: the contract's integers are I-JSON (10.0 and 1e1 are
10, "10" and true are 400), and a failure must be a 400 with the error
shape. The 1 MiB limit is enforced before Django reads the body (the ASGI
wrapper in observe.py), so a view only ever sees a body within it.
"""

from __future__ import annotations

import orjson
from django.http import HttpRequest, HttpResponse

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
NOT_OBJECT = ApiError(400, "the request body must be a JSON object")


def json_response(value: object, status: int = 200, headers: dict[str, str] | None = None) -> HttpResponse:
    """json_response encodes value with orjson (UTF-8, no spaces). The
    Content-Length is set here, as Django's CommonMiddleware would (it is
    not in the chain: see settings.py); without it the server answers
    with a chunked body."""
    body = orjson.dumps(value)
    r = HttpResponse(body, status=status, content_type="application/json", headers=headers)
    r.headers["Content-Length"] = str(len(body))
    return r


def error_response(status: int, msg: str, headers: dict[str, str] | None = None) -> HttpResponse:
    return json_response({"error": msg}, status, headers)


def read_object(request: HttpRequest) -> dict:
    """read_object parses the body (already within 1 MiB: observe.py) as a
    JSON object. Duplicate keys: orjson keeps the last, as the contract
    allows."""
    try:
        obj = orjson.loads(request.body)
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


def path_int(raw: str, name: str, lo: int, hi: int) -> int:
    """path_int reads the path parameter name (the URL pattern's <str:...>,
    which Django has percent-decoded): decimal digits only (ASCII), at most
    16, within [lo, hi]."""
    if not (0 < len(raw) <= MAX_PATH_DIGITS and raw.isascii() and raw.isdigit()):
        raise bad_request(f'path parameter "{name}" must be 1 to {MAX_PATH_DIGITS} decimal digits')
    v = int(raw)
    if v < lo or v > hi:
        raise bad_request(f'path parameter "{name}" is out of range {lo} .. {hi}')
    return v
