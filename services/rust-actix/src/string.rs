//! The string workload: POST /uppercase and POST /count, no database.

use std::borrow::Cow;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use serde::{Deserialize, Serialize};

use crate::http::{json, parse_object, read_body, text, ApiResult};

/// SBody is the request of both endpoints.
#[derive(Deserialize)]
struct SBody<'a> {
    #[serde(borrow)]
    s: Option<Cow<'a, str>>,
}

/// Answer is {"v": ...}.
#[derive(Serialize)]
struct Answer<T> {
    v: T,
}

/// uppercase answers {"v": s upper-cased}.
pub async fn uppercase(req: HttpRequest, body: web::Payload) -> ApiResult {
    let raw = read_body(&req, body).await?;
    let b: SBody = parse_object(&raw)?;
    let s = text(b.s, "s")?;
    Ok(json(StatusCode::OK, &Answer { v: to_upper(&s) }))
}

/// count answers {"v": the number of code points of s}.
pub async fn count(req: HttpRequest, body: web::Payload) -> ApiResult {
    let raw = read_body(&req, body).await?;
    let b: SBody = parse_object(&raw)?;
    let s = text(b.s, "s")?;
    Ok(json(StatusCode::OK, &Answer { v: s.chars().count() }))
}

/// to_upper applies Unicode's full, locale-independent upper-case mapping,
/// SpecialCasing included ("straße" -> "STRASSE"), which is what
/// str::to_uppercase does. ASCII text, the common case, takes a byte loop.
fn to_upper(s: &str) -> String {
    if s.is_ascii() { s.to_ascii_uppercase() } else { s.to_uppercase() }
}

#[cfg(test)]
mod tests {
    use super::to_upper;

    #[test]
    fn upper() {
        for (s, want) in [
            ("hello", "HELLO"),       // ASCII
            ("straße", "STRASSE"),    // SpecialCasing: one to two
            ("ǆ", "Ǆ"),               // a digraph
            ("ﬁ", "FI"),              // a ligature
            ("istanbul", "ISTANBUL"), // not Turkish
            ("a😀b", "A😀B"),         // outside the BMP
        ] {
            assert_eq!(to_upper(s), want, "{s}");
        }
    }
}
