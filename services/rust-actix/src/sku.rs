//! The sku workload on MariaDB/MySQL: a read-heavy lookup.

use actix_web::http::StatusCode;
use actix_web::HttpRequest;
use mysql_async::prelude::Queryable;
use serde::Serialize;

use crate::http::{json, path_int, within, ApiError, ApiResult, MAX_ID};
use crate::App;

/// SQL_GET_SKU is the sku statement, verbatim from workloads/sku/queries.sql.
/// mysql_async prepares it once per connection (its statement cache) and
/// then runs it with one round trip; parameters are always bound by the server.
const SQL_GET_SKU: &str = "SELECT id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr FROM purch_sku_master WHERE sku_id = ?";

/// SkuBody is one purch_sku_master row.
#[derive(Serialize)]
struct SkuBody {
    id: i64,
    mem_id: i64,
    mem_code: String,
    sku_id: i64,
    sku_code: String,
    item: String,
    sku_name: String,
    sku_abbr: String,
}

type SkuRow = (i64, i64, String, i64, String, String, String, String);

/// get answers GET /sku/{sku_id}.
pub async fn get(app: App, req: HttpRequest) -> ApiResult {
    let sku_id = path_int(&req, "sku_id", 1, MAX_ID)?;
    let my = app.my.as_ref().ok_or_else(ApiError::not_configured)?;
    let mut c = my.acquire().await?;
    let row: Option<SkuRow> = within(my.limits.query, async { Ok(c.exec_first(SQL_GET_SKU, (sku_id,)).await?) }).await?;
    let (id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr) = row.ok_or_else(|| ApiError::not_found("sku not found"))?;
    Ok(json(StatusCode::OK, &SkuBody { id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr }))
}
