"""The users workload: sign-up on PostgreSQL."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from app import db
from app.httpjson import MAX_ID, ApiError, bad_request, get_str, json_response, path_int, read_object

# The users statements, verbatim from workloads/users/queries.sql.
SQL_CREATE_USER = "INSERT INTO users (email, password) VALUES ($1, $2) RETURNING id"
SQL_GET_USER = "SELECT id, email FROM users WHERE id = $1"

MAX_STRING = 255  # email and password length in code points (varchar(255))
USER_NOT_FOUND = ApiError(404, "user not found")


def bounded(obj: dict, name: str) -> str:
    s = get_str(obj, name)
    if len(s) > MAX_STRING:  # len counts code points
        raise bad_request(f'field "{name}" is {len(s)} code points long, over {MAX_STRING}')
    return s


async def create_user(request: HttpRequest) -> HttpResponse:
    obj = read_object(request)
    email = bounded(obj, "email")
    if "@" not in email:
        raise bad_request('field "email" must contain "@"')
    password = bounded(obj, "password")
    async with db.PG.connection() as conn:
        user_id = await conn.fetchval(SQL_CREATE_USER, email, password)
    return json_response({"id": user_id, "message": "User created"}, 201, {"Location": f"/user/{user_id}"})


async def get_user(request: HttpRequest, id: str) -> HttpResponse:
    user_id = path_int(id, "id", 1, MAX_ID)
    async with db.PG.connection() as conn:
        row = await conn.fetchrow(SQL_GET_USER, user_id)
    if row is None:
        raise USER_NOT_FOUND
    return json_response({"id": row[0], "email": row[1]})
