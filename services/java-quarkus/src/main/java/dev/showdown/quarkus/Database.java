package dev.showdown.quarkus;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Database is one optional connection pool: the only way the service reaches that database. A
 * Database without a pool (its URL unset) answers every use with 503 "database not configured".
 */
public final class Database {

    private static final Logger log = LoggerFactory.getLogger(Database.class);

    /** SQLSTATEs outside class 08 that still mean "the server is going away or full": 503, not a bug. */
    private static final Set<String> UNAVAILABLE_STATES = Set.of(
            "57P01", // admin_shutdown
            "57P02", // crash_shutdown
            "57P03", // cannot_connect_now (starting up, shutting down)
            "53300"  // too_many_connections
    );

    private final String name;
    private final DataSource pool;
    private final Consumer<Connection> discard;
    private final Lend lend;

    /** Lend checks a connection the pool has just lent, before it is used; it throws to refuse it. */
    @FunctionalInterface
    public interface Lend {
        /** check refuses c with an SQLException (having discarded it), or returns. */
        void check(Connection c) throws SQLException;
    }

    /**
     * Database wraps pool (null: not configured); discard takes a borrowed connection out of the pool
     * for good, the pool's own way; lend checks each connection lent (a pool that checks them itself
     * passes c -> { }).
     */
    public Database(String name, DataSource pool, Consumer<Connection> discard, Lend lend) {
        this.name = name;
        this.pool = pool;
        this.discard = discard;
        this.lend = lend;
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
     * connection borrows a pooled connection, waiting at most the pool's acquisition timeout (2 s).
     * Callers close it (try-with-resources) to hand it back.
     */
    public Connection connection() throws SQLException {
        if (pool == null) {
            throw new ApiException(503, "database not configured");
        }
        Connection c;
        try {
            c = pool.getConnection();
        } catch (SQLTransientConnectionException | SQLNonTransientConnectionException e) {
            throw e;
        } catch (SQLException e) {
            // Whatever the driver says ("Interrupted while attempting to connect", state 99999, when
            // the pool gives up a connection attempt during a crash), a failed borrow means the
            // database could not be reached: 503, not a bug.
            throw new SQLTransientConnectionException(name + ": no connection", e.getSQLState(), e);
        }
        lend.check(c);
        return c;
    }

    /**
     * discard takes c out of the pool for good: it is closed now and never lent again. For a
     * connection whose COMMIT failed, whose state nobody knows.
     */
    public void discard(Connection c) {
        try {
            discard.accept(c);
        } catch (RuntimeException e) {
            log.debug("discarding a " + name + " connection", e);
        }
    }

    /**
     * failure turns a JDBC error into the contract's answer: 503 when the database is unreachable,
     * refusing connections or going away (a pool timeout included), 500 for anything else, which is a
     * bug in this service and is logged. The 503 names no address, user or SQL.
     */
    public ApiException failure(SQLException e) {
        if (unavailable(e)) {
            log.debug(name + " unavailable", e);
            return new ApiException(503, name + " unavailable");
        }
        log.error("unexpected " + name + " error", e);
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
            String m = t.getMessage();
            if (m != null && m.toLowerCase(java.util.Locale.ROOT).contains("acquisition timeout")) { // Agroal's pool wait ran out
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
                    try (Connection c = connection()) {
                        return c.isValid((int) Math.max(1, timeoutMillis / 1000));
                    } catch (SQLException e) {
                        return false;
                    }
                }, executor)
                .completeOnTimeout(false, timeoutMillis, TimeUnit.MILLISECONDS);
    }
}
