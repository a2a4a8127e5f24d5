//! The showdown contract (workloads/README.md) on actix-web 4: the string,
//! bank, users and sku workloads in one process, tokio-postgres with a
//! deadpool pool for PostgreSQL, mysql_async for MariaDB, the prometheus
//! crate for /metrics and tracing for request logs.

mod bank;
mod db;
mod http;
mod observe;
mod sku;
mod string;
mod users;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, HttpServer, Resource};
use tracing_subscriber::fmt::writer::MakeWriterExt;

use crate::db::{Limits, Mysql, Postgres};
use crate::http::{error_response, json};
use crate::observe::{Front, Metrics};

/// mimalloc: small, fast thread-local allocation for the many short-lived
/// buffers of a request (see README: allocator).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

// Shutdown timing. The contract allows 10 s from SIGTERM to exit, pools
// included: they close with their workers, within SHUTDOWN_GRACE.

/// SHUTDOWN_GRACE is how long, after SIGTERM, actix-web's workers get to
/// finish the connections they have (in whole seconds: its unit).
const SHUTDOWN_GRACE_SECS: u64 = 7;
/// PING_TIMEOUT bounds each database ping of /health.
const PING_TIMEOUT: Duration = Duration::from_secs(1);
/// BACKLOG is the listening socket's queue of connections not yet accepted.
const BACKLOG: u32 = 2048;

/// AppState is one worker's state: its own pools (None when their URL is
/// unset) and the metrics every worker shares.
pub struct AppState {
    /// pg is the PostgreSQL pool of bank and users.
    pub pg: Option<Postgres>,
    /// my is the MariaDB/MySQL pool of sku.
    pub my: Option<Mysql>,
    /// commit_resolved counts the bank's in-doubt COMMITs by outcome.
    pub commit_resolved: prometheus::IntCounterVec,
    /// metrics is what GET /metrics exposes.
    pub metrics: Arc<Metrics>,
}

/// App is the handlers' state; cloning it is one reference count.
pub type App = web::Data<AppState>;

