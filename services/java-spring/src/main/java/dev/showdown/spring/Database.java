package dev.showdown.spring;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Database is one optional connection pool: the only way the service reaches that database. An unset
 * URL gives a Database without a pool, whose every use answers 503 "database not configured".
 */
public final class Database implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Database.class);

    /** SQLSTATEs outside class 08 that still mean "the server is going away or full": 503, not a bug. */
    private static final Set<String> UNAVAILABLE_STATES = Set.of(
            "57P01", // admin_shutdown
            "57P02", // crash_shutdown
            "57P03", // cannot_connect_now (starting up, shutting down)
            "53300"  // too_many_connections
    );

    /** SHARED is the right DB_POOL_MODE: one pool per process, DB_POOL_SIZE connections. */
    static final String SHARED = "shared";
    /**
     * PER_REQUEST is a mistake kept for reproductions: a new pool per request, closed with its
     * connection, and left open with it after a database error (the 2018 Go bank's sql.DB per request).
     */
    static final String PER_REQUEST = "per-request";
    /** NONE is a mistake kept for reproductions: a new raw connection per request (the 2018 Java bank). */
    static final String NONE = "none";

    private final String name;
    private final HikariDataSource pool;
    private final String mode;
    private final HikariConfig perRequest;

    /** Database wraps pool, or stands for an unconfigured database when pool is null. */
    public Database(String name, HikariDataSource pool) {
        this(name, pool, SHARED, null);
    }

    /**
     * Database wraps pool in mode (DB_POOL_MODE); in the mistaken modes connections are opened per
     * request from config and pool only answers health checks.
     */
    public Database(String name, HikariDataSource pool, String mode, HikariConfig config) {
        this.name = name;
        this.pool = pool;
        this.mode = mode;
        if (config != null && !SHARED.equals(mode)) {
            HikariConfig one = new HikariConfig();
            config.copyStateTo(one);
            one.setPoolName(config.getPoolName() + "-request");
            one.setMaximumPoolSize(1);
            one.setMinimumIdle(0);
            one.setInitializationFailTimeout(1); // open the connection now, or fail
            this.perRequest = one;
        } else {
            this.perRequest = null;
        }
    }

    /** name is the database product, for messages: PostgreSQL or MariaDB. */
    public String name() {
        return name;
    }

    /** configured reports whether the database's URL was set. */
    public boolean configured() {
        return pool != null;
    }

    /**
     * connection borrows a pooled connection, waiting at most the pool's connection timeout (2 s).
     * Callers close it (try-with-resources) to hand it back.
     */
    public Connection connection() throws SQLException {
        if (pool == null) {
            throw new ApiException(503, "database not configured");
        }
        if (NONE.equals(mode)) {
            return DriverManager.getConnection(perRequest.getJdbcUrl(), perRequest.getUsername(), perRequest.getPassword());
        }
        if (PER_REQUEST.equals(mode)) {
            return pooledForOneRequest();
        }
        return pool.getConnection();
    }

    /**
     * pooledForOneRequest opens a pool for this request and returns its connection; closing the
     * connection closes the pool, unless a database error happened on it: then both are left open, as
     * the 2018 Go bank left its per-request pool open when it panicked on an error.
     */
    private Connection pooledForOneRequest() throws SQLException {
        HikariDataSource ds;
        try {
            ds = new HikariDataSource(perRequest);
        } catch (RuntimeException e) {
            // Hikari fails the constructor when the first connection cannot be made.
            throw new SQLTransientConnectionException("per-request pool: " + e.getMessage(), "08001", e);
        }
        Connection c = ds.getConnection();
        boolean[] failed = {false};
        return watched(Connection.class, c, failed, () -> {
            if (!failed[0]) {
                c.close();
                ds.close();
            }
        });
    }

    /** Closer is what closing a watched connection does. */
    private interface Closer {
        void close() throws SQLException;
    }

    /**
     * watched wraps target so that any SQLException it (or a statement it makes) throws sets failed[0];
     * close, when given, replaces target's close.
     */
    private static <T> T watched(Class<T> type, T target, boolean[] failed, Closer close) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if (close != null && method.getName().equals("close") && method.getParameterCount() == 0) {
                close.close();
                return null;
            }
            try {
                Object r = method.invoke(target, args);
                if (r instanceof PreparedStatement ps && method.getReturnType() == PreparedStatement.class) {
                    return watched(PreparedStatement.class, ps, failed, null);
                }
                return r;
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof SQLException) {
                    failed[0] = true;
                }
                throw e.getCause();
            }
        }));
    }

    /**
     * discard takes c out of the pool for good: it is closed now and never lent again. For a
     * connection whose COMMIT failed, whose state nobody knows. In the mistaken DB_POOL_MODEs the
     * connection is not the shared pool's; closing it does what that mode does.
     */
    public void discard(Connection c) {
        if (pool != null && SHARED.equals(mode)) {
            pool.evictConnection(c);
        }
    }

    /**
     * failure turns a JDBC error into the contract's answer: 503 when the database is unreachable,
     * refusing connections or going away (a pool timeout included), 500 for anything else, which is a
     * bug in this service and is logged.
     */
    public ApiException failure(SQLException e) {
        if (unavailable(e)) {
            log.debug("{} unavailable", name, e);
            return new ApiException(503, name + " unavailable");
        }
        log.error("unexpected {} error", name, e);
        return new ApiException(500, "internal error");
    }

    private static boolean unavailable(SQLException e) {
        if (e instanceof SQLTransientConnectionException || e instanceof SQLNonTransientConnectionException) {
            return true;
        }
        for (SQLException s = e; s != null; s = s.getNextException()) {
            String state = s.getSQLState();
            if (state != null && (state.startsWith("08") || UNAVAILABLE_STATES.contains(state))) {
                return true;
            }
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IOException) {
                return true;
            }
        }
        return false;
    }

    /**
     * ping reports whether the database answers within timeoutMillis: a connection from the pool that
     * passes isValid. It runs on executor so that a pool waiting for a dead server cannot hold the
     * caller longer than the timeout.
     */
    public CompletableFuture<Boolean> ping(Executor executor, long timeoutMillis) {
        if (pool == null) {
            return CompletableFuture.completedFuture(true);
        }
        return CompletableFuture.supplyAsync(() -> {
                    try (Connection c = pool.getConnection()) {
                        return c.isValid((int) Math.max(1, timeoutMillis / 1000));
                    } catch (SQLException e) {
                        return false;
                    }
                }, executor)
                .completeOnTimeout(false, timeoutMillis, TimeUnit.MILLISECONDS);
    }

    /** close closes the pool and its connections; the service calls it once, at shutdown. */
    @Override
    public void close() {
        if (pool != null) {
            pool.close();
        }
    }
}
