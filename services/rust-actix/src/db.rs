// showdown:shared begin db-postgres

//! The two pools, their time bounds, and which database failures mean
//! "unavailable" (503) rather than a bug (500).

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime};
use tokio_postgres::error::SqlState;
use mysql_async::prelude::Queryable;
use tokio_postgres::NoTls;

/// CONNECT_TIMEOUT bounds opening one database connection, so a database
/// that is down costs a request at most this much before its 503.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// IDLE_CHECK: when no connection was lent for longer, the next one lent is
/// pinged first (within IDLE_PING), as pgx and HikariCP check a connection
/// idle over a second. That is how a hung database (connections open,
/// nothing answers) gets a 503 in time without cutting slow queries short;
/// the pool's idle time stands in for the connection's.
pub const IDLE_CHECK: Duration = Duration::from_secs(1);

/// IDLE_PING bounds that ping.
pub const IDLE_PING: Duration = Duration::from_secs(1);

/// LastLent is when (ms since the process's first use of it; 0: never) the
/// pool last lent a connection that answered.
#[derive(Clone, Default)]
struct LastLent(Arc<AtomicU64>);

impl LastLent {
    fn now() -> u64 {
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
    }

    /// stale reports whether the pool lent nothing for over IDLE_CHECK.
    fn stale(&self) -> bool {
        let last = self.0.load(Ordering::Relaxed);
        last != 0 && Self::now().saturating_sub(last) > IDLE_CHECK.as_millis() as u64
    }

    fn mark(&self) {
        self.0.store(Self::now(), Ordering::Relaxed);
    }
}

/// Limits are the time bounds of database work.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// acquire bounds the wait for a pooled connection, opening one
    /// included: past it the request gets 503 ("503 within 3 s").
    pub acquire: Duration,
    /// query bounds a request's statements once it holds a connection: a
    /// safety net for a database that hangs, not a deadline for slow queries.
    pub query: Duration,
}

/// DbError is a database failure of either engine, or a time bound that ran out.
#[derive(Debug)]
pub enum DbError {
    /// Pool is a PostgreSQL pool failure (timeout, closed, connect error).
    Pool(PoolError),
    /// Postgres is a statement that failed.
    Postgres(tokio_postgres::Error),
    /// Mysql is a MariaDB/MySQL failure.
    Mysql(mysql_async::Error),
    /// Timeout is a bound of Limits that ran out.
    Timeout(&'static str),
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Pool(e) => write!(f, "{e}"),
            DbError::Postgres(e) => match e.as_db_error() {
                Some(db) => write!(f, "{}: {} (SQLSTATE {})", db.severity(), db.message(), db.code().code()),
                None => write!(f, "{e}"),
            },
            DbError::Mysql(e) => write!(f, "{e}"),
            DbError::Timeout(what) => write!(f, "{what}"),
        }
    }
}

impl From<PoolError> for DbError {
    fn from(e: PoolError) -> Self {
        DbError::Pool(e)
    }
}

impl From<tokio_postgres::Error> for DbError {
    fn from(e: tokio_postgres::Error) -> Self {
        DbError::Postgres(e)
    }
}

impl From<mysql_async::Error> for DbError {
    fn from(e: mysql_async::Error) -> Self {
        DbError::Mysql(e)
    }
}

impl DbError {
    /// unavailable reports whether the database is down, unreachable,
    /// refusing connections or too slow (503), rather than a bug (500).
    pub fn unavailable(&self) -> bool {
        match self {
            DbError::Timeout(_) => true,
            DbError::Pool(PoolError::Backend(e)) => pg_unavailable(e),
            DbError::Pool(PoolError::PostCreateHook(_)) | DbError::Pool(PoolError::NoRuntimeSpecified) => false,
            DbError::Pool(_) => true, // timeout or closed
            DbError::Postgres(e) => pg_unavailable(e),
            DbError::Mysql(e) => match e {
                mysql_async::Error::Server(s) => matches!(
                    s.code,
                    1040 // too many connections
                        | 1045 // access denied
                        | 1053 // server shutdown in progress
                        | 1077 // normal shutdown
                        | 1152 | 1153 | 1158 | 1159 | 1160 | 1161 // aborted connection, network errors
                        | 1927 // connection killed
                        | 1205 // lock wait timeout
                        | 4031 // disconnected by the server for inactivity
                ),
                mysql_async::Error::Io(_) => true,
                mysql_async::Error::Driver(d) => matches!(
                    d,
                    mysql_async::DriverError::ConnectionClosed | mysql_async::DriverError::PoolDisconnected
                ),
                _ => false,
            },
        }
    }
}

fn pg_unavailable(e: &tokio_postgres::Error) -> bool {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        return code.starts_with("08") // connection exception
            || code.starts_with("53") // insufficient resources: too many connections
            || code.starts_with("57P") // admin/crash shutdown, cannot connect now
            || *db.code() == SqlState::INVALID_PASSWORD
            || *db.code() == SqlState::INVALID_AUTHORIZATION_SPECIFICATION;
    }
    // No server error: the connection failed, closed or timed out.
    e.is_closed() || e.code().is_none()
}

/// bounded runs fut within d, or fails with DbError::Timeout(what).
pub async fn bounded<T, E: Into<DbError>>(d: Duration, what: &'static str, fut: impl Future<Output = Result<T, E>>) -> Result<T, DbError> {
    match tokio::time::timeout(d, fut).await {
        Ok(r) => r.map_err(Into::into),
        Err(_) => Err(DbError::Timeout(what)),
    }
}