/// Config is the environment the service reads (workloads/README.md plus
/// the knobs in showdown.yaml).
struct Config {
    addr: String,
    database_url: String,
    mysql_url: String,
    pool_size: usize,
    log_requests: bool,
    limits: Limits,
    workers: usize,
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
        // actix-web's own default is the same: one worker per CPU the
        // process may use (available_parallelism honours taskset and a
        // cgroup quota). Said here so the log names the number.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let raw = env("ACTIX_WORKERS", "");
        let workers = if raw.is_empty() {
            cpus
        } else {
            match raw.parse::<usize>() {
                Ok(n) if (1..=1024).contains(&n) => n,
                _ => {
                    errs.push(format!("ACTIX_WORKERS={raw:?}: want a number of worker threads, 1 .. 1024, or empty for one per CPU"));
                    1
                }
            }
        };
        let database_url = env("DATABASE_URL", "");
        let mysql_url = env("MYSQL_URL", "");
        // Each worker has its own pools (see run), so DB_POOL_SIZE is split
        // between them and every worker needs at least one connection.
        let has_db = !database_url.is_empty() || !mysql_url.is_empty();
        let workers = if has_db && raw.is_empty() {
            workers.min(pool_size)
        } else {
            if has_db && workers > pool_size {
                errs.push(format!(
                    "ACTIX_WORKERS={workers} with DB_POOL_SIZE={pool_size}: each worker needs at least one connection of the pool; raise DB_POOL_SIZE or lower ACTIX_WORKERS"
                ));
            }
            workers
        };
        if !errs.is_empty() {
            return Err(errs.join("; "));
        }
        let addr = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
        Ok(Config {
            addr,
            database_url,
            mysql_url,
            pool_size,
            log_requests,
            limits,
            workers,
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
            tracing::error!("rust-actix: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = actix_web::rt::System::new().block_on(run(cfg)) {
        tracing::error!("rust-actix: {e}");
        std::process::exit(1);
    }
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

/// resource is the route pattern with its methods; any other method is 405
/// with an Allow header, in JSON.
fn resource(pattern: &'static str, allow: &'static str) -> Resource {
    assert!(ROUTES.contains(&pattern), "route {pattern} missing from ROUTES");
    web::resource(pattern).default_service(web::to(move |req: HttpRequest| async move {
        let mut r = error_response(StatusCode::METHOD_NOT_ALLOWED, &format!("method {} not allowed", req.method()));
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
        r
    }))
}

/// not_found answers every path that matches no route.
async fn not_found(req: HttpRequest) -> HttpResponse {
    error_response(StatusCode::NOT_FOUND, &format!("no route for path {}", req.path()))
}

/// health answers 200 when every configured database answers a ping within
/// a second; an unset database is not checked.
async fn health(app: App) -> HttpResponse {
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
async fn expose(app: App) -> HttpResponse {
    let encoder = prometheus::TextEncoder::new();
    let mut buf = String::with_capacity(8192);
    if let Err(e) = encoder.encode_utf8(&app.metrics.registry.gather(), &mut buf) {
        return error_response(StatusCode::INTERNAL_SERVER_ERROR, &format!("internal error: metrics: {e}"));
    }
    HttpResponse::Ok().insert_header((header::CONTENT_TYPE, prometheus::TEXT_FORMAT)).body(buf)
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
    // The URLs are checked once here, before any worker starts; the pools
    // themselves are opened per worker, below.
    let pg = Postgres::open(&cfg.database_url, cfg.pool_size, cfg.limits)?;
    let my = Mysql::open(&cfg.mysql_url, cfg.pool_size, cfg.limits)?;
    let (has_pg, has_my) = (pg.is_some(), my.is_some());
    drop((pg, my));
    let metrics = Arc::new(Metrics::new(&ROUTES));
    let draining = Arc::new(AtomicBool::new(false));
    let front = Front { metrics: metrics.clone(), log_requests: cfg.log_requests, draining: draining.clone() };
    let started = Arc::new(AtomicUsize::new(0));
    let (database_url, mysql_url, pool_size, workers, limits) =
        (cfg.database_url.clone(), cfg.mysql_url.clone(), cfg.pool_size, cfg.workers, cfg.limits);

    // One App per worker thread (actix-web's model: each worker runs its
    // own single-threaded runtime), and with it that worker's own pools:
    // a connection belongs to the runtime that opened it (its socket is
    // registered with that runtime's reactor, and tokio-postgres drives it
    // from a task there), so a pool shared by the workers would lose the
    // connections of whichever worker stops first at SIGTERM, under the
    // requests other workers are still finishing on them. mysql_async's
    // documentation asks for the same: a Pool per actix-server worker.
    let server = HttpServer::new(move || {
        let front = front.clone();
        let share = pool_share(pool_size, workers, started.fetch_add(1, Ordering::Relaxed));
        let state = web::Data::new(AppState {
            pg: Postgres::open(&database_url, share, limits).expect("DATABASE_URL checked at start"),
            my: Mysql::open(&mysql_url, share, limits).expect("MYSQL_URL checked at start"),
            commit_resolved: metrics.commit_resolved.clone(),
            metrics: metrics.clone(),
        });
        actix_web::App::new()
            .app_data(state)
            .wrap_fn(move |req, srv| front.serve(req, srv))
            .service(resource("/uppercase", "POST").route(web::post().to(string::uppercase)))
            .service(resource("/count", "POST").route(web::post().to(string::count)))
            .service(resource("/client/new/{balance}", "POST").route(web::post().to(bank::create_client)))
            .service(resource("/transaction", "POST").route(web::post().to(bank::transfer)))
            .service(resource("/client/{id}/balance", "GET").route(web::get().to(bank::balance)))
            .service(resource("/user", "POST").route(web::post().to(users::create)))
            .service(resource("/user/{id}", "GET").route(web::get().to(users::get)))
            .service(resource("/sku/{sku_id}", "GET").route(web::get().to(sku::get)))
            .service(resource("/health", "GET").route(web::get().to(health)))
            .service(resource("/metrics", "GET").route(web::get().to(expose)))
            .default_service(web::to(not_found))
    })
    .workers(cfg.workers)
    .backlog(BACKLOG)
    .shutdown_timeout(SHUTDOWN_GRACE_SECS)
    // Our own signal future (it replaces actix-server's handlers): it
    // also marks the service as draining, so every answer from then on
    // carries "Connection: close" and kept-alive clients go away.
    .shutdown_signal({
        let draining = draining.clone();
        async move {
            shutdown_signal().await;
            draining.store(true, Ordering::Relaxed);
        }
    })
    .bind(&cfg.addr)
    .map_err(|e| format!("listen on {}: {e} (check HOST and PORT: is another process on that port?)", cfg.addr))?;
    let addrs: Vec<String> = server.addrs().iter().map(|a| a.to_string()).collect();
    tracing::info!(
        addr = addrs.join(","),
        postgres = has_pg,
        mysql = has_my,
        pool_size = cfg.pool_size,
        workers = cfg.workers,
        "listening"
    );
    // Each worker's pools close with its runtime, once its connections
    // are finished (or the grace is over): nothing is borrowed by then.
    server.run().await.map_err(|e| format!("server: {e}"))?;
    tracing::info!("stopped");
    Ok(())
}

/// pool_share is worker i's part of a pool of size connections split over
/// workers: the remainder goes one each to the first workers, so the parts
/// add up to size. A worker started again after a crash takes the part of
/// the one it replaces (i counts every start).
fn pool_share(size: usize, workers: usize, i: usize) -> usize {
    let workers = workers.max(1);
    let i = i % workers;
    (size / workers + usize::from(i < size % workers)).max(1)
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

    #[test]
    fn pool_shares() {
        use super::pool_share;
        let parts = |size, workers| (0..workers).map(|i| pool_share(size, workers, i)).collect::<Vec<_>>();
        assert_eq!(parts(20, 2), vec![10, 10]);
        assert_eq!(parts(20, 3), vec![7, 7, 6]);
        assert_eq!(parts(20, 16).iter().sum::<usize>(), 20);
        assert_eq!(parts(16, 16), vec![1; 16]);
        assert_eq!(pool_share(20, 3, 3), 7); // a restarted worker 0
    }
}
