//! The contract's HTTP rules shared by every workload: JSON responses and
//! errors, request bodies (1 MiB, JSON objects only), I-JSON integers and
//! path parameters.

use std::borrow::Cow;
use std::fmt;

use actix_web::body::SizedStream;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use crate::db::DbError;

/// Limits from the contract (workloads/README.md).
pub const MAX_BODY_BYTES: usize = 1 << 20; // 1 MiB: a larger body is 413
/// MAX_ID is the largest id: 2^53-1.
pub const MAX_ID: i64 = (1 << 53) - 1;
/// MAX_AMOUNT bounds balances and amounts: 10^12.
pub const MAX_AMOUNT: i64 = 1_000_000_000_000;
/// MAX_PATH_DIGITS bounds a path parameter's length.
pub const MAX_PATH_DIGITS: usize = 16;

/// ApiError is a failure with the status and message the client gets, or a
/// database failure that is mapped to 503 (unavailable) or 500 (a bug).
/// actix-web turns it into its answer through ResponseError.
#[derive(Debug)]
pub enum ApiError {
    /// Status is an answer the contract names: 400, 404, 409, 413, 503.
    Status(StatusCode, Cow<'static, str>),
    /// Db is a database error, classified when answered.
    Db(DbError),
}

impl ApiError {
    /// bad_request is a 400 with a message for a person.
    pub fn bad_request(msg: impl Into<Cow<'static, str>>) -> Self {
        ApiError::Status(StatusCode::BAD_REQUEST, msg.into())
    }

    /// not_found is a 404.
    pub fn not_found(msg: &'static str) -> Self {
        ApiError::Status(StatusCode::NOT_FOUND, Cow::Borrowed(msg))
    }

    /// not_configured answers a workload whose database URL is unset.
    pub fn not_configured() -> Self {
        ApiError::Status(StatusCode::SERVICE_UNAVAILABLE, Cow::Borrowed("database not configured"))
    }

    fn too_large() -> Self {
        ApiError::Status(StatusCode::PAYLOAD_TOO_LARGE, Cow::Borrowed("request body over 1 MiB (1048576 bytes)"))
    }

    fn not_object() -> Self {
        ApiError::bad_request("the request body must be a JSON object")
    }
}

impl<E: Into<DbError>> From<E> for ApiError {
    fn from(e: E) -> Self {
        ApiError::Db(e.into())
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiError::Status(s, m) => write!(f, "{}: {m}", s.as_u16()),
            ApiError::Db(e) => write!(f, "{e}"),
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Status(s, _) => *s,
            ApiError::Db(e) if e.unavailable() => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Db(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            ApiError::Status(status, msg) => error_response(*status, msg),
            // The driver's text (address, user and database names, SQL)
            // stays out of the answer.
            ApiError::Db(e) if e.unavailable() => error_response(StatusCode::SERVICE_UNAVAILABLE, "database unavailable"),
            ApiError::Db(e) => {
                tracing::error!(error = %e, "internal error");
                error_response(StatusCode::INTERNAL_SERVER_ERROR, "internal error (a bug in the service; see its log)")
            }
        }
    }
}

/// ApiResult is what every handler returns.
pub type ApiResult = Result<HttpResponse, ApiError>;

/// no_answer is the response to a request whose truth is unknown (an
/// in-doubt COMMIT that could not be resolved): actix-web has no way to
/// close a connection without answering, so the answer announces a body
/// of 1 MiB and its body fails at once. The dispatcher then drops the
/// connection: the client reads at most a head and a body cut short,
/// which no HTTP client takes for an answer.
pub fn no_answer() -> HttpResponse {
    let body = futures_util::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::other("in-doubt COMMIT unresolved: no answer"))
    });
    HttpResponse::build(StatusCode::SERVICE_UNAVAILABLE)
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .body(SizedStream::new(MAX_BODY_BYTES as u64, body))
}

