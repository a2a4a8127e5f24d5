//! Metrics, request logs, and the front of every request: the path check,
//! panics turned into 500s, and "Connection: close" while draining. It is
//! one `wrap_fn` around the whole App, so it sees every request, routed or not.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use actix_web::body::BoxBody;
use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::http::{ConnectionType, StatusCode};
use futures_util::FutureExt;
use prometheus::{Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, Opts, Registry};

use crate::http::{error_response, ApiError};

/// Metrics holds the two series the contract requires, in their registry.
///
/// Looking a series up by its label values (`with_label_values`) hashes the
/// labels and takes a read lock shared by every thread on each request. The
/// routes are known at start, so each route's histogram is looked up once,
/// and each (route, status) counter once, on its first request, then kept
/// in a slot indexed by the status code (as rust-axum does). Series still
/// appear only once they have a request, as with client_golang.
pub struct Metrics {
    requests: IntCounterVec,
    routes: Vec<RouteMetrics>,
    /// registry is what GET /metrics exposes.
    pub registry: Registry,
    /// commit_resolved counts the bank's in-doubt COMMITs by the outcome
    /// the service then found (committed, not_committed, unknown).
    pub commit_resolved: IntCounterVec,
}

/// RouteMetrics are one route's series.
struct RouteMetrics {
    label: &'static str,
    duration: Histogram,
    by_status: Box<[OnceLock<IntCounter>]>, // index: status code - 100
}

/// UNMATCHED is the route label of a request that matched no route.
pub const UNMATCHED: &str = "unmatched";

