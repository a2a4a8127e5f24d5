package dev.showdown.quarkus;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * InDoubt resolves a transfer whose COMMIT failed: the server may have committed it and died, or
 * ended the session, before its acknowledgement arrived, so the error alone does not say whether the
 * money moved. On fresh pooled connections it waits for the transfer's row locks to go (the original
 * transaction finishes first if its backend still lives) and looks for the ledger row the transfer's
 * statement returned, for at most WINDOW_MILLIS.
 */
final class InDoubt {

    /**
     * LEDGER_ROW finds a transfer's ledger row by id, clients and amount (workloads/bank/queries.sql:
     * ledger_row): after a crash an id that an uncommitted transaction took may be handed out again.
     */
    static final String LEDGER_ROW = "SELECT id FROM transaction WHERE id = ? AND from_client_id = ? AND to_client_id = ? AND amount = ?";

    /** WINDOW_MILLIS bounds a resolution, from the failed COMMIT on. */
    static final long WINDOW_MILLIS = 30_000;

    /** PAUSE_MILLIS is the pause after a failed attempt. */
    static final long PAUSE_MILLIS = 150;

    /** MAX_ATTEMPTS bounds the attempts of one resolution, whatever the clock says. */
    static final int MAX_ATTEMPTS = 200;

    /** Outcome is what a resolution found. */
    enum Outcome {
        /** COMMITTED: the ledger row exists; the transfer happened. */
        COMMITTED("committed"),
        /** NOT_COMMITTED: the row is absent and its locks are gone; the transfer did not happen and cannot any more. */
        NOT_COMMITTED("not committed"),
        /** UNKNOWN: the database did not answer within the window. */
        UNKNOWN("unknown");

        /** label is the outcome in the log line and the metric. */
        final String label;

        Outcome(String label) {
            this.label = label;
        }
    }

    /** DIRECT runs the driver's network-timeout callbacks on the calling thread; pgjdbc runs none. */
    private static final Executor DIRECT = Runnable::run;

    private static final Logger log = LoggerFactory.getLogger(InDoubt.class);

    private final Database db;
    private final Consumer<String> resolved;

    /** InDoubt resolves on db's pool and tells resolved each outcome's label (a metric). */
    InDoubt(Database db, Consumer<String> resolved) {
        this.db = db;
        this.resolved = resolved;
    }

    /**
     * resolve finds out whether the transfer of amount that wrote ledger row id, between clients from and to,
     * committed after its COMMIT failed with cause. Each attempt borrows a connection (at most the
     * pool's 2 s wait), bounds its statements by the time left in the window, runs lock_clients on the
     * same ids in a READ COMMITTED transaction (it waits until the original transaction's row locks
     * are gone), then ledger_row, then rolls back. It logs one line with the outcome.
     */
    Outcome resolve(long id, long from, long to, long amount, SQLException cause) {
        long start = System.nanoTime();
        long deadline = start + WINDOW_MILLIS * 1_000_000;
        SQLException last = cause;
        int attempts = 0;
        Outcome outcome = Outcome.UNKNOWN;
        while (attempts < MAX_ATTEMPTS) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                break;
            }
            attempts++;
            try {
                outcome = attempt(id, from, to, amount, (int) left) ? Outcome.COMMITTED : Outcome.NOT_COMMITTED;
                break;
            } catch (SQLException e) {
                last = e;
            }
            try {
                Thread.sleep(Math.min(PAUSE_MILLIS, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // shutting down: the outcome stays unknown
                break;
            }
        }
        resolved.accept(outcome.label);
        String line = "in-doubt commit resolved: outcome=" + outcome.label + " ledger_id=" + id + " attempts=" + attempts
                + " ms=" + (System.nanoTime() - start) / 1_000_000
                + " commit_error=" + cause.getMessage()
                + (outcome == Outcome.UNKNOWN ? " last_error=" + last.getMessage() : "");
        if (outcome == Outcome.COMMITTED) {
            log.info(line);
        } else {
            log.warn(line);
        }
        return outcome;
    }

    /** attempt is one try on a fresh connection: true when the ledger row is there. */
    private boolean attempt(long id, long from, long to, long amount, int timeoutMillis) throws SQLException {
        try (Connection c = db.connection()) {
            c.setNetworkTimeout(DIRECT, timeoutMillis); // the pool restores its own on return
            c.setAutoCommit(false);
            try {
                try (PreparedStatement ps = c.prepareStatement(Bank.LOCK_CLIENTS)) {
                    ps.setLong(1, from);
                    ps.setLong(2, to);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            // the rows are locked now: the transfer that held them has ended
                        }
                    }
                }
                boolean found;
                try (PreparedStatement ps = c.prepareStatement(LEDGER_ROW)) {
                    ps.setLong(1, id);
                    ps.setLong(2, from);
                    ps.setLong(3, to);
                    ps.setLong(4, amount);
                    try (ResultSet rs = ps.executeQuery()) {
                        found = rs.next();
                    }
                }
                c.rollback();
                return found;
            } catch (SQLException e) {
                try {
                    c.rollback();
                } catch (SQLException r) {
                    e.addSuppressed(r); // a broken connection: the pool evicts it
                }
                throw e;
            }
        }
    }
}
