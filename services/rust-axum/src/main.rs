//! The showdown contract (workloads/README.md) on axum and tokio: the
//! string, bank, users and sku workloads in one process, tokio-postgres
//! with a deadpool pool for PostgreSQL, mysql_async for MariaDB, the
//! prometheus crate for /metrics and tracing for request logs.

mod bank;
mod db;
mod http;
mod observe;
mod sku;
mod string;
mod users;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use axum::response::Response;
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tower::util::MapResponseLayer;
use tracing_subscriber::fmt::writer::MakeWriterExt;

use crate::db::{Limits, Mysql, Postgres};
use crate::http::{error_response, json};
use crate::observe::{Front, Metrics, RouteLabel};

/// mimalloc: small, fast thread-local allocation for the many short-lived
/// buffers of a request (see README: allocator).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

// Shutdown timing. The contract allows 10 s from SIGTERM to exit, pools
// included: DRAIN_WINDOW + SHUTDOWN_GRACE + POOL_CLOSE_WAIT stays under it.

/// DRAIN_WINDOW is how long, after SIGTERM, the server keeps serving the
/// connections it has (answering with "Connection: close") before it closes
/// the idle ones. Closing at once would reset a keep-alive connection whose
/// next request already sits unread in its socket buffer.
const DRAIN_WINDOW: Duration = Duration::from_millis(500);
/// SHUTDOWN_GRACE is how long requests in flight then get to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(7500);
/// POOL_CLOSE_WAIT bounds closing the pools at exit.
const POOL_CLOSE_WAIT: Duration = Duration::from_secs(1);
/// PING_TIMEOUT bounds each database ping of /health.
const PING_TIMEOUT: Duration = Duration::from_secs(1);

/// AppState is what handlers share: the pools (None when their URL is unset).
pub struct AppState {
    /// pg is the PostgreSQL pool of bank and users.
    pub pg: Option<Postgres>,
    /// my is the MariaDB/MySQL pool of sku.
    pub my: Option<Mysql>,
    /// commit_resolved counts the bank's in-doubt COMMITs by outcome.
    pub commit_resolved: prometheus::IntCounterVec,
}

/// App is the handlers' state; cloning it is one reference count.
pub type App = Arc<AppState>;

/// Config is the environment the service reads (workloads/README.md plus
/// the knobs in showdown.yaml).
struct Config {
    addr: String,
    database_url: String,
    mysql_url: String,
    pool_size: usize,
    log_requests: bool,
    limits: Limits,
    worker_threads: usize,
    current_thread: bool,
}

fn env(name: &str, default: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v,
        _ => default.to_owned(),
    }
}

/// parse_duration reads a Go-style duration: "2s", "500ms", "1m", "1.5s".
fn parse_duration(s: &str) -> Option<Duration> {
    let split = s.find(|c: char| c.is_ascii_alphabetic())?;
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let secs = match unit {
        "ms" => n / 1e3,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return None,
    };
    (secs > 0.0 && secs.is_finite()).then(|| Duration::from_secs_f64(secs))
}

