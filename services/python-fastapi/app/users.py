"""The users workload: sign-up on PostgreSQL."""

from __future__ import annotations

from fastapi import FastAPI, Request
from starlette.responses import Response

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


async def create_user(request: Request) -> Response:
    obj = await read_object(request)
    email = bounded(obj, "email")
    if "@" not in email:
        raise bad_request('field "email" must contain "@"')
    password = bounded(obj, "password")
    async with request.app.state.pg.connection() as conn:
        user_id = await conn.fetchval(SQL_CREATE_USER, email, password)
    return json_response({"id": user_id, "message": "User created"}, 201, {"Location": f"/user/{user_id}"})


async def get_user(request: Request) -> Response:
    user_id = path_int(request, "id", 1, MAX_ID)
    async with request.app.state.pg.connection() as conn:
        row = await conn.fetchrow(SQL_GET_USER, user_id)
    if row is None:
        raise USER_NOT_FOUND
    return json_response({"id": row[0], "email": row[1]})


def register(app: FastAPI) -> None:
    """register adds the workload's routes to app itself (an APIRouter
    included in the app adds a layer of route matching per request)."""
    app.post("/user")(create_user)
    app.get("/user/{id}")(get_user)