/// within runs a request's database work under the limits.query safety net.
pub async fn within<T>(d: std::time::Duration, fut: impl std::future::Future<Output = Result<T, ApiError>>) -> Result<T, ApiError> {
    match tokio::time::timeout(d, fut).await {
        Ok(r) => r,
        Err(_) => Err(ApiError::Db(DbError::Timeout("the database did not answer in time (DB_QUERY_TIMEOUT)"))),
    }
}

/// ErrorBody is the JSON shape of every error.
#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

/// error_response is the JSON error {"error": msg} with status.
pub fn error_response(status: StatusCode, msg: &str) -> HttpResponse {
    json(status, &ErrorBody { error: msg })
}

/// json writes v as the whole body; actix-http adds its Content-Length.
pub fn json<T: Serialize + ?Sized>(status: StatusCode, v: &T) -> HttpResponse {
    let mut buf = Vec::with_capacity(128);
    if let Err(e) = serde_json::to_writer(&mut buf, v) {
        // Only our own types are encoded here: this is a bug.
        tracing::error!(error = %e, "encode response");
        buf.clear();
        buf.extend_from_slice(br#"{"error":"internal error: cannot encode the response"}"#);
        return with_json(StatusCode::INTERNAL_SERVER_ERROR, buf);
    }
    with_json(status, buf)
}

fn with_json(status: StatusCode, body: Vec<u8>) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .body(body)
}

/// read_body reads the request body, at most 1 MiB: a declared or actual
/// larger body is 413. The handlers take the raw payload rather than
/// actix-web's Bytes or Json extractors, whose errors are plain text.
pub async fn read_body(req: &HttpRequest, mut payload: web::Payload) -> Result<Bytes, ApiError> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = declared {
        if n > MAX_BODY_BYTES as u64 {
            return Err(ApiError::too_large());
        }
    }
    let mut buf = BytesMut::with_capacity(declared.map_or(1024, |n| n as usize));
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::bad_request(format!("cannot read the request body: {e}")))?;
        if buf.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ApiError::too_large());
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// parse_object decodes body, which must be a JSON object, into T. serde
/// matches keys exactly (so "S" is not "s"), ignores unknown ones and
/// rejects a duplicate key (the contract allows 400 there). A derived
/// struct would also accept a JSON array, so the first byte is checked.
pub fn parse_object<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, ApiError> {
    match body.iter().find(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r')) {
        Some(b'{') => {}
        Some(_) if serde_json::from_slice::<de::IgnoredAny>(body).is_ok() => return Err(ApiError::not_object()),
        _ => {
            let msg = match serde_json::from_slice::<de::IgnoredAny>(body) {
                Err(e) => format!("malformed JSON: {e}"),
                Ok(_) => "malformed JSON".to_owned(),
            };
            return Err(ApiError::bad_request(msg));
        }
    }
    serde_json::from_slice(body).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => ApiError::bad_request(format!("invalid field: {e}")),
        _ => ApiError::bad_request(format!("malformed JSON: {e}")),
    })
}

/// required returns the field's value or the 400 that names it.
pub fn required<T>(v: Option<T>, name: &'static str) -> Result<T, ApiError> {
    v.ok_or_else(|| ApiError::bad_request(format!("field \"{name}\" is required")))
}

/// text checks a string field: non-empty and free of U+0000.
pub fn text<'a>(v: Option<Cow<'a, str>>, name: &'static str) -> Result<Cow<'a, str>, ApiError> {
    let s = required(v, name)?;
    if s.is_empty() {
        return Err(ApiError::bad_request(format!("field \"{name}\" must not be empty")));
    }
    if s.as_bytes().contains(&0) {
        return Err(ApiError::bad_request(format!("field \"{name}\" must not contain U+0000")));
    }
    Ok(s)
}

/// JsonInt is a JSON number read as an IEEE-754 double, as JavaScript does
/// (I-JSON, RFC 7493): 10, 10.0 and 1e1 are the same value.
#[derive(Clone, Copy, Debug)]
pub struct JsonInt(f64);