impl Config {
    /// load reads and checks the environment, reporting every mistake at once.
    fn load() -> Result<Config, String> {
        let mut errs = Vec::new();
        let host = env("HOST", "127.0.0.1");
        let port = env("PORT", "8080");
        if port.parse::<u16>().is_err() {
            errs.push(format!("PORT={port:?}: want a TCP port, 0 .. 65535"));
        }
        let pool = env("DB_POOL_SIZE", "20");
        let pool_size = match pool.parse::<usize>() {
            Ok(n) if (1..=10000).contains(&n) => n,
            _ => {
                errs.push(format!("DB_POOL_SIZE={pool:?}: want a number of connections, 1 .. 10000"));
                1
            }
        };
        let logs = env("LOG_REQUESTS", "false");
        let log_requests = match logs.as_str() {
            "true" | "1" | "TRUE" | "True" => true,
            "false" | "0" | "FALSE" | "False" => false,
            _ => {
                errs.push(format!("LOG_REQUESTS={logs:?}: want true or false"));
                false
            }
        };
        let mut duration = |name: &str, def: &str| {
            let v = env(name, def);
            parse_duration(&v).unwrap_or_else(|| {
                errs.push(format!("{name}={v:?}: want a positive duration such as {def}"));
                Duration::from_secs(1)
            })
        };
        let limits = Limits { acquire: duration("DB_ACQUIRE_TIMEOUT", "2s"), query: duration("DB_QUERY_TIMEOUT", "30s") };
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = env("TOKIO_WORKER_THREADS", "");
        let worker_threads = if threads.is_empty() {
            cpus
        } else {
            match threads.parse::<usize>() {
                Ok(n) if (1..=1024).contains(&n) => n,
                _ => {
                    errs.push(format!("TOKIO_WORKER_THREADS={threads:?}: want a number of threads, 1 .. 1024, or empty for one per CPU"));
                    1
                }
            }
        };
        let flavor = env("TOKIO_RUNTIME", "multi_thread");
        let current_thread = match flavor.as_str() {
            "multi_thread" => false,
            "current_thread" => true,
            _ => {
                errs.push(format!("TOKIO_RUNTIME={flavor:?}: want multi_thread or current_thread"));
                false
            }
        };
        if !errs.is_empty() {
            return Err(errs.join("; "));
        }
        let addr = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
        Ok(Config {
            addr,
            database_url: env("DATABASE_URL", ""),
            mysql_url: env("MYSQL_URL", ""),
            pool_size,
            log_requests,
            limits,
            worker_threads,
            current_thread,
        })
    }
}

fn main() {
    // Request logs go to stdout, everything else (start, stop, bugs) to
    // stderr, one JSON object per line.
    tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_span_list(false)
        .with_target(false)
        .with_writer(std::io::stdout.with_filter(|m| m.target() == "request").or_else(std::io::stderr))
        .init();
    let cfg = match Config::load() {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("rust-axum: {e}");
            std::process::exit(1);
        }
    };
    let mut rt = if cfg.current_thread {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(cfg.worker_threads);
        b
    };
    let rt = rt.enable_all().build().expect("tokio runtime");
    if let Err(e) = rt.block_on(run(cfg)) {
        tracing::error!("rust-axum: {e}");
        std::process::exit(1);
    }
}

/// labeled marks the responses of a route with its pattern, for metrics.
fn labeled(metrics: &Metrics, pattern: &'static str, r: MethodRouter<App>) -> MethodRouter<App> {
    assert!(ROUTES.contains(&pattern), "route {pattern} missing from ROUTES");
    let label = RouteLabel(metrics.route(pattern));
    r.route_layer(MapResponseLayer::new(move |mut res: Response| {
        res.extensions_mut().insert(label);
        res
    }))
}

/// ROUTES are the route patterns, also the metrics' route labels.
const ROUTES: [&str; 10] = [
    "/uppercase",
    "/count",
    "/client/new/{balance}",
    "/transaction",
    "/client/{id}/balance",
    "/user",
    "/user/{id}",
    "/sku/{sku_id}",
    "/health",
    "/metrics",
];

