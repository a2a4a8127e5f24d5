//! The users workload on PostgreSQL: sign-up and look-up.

use std::borrow::Cow;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use serde::{Deserialize, Serialize};

use crate::http::{json, parse_object, path_int, read_body, text, within, ApiError, ApiResult, MAX_ID};
use crate::App;

// The users statements, verbatim from workloads/users/queries.sql.
const SQL_CREATE_USER: &str = "INSERT INTO users (email, password) VALUES ($1, $2) RETURNING id";
const SQL_GET_USER: &str = "SELECT id, email FROM users WHERE id = $1";

/// MAX_STRING_CHARS bounds email and password: the varchar(255) columns.
const MAX_STRING_CHARS: usize = 255;

#[derive(Deserialize)]
struct SignUp<'a> {
    #[serde(borrow)]
    email: Option<Cow<'a, str>>,
    #[serde(borrow)]
    password: Option<Cow<'a, str>>,
}

#[derive(Serialize)]
struct Created {
    id: i64,
    message: &'static str,
}

/// UserBody is the answer of GET /user/{id}: never the password.
#[derive(Serialize)]
struct UserBody {
    id: i64,
    email: String,
}

/// bounded_text reads a users string field: non-empty, free of U+0000 and
/// at most 255 code points.
fn bounded_text<'a>(v: Option<Cow<'a, str>>, name: &'static str) -> Result<Cow<'a, str>, ApiError> {
    let s = text(v, name)?;
    let n = s.chars().count();
    if n > MAX_STRING_CHARS {
        return Err(ApiError::bad_request(format!("field \"{name}\" is {n} code points long, over {MAX_STRING_CHARS}")));
    }
    Ok(s)
}

/// create answers POST /user with 201 and a Location.
pub async fn create(app: App, req: HttpRequest, body: web::Payload) -> ApiResult {
    let raw = read_body(&req, body).await?;
    let u: SignUp = parse_object(&raw)?;
    let email = bounded_text(u.email, "email")?;
    if !email.contains('@') {
        return Err(ApiError::bad_request("field \"email\" must contain \"@\""));
    }
    let password = bounded_text(u.password, "password")?;
    let pg = app.pg.as_ref().ok_or_else(ApiError::not_configured)?;
    let c = pg.acquire().await?;
    let row = within(pg.limits.query, async {
        let st = c.prepare_cached(SQL_CREATE_USER).await?;
        Ok(c.query_one(&st, &[&&*email, &&*password]).await?)
    })
    .await?;
    let id: i64 = row.try_get(0)?;
    let mut r = json(StatusCode::CREATED, &Created { id, message: "User created" });
    let loc = HeaderValue::try_from(format!("/user/{id}")).expect("digits are a valid header value");
    r.headers_mut().insert(header::LOCATION, loc);
    Ok(r)
}

/// get answers GET /user/{id}.
pub async fn get(app: App, req: HttpRequest) -> ApiResult {
    let id = path_int(&req, "id", 1, MAX_ID)?;
    let pg = app.pg.as_ref().ok_or_else(ApiError::not_configured)?;
    let c = pg.acquire().await?;
    let row = within(pg.limits.query, async {
        let st = c.prepare_cached(SQL_GET_USER).await?;
        Ok(c.query_opt(&st, &[&id]).await?)
    })
    .await?;
    let row = row.ok_or_else(|| ApiError::not_found("user not found"))?;
    Ok(json(StatusCode::OK, &UserBody { id: row.try_get(0)?, email: row.try_get(1)? }))
}