impl Metrics {
    /// new registers the request counter, the latency histogram and the
    /// process collector (CPU, memory, file descriptors, threads) for the
    /// given route patterns (UNMATCHED is added).
    pub fn new(routes: &[&'static str]) -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new("http_requests_total", "HTTP requests by route pattern and status code."),
            &["route", "status"],
        )
        .expect("valid metric");
        // Finer than the default buckets at the low end: most answers here
        // take well under a millisecond.
        let buckets = vec![0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
        let duration = HistogramVec::new(
            HistogramOpts::new("http_request_duration_seconds", "HTTP request latency by route pattern.").buckets(buckets),
            &["route"],
        )
        .expect("valid metric");
        registry.register(Box::new(requests.clone())).expect("registered once");
        registry.register(Box::new(duration.clone())).expect("registered once");
        let commit_resolved = IntCounterVec::new(
            Opts::new("bank_commit_resolved_total", "Transfers whose COMMIT failed, by the outcome the service then found."),
            &["outcome"],
        )
        .expect("valid metric");
        registry.register(Box::new(commit_resolved.clone())).expect("registered once");
        registry
            .register(Box::new(prometheus::process_collector::ProcessCollector::for_self()))
            .expect("registered once");
        let routes = routes
            .iter()
            .chain([UNMATCHED].iter())
            .map(|&label| RouteMetrics {
                label,
                duration: duration.with_label_values(&[label]),
                by_status: (100..600).map(|_| OnceLock::new()).collect(),
            })
            .collect();
        Metrics { requests, routes, registry, commit_resolved }
    }

    /// route returns the index of a route pattern given to new; an unknown
    /// one (or none) counts as UNMATCHED.
    fn route(&self, label: Option<&str>) -> usize {
        label.and_then(|l| self.routes.iter().position(|r| r.label == l)).unwrap_or(self.routes.len() - 1)
    }

    fn observe(&self, route: usize, status: StatusCode, seconds: f64) {
        let r = &self.routes[route.min(self.routes.len() - 1)];
        r.duration.observe(seconds);
        let code = status.as_u16() as usize;
        match r.by_status.get(code.wrapping_sub(100)) {
            Some(slot) => slot.get_or_init(|| self.requests.with_label_values(&[r.label, status.as_str()])).inc(),
            None => self.requests.with_label_values(&[r.label, status.as_str()]).inc(),
        }
    }
}

/// Front is what the middleware around the App shares between requests.
#[derive(Clone)]
pub struct Front {
    /// metrics counts and times every request.
    pub metrics: Arc<Metrics>,
    /// log_requests writes one JSON line per request on stdout.
    pub log_requests: bool,
    /// draining is set at SIGTERM: every answer then asks the client to
    /// close the connection.
    pub draining: Arc<AtomicBool>,
}

impl Front {
    /// serve answers one request through srv (the routed App): it counts
    /// and times it, logs it when asked, answers 404 to a path that is not
    /// clean (the contract wants 404 for /client/../balance, which the
    /// router would match with id = ".."), and turns a panic into a 500
    /// instead of a dropped connection.
    pub fn serve<S>(
        &self,
        req: ServiceRequest,
        srv: &S,
    ) -> impl std::future::Future<Output = Result<ServiceResponse<BoxBody>, actix_web::Error>> + use<S>
    where
        S: Service<ServiceRequest, Response = ServiceResponse<BoxBody>, Error = actix_web::Error>,
    {
        let start = Instant::now();
        let front = self.clone();
        // No clone of the request is kept across the call: the router
        // needs the only reference to write the path's match into it.
        let routed = if is_clean_path(req.path()) {
            Ok(AssertUnwindSafe(srv.call(req)).catch_unwind())
        } else {
            Err(req)
        };
        async move {
            let mut res = match routed {
                Err(req) => {
                    let msg = format!("no route for path {}", req.path());
                    req.into_response(error_response(StatusCode::NOT_FOUND, &msg))
                }
                Ok(fut) => match fut.await {
                    Ok(Ok(res)) => res,
                    // Handlers' errors are answered inside the App; what
                    // comes out here is actix-web's own, or a panic. The
                    // request is gone with the service's future, so the
                    // answer is an error that actix-http turns into a
                    // response itself (ApiError's: JSON).
                    Ok(Err(e)) => {
                        let status = e.as_response_error().status_code();
                        front.metrics.observe(front.metrics.route(None), status, start.elapsed().as_secs_f64());
                        return Err(ApiError::Status(status, e.to_string().into()).into());
                    }
                    Err(panic) => {
                        let msg = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_default();
                        tracing::error!(panic = %msg, "internal error: handler panicked");
                        let status = StatusCode::INTERNAL_SERVER_ERROR;
                        front.metrics.observe(front.metrics.route(None), status, start.elapsed().as_secs_f64());
                        return Err(ApiError::Status(status, "internal error".into()).into());
                    }
                },
            };
            if front.draining.load(Ordering::Relaxed) {
                res.response_mut().head_mut().set_connection_type(ConnectionType::Close);
            }
            let elapsed = start.elapsed();
            let status = res.status();
            let pattern = res.request().match_pattern();
            let route = front.metrics.route(pattern.as_deref());
            front.metrics.observe(route, status, elapsed.as_secs_f64());
            if front.log_requests {
                let r = res.request();
                tracing::info!(
                    target: "request",
                    method = r.method().as_str(),
                    path = r.path(),
                    status = status.as_u16(),
                    duration_ms = elapsed.as_secs_f64() * 1e3,
                    "request"
                );
            }
            Ok(res)
        }
    }
}

/// is_clean_path reports whether p has no empty, "." or ".." segment
/// (a trailing slash is fine: it is simply another path, and 404).
pub fn is_clean_path(p: &str) -> bool {
    let Some(rest) = p.strip_prefix('/') else { return false };
    if rest.is_empty() {
        return true;
    }
    let mut segs = rest.split('/').peekable();
    while let Some(s) = segs.next() {
        let last = segs.peek().is_none();
        if s == "." || s == ".." || (s.is_empty() && !last) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::is_clean_path;

    #[test]
    fn clean_paths() {
        for (p, want) in [
            ("/", true),                         // root
            ("/health", true),                   // plain
            ("/health/", true),                  // trailing slash: another path
            ("/client/1/balance", true),         // parameter
            ("/client/%2e%2e/balance", true),    // encoded dots are a parameter (400)
            ("/client/../balance", false),       // climbs
            ("/static/../../etc/passwd", false), // climbs above the root
            ("/a/./b", false),                   // dot segment
            ("//health", false),                 // empty segment
            ("/count/..", false),                // trailing dot-dot
            ("*", false),                        // not a path
        ] {
            assert_eq!(is_clean_path(p), want, "{p}");
        }
    }
}