/// Postgres is the PostgreSQL pool with the time bounds of its requests.
#[derive(Clone)]
pub struct Postgres {
    pool: Pool,
    lent: LastLent,
    /// limits are the bounds of each request's database work.
    pub limits: Limits,
}

impl Postgres {
    /// open creates the pool for url (None when unset). It does not
    /// connect: connections open on demand and stay open, so the service
    /// starts, and recovers, whether or not the database is up.
    pub fn open(url: &str, pool_size: usize, limits: Limits) -> Result<Option<Self>, String> {
        if url.is_empty() {
            return Ok(None);
        }
        let mut cfg: tokio_postgres::Config = url
            .parse()
            .map_err(|e| format!("DATABASE_URL: {e} (want postgres://user:password@host:port/dbname?sslmode=disable)"))?;
        cfg.connect_timeout(CONNECT_TIMEOUT);
        // Fast: a pooled connection is reused if its socket is still open
        // (the connection task ends, and is_closed turns true, when the
        // server goes away). Verified would add a round trip per request.
        let mgr = Manager::from_config(cfg, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(mgr)
            .max_size(pool_size)
            .runtime(Runtime::Tokio1)
            // One bound for the whole borrow, opening a connection included
            // (acquire, below): a separate 1 s bound on opening one fails
            // bursts on a busy machine, where a new backend plus its SCRAM
            // handshake can take longer, and throws the half-made
            // connection away.
            .wait_timeout(None)
            .create_timeout(None)
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| format!("DATABASE_URL: {e}"))?;
        Ok(Some(Postgres { pool, lent: LastLent::default(), limits }))
    }

    /// acquire borrows a connection, waiting at most limits.acquire, opening
    /// one included.
    pub async fn acquire(&self) -> Result<Object, DbError> {
        let c = bounded(self.limits.acquire, "no database connection free in time", self.pool.get()).await?;
        if self.lent.stale() {
            if let Err(e) = bounded(IDLE_PING, "ping of an idle connection timed out", c.simple_query("")).await {
                drop(Object::take(c)); // out of the pool, closed
                return Err(e);
            }
        }
        self.lent.mark();
        Ok(c)
    }

    /// ping checks that the database answers within d.
    pub async fn ping(&self, d: Duration) -> Result<(), DbError> {
        let pool = self.pool.clone();
        bounded(d, "ping timed out", async move {
            let c = pool.get().await?;
            c.simple_query("").await?;
            Ok::<_, DbError>(())
        })
        .await
    }
    // showdown:shared end db-postgres
}

// showdown:shared begin db-mysql

/// Mysql is the MariaDB/MySQL pool with the time bounds of its requests.
#[derive(Clone)]
pub struct Mysql {
    pool: mysql_async::Pool,
    lent: LastLent,
    /// limits are the bounds of each request's database work.
    pub limits: Limits,
}

impl Mysql {
    /// open creates the pool for url (None when unset), without connecting.
    pub fn open(url: &str, pool_size: usize, limits: Limits) -> Result<Option<Self>, String> {
        if url.is_empty() {
            return Ok(None);
        }
        let url = url.strip_prefix("mariadb://").map(|r| format!("mysql://{r}")).unwrap_or_else(|| url.to_owned());
        let opts = mysql_async::Opts::from_url(&url)
            .map_err(|e| format!("MYSQL_URL: {e} (want mysql://user:password@host:port/dbname)"))?;
        // min = max: with the default inactive_connection_ttl of 0, the
        // pool keeps at most `min` idle connections and disconnects every
        // other one as it comes back, so min 0 would open a connection per
        // request. The pool still opens connections only on demand.
        let constraints = mysql_async::PoolConstraints::new(pool_size, pool_size).ok_or("DB_POOL_SIZE: bad pool size")?;
        let pool_opts = mysql_async::PoolOpts::default()
            .with_constraints(constraints)
            // The default resets each connection on its way back to the
            // pool (COM_RESET_CONNECTION): a round trip per request, and it
            // drops the server-side prepared statements, so every request
            // would prepare again. Requests here leave no session state.
            .with_reset_connection(false);
        let opts = mysql_async::OptsBuilder::from_opts(opts)
            .pool_opts(pool_opts)
            // The driver would reconnect through the server's Unix socket
            // when it finds the server on loopback: keep TCP, the path the
            // URL names and every other stack uses.
            .prefer_socket(false)
            .tcp_nodelay(true)
            .stmt_cache_size(16);
        Ok(Some(Mysql { pool: mysql_async::Pool::new(opts), lent: LastLent::default(), limits }))
    }

    /// acquire borrows a connection, waiting at most limits.acquire, opening
    /// one included.
    pub async fn acquire(&self) -> Result<mysql_async::Conn, DbError> {
        let mut c = bounded(self.limits.acquire, "no database connection free in time", self.pool.get_conn()).await?;
        if self.lent.stale() {
            bounded(IDLE_PING, "ping of an idle connection timed out", c.ping()).await?;
        }
        self.lent.mark();
        Ok(c)
    }

    /// ping checks that the database answers within d.
    pub async fn ping(&self, d: Duration) -> Result<(), DbError> {
        let pool = self.pool.clone();
        bounded(d, "ping timed out", async move {
            let mut c = pool.get_conn().await?;
            c.ping().await?;
            Ok::<_, DbError>(())
        })
        .await
    }
    // showdown:shared end db-mysql
}