impl<'de> Deserialize<'de> for JsonInt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = JsonInt;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<JsonInt, E> {
                Ok(JsonInt(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<JsonInt, E> {
                Ok(JsonInt(v as f64)) // rounds to nearest, as JavaScript reads the text
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<JsonInt, E> {
                Ok(JsonInt(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// int checks an integer field: present, integral and within [lo, hi].
pub fn int(v: Option<JsonInt>, name: &'static str, lo: i64, hi: i64) -> Result<i64, ApiError> {
    let JsonInt(f) = required(v, name)?;
    if f != f.trunc() {
        return Err(ApiError::bad_request(format!("field \"{name}\" must be an integer, not {f}")));
    }
    // lo and hi are at most 2^53 in magnitude, so they are exact doubles.
    if f < lo as f64 || f > hi as f64 {
        return Err(ApiError::bad_request(format!("field \"{name}\" is out of range {lo} .. {hi}")));
    }
    Ok(f as i64)
}

/// path_int reads the path parameter name of the matched route: decimal
/// digits only, at most 16, within [lo, hi].
pub fn path_int(req: &HttpRequest, name: &'static str, lo: i64, hi: i64) -> Result<i64, ApiError> {
    digits(req.match_info().get(name), name, lo, hi)
}

fn digits(s: Option<&str>, name: &'static str, lo: i64, hi: i64) -> Result<i64, ApiError> {
    let bad = || ApiError::bad_request(format!("path parameter \"{name}\" must be 1 to {MAX_PATH_DIGITS} decimal digits"));
    let s = s.ok_or_else(bad)?;
    if s.is_empty() || s.len() > MAX_PATH_DIGITS || !s.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let v: i64 = s.parse().map_err(|_| bad())?; // 16 digits always fit
    if v < lo || v > hi {
        return Err(ApiError::bad_request(format!("path parameter \"{name}\" is out of range {lo} .. {hi}")));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct T {
        n: Option<JsonInt>,
    }

    fn n(body: &str) -> Result<i64, String> {
        let t: T = parse_object(body.as_bytes()).map_err(|e| format!("{e:?}"))?;
        int(t.n, "n", 1, MAX_ID).map_err(|e| format!("{e:?}"))
    }

    #[test]
    fn ijson_integers() {
        for (body, want) in [
            (r#"{"n":10}"#, Some(10)),                   // plain
            (r#"{"n":10.0}"#, Some(10)),                 // integral double
            (r#"{"n":1e1}"#, Some(10)),                  // exponent
            (r#"{"n":9007199254740991}"#, Some(MAX_ID)), // 2^53-1, the top
            (r#"{"n":9007199254740993}"#, None),         // rounds to 2^53: out of range
            (r#"{"n":10.5}"#, None),                     // fraction
            (r#"{"n":"10"}"#, None),                     // string
            (r#"{"n":true}"#, None),                     // boolean
            (r#"{"n":null}"#, None),                     // null reads as missing
            (r#"{"n":0}"#, None),                        // below the range
            (r#"{"n":-1}"#, None),                       // negative
            (r#"{"n":1e400}"#, None),                    // overflows a double
            (r#"[1]"#, None),                            // not an object
            (r#"{"n":1,"n":2}"#, None),                  // duplicate key: 400
        ] {
            assert_eq!(n(body).ok(), want, "{body}");
        }
    }

    #[test]
    fn path_params() {
        let p = |s: &str| digits(Some(s), "id", 1, MAX_ID).ok();
        assert_eq!(p("42"), Some(42));
        assert_eq!(p("0042"), Some(42)); // leading zeros are digits
        assert_eq!(p("0"), None); // below 1
        assert_eq!(p("-1"), None);
        assert_eq!(p("1.5"), None);
        assert_eq!(p(".."), None);
        assert_eq!(p("12345678901234567"), None); // 17 digits
        assert_eq!(p("9007199254740992"), None); // 2^53
    }
}