/// router routes every workload, /health and /metrics; unknown paths are
/// 404 and known paths with the wrong method 405 (axum adds the Allow
/// header), both in JSON.
fn router(app: App, metrics: Arc<Metrics>) -> Router {
    let routes: [(&'static str, MethodRouter<App>); 9] = [
        ("/uppercase", post(string::uppercase)),
        ("/count", post(string::count)),
        ("/client/new/{balance}", post(bank::create_client)),
        ("/transaction", post(bank::transfer)),
        ("/client/{id}/balance", get(bank::balance)),
        ("/user", post(users::create)),
        ("/user/{id}", get(users::get)),
        ("/sku/{sku_id}", get(sku::get)),
        ("/health", get(health)),
    ];
    let mut r = Router::new();
    for (pattern, mr) in routes {
        r = r.route(pattern, labeled(&metrics, pattern, mr));
    }
    r.route("/metrics", labeled(&metrics, "/metrics", get({
        let metrics = metrics.clone();
        move || expose(metrics.clone())
    })))
        .fallback(|uri: axum::http::Uri| async move { error_response(StatusCode::NOT_FOUND, &format!("no route for path {}", uri.path())) })
        .method_not_allowed_fallback(|method: Method| async move {
            error_response(StatusCode::METHOD_NOT_ALLOWED, &format!("method {method} not allowed"))
        })
        .with_state(app)
}

/// health answers 200 when every configured database answers a ping within
/// a second; an unset database is not checked.
async fn health(axum::extract::State(app): axum::extract::State<App>) -> Response {
    if let Some(pg) = &app.pg {
        if let Err(e) = pg.ping(PING_TIMEOUT).await {
            tracing::warn!(error = %e, "health: postgres ping failed");
            return error_response(StatusCode::SERVICE_UNAVAILABLE, "postgres unavailable");
        }
    }
    if let Some(my) = &app.my {
        if let Err(e) = my.ping(PING_TIMEOUT).await {
            tracing::warn!(error = %e, "health: mysql ping failed");
            return error_response(StatusCode::SERVICE_UNAVAILABLE, "mysql unavailable");
        }
    }
    #[derive(serde::Serialize)]
    struct Ok {
        status: &'static str,
    }
    json(StatusCode::OK, &Ok { status: "ok" })
}

/// expose answers GET /metrics in the Prometheus text format.
async fn expose(metrics: Arc<Metrics>) -> Response {
    let encoder = prometheus::TextEncoder::new();
    let mut buf = String::with_capacity(8192);
    if let Err(e) = encoder.encode_utf8(&metrics.registry.gather(), &mut buf) {
        return error_response(StatusCode::INTERNAL_SERVER_ERROR, &format!("internal error: metrics: {e}"));
    }
    Response::builder()
        .header(axum::http::header::CONTENT_TYPE, prometheus::TEXT_FORMAT)
        .body(axum::body::Body::from(buf))
        .expect("valid response")
}

/// shutdown_signal resolves at SIGTERM or SIGINT.
async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// run serves until SIGTERM or SIGINT, then drains and returns.
async fn run(cfg: Config) -> Result<(), String> {
    let pg = Postgres::open(&cfg.database_url, cfg.pool_size, cfg.limits)?;
    let my = Mysql::open(&cfg.mysql_url, cfg.pool_size, cfg.limits)?;
    let metrics = Arc::new(Metrics::new(&ROUTES));
    let app: App = Arc::new(AppState { pg: pg.clone(), my: my.clone(), commit_resolved: metrics.commit_resolved.clone() });
    let draining = Arc::new(AtomicBool::new(false));
    let front = Front { router: router(app, metrics.clone()), metrics, log_requests: cfg.log_requests, draining: draining.clone() };

    let listener = TcpListener::bind(&cfg.addr)
        .await
        .map_err(|e| format!("listen on {}: {e} (check HOST and PORT: is another process on that port?)", cfg.addr))?;
    let local: SocketAddr = listener.local_addr().map_err(|e| e.to_string())?;
    tracing::info!(
        addr = %local,
        postgres = pg.is_some(),
        mysql = my.is_some(),
        pool_size = cfg.pool_size,
        worker_threads = cfg.worker_threads,
        runtime = if cfg.current_thread { "current_thread" } else { "multi_thread" },
        "listening"
    );

    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(Duration::from_secs(5));
    let graceful = GracefulShutdown::new();
    let signal = shutdown_signal();
    tokio::pin!(signal);
    loop {
        let stream = tokio::select! {
            biased;
            _ = &mut signal => break,
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                Err(e) => {
                    // Out of file descriptors, or a connection reset
                    // before accept: wait a moment rather than spin.
                    tracing::warn!(error = %e, "accept");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let front = front.clone();
        let svc = hyper::service::service_fn(move |req| front.clone().serve(req));
        let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), svc));
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }

    // Stop accepting; ask every client still connected to close after its
    // next answer; then let the requests in flight finish.
    drop(listener);
    draining.store(true, Ordering::Relaxed);
    tokio::time::sleep(DRAIN_WINDOW).await;
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!("shutdown: requests still running after the grace period");
    }
    let close = async {
        if let Some(pg) = pg {
            pg.close();
        }
        if let Some(my) = my {
            my.close().await;
        }
    };
    if tokio::time::timeout(POOL_CLOSE_WAIT, close).await.is_err() {
        tracing::warn!("exit with database connections still borrowed");
    }
    tracing::info!("stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s"), Some(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m"), Some(Duration::from_secs(60)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("0s"), None); // not positive
        assert_eq!(parse_duration("2"), None); // no unit
        assert_eq!(parse_duration("2d"), None); // unknown unit
    }
}
