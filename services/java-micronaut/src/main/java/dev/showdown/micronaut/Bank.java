package dev.showdown.micronaut;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.function.Consumer;

/**
 * Bank is the bank workload's logic on PostgreSQL, apart from the framework: the statements of
 * workloads/bank/queries.sql verbatim (JDBC's ? placeholders), on plain JDBC.
 */
public final class Bank {

    static final String CREATE_CLIENT = "WITH c AS (INSERT INTO client (balance) VALUES (?) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c";
    static final String LOCK_CLIENTS = "SELECT id, balance FROM client WHERE id IN (?, ?) ORDER BY id FOR UPDATE";
    static final String TRANSFER = "WITH debit AS (UPDATE client SET balance = balance - ? WHERE id = ?), credit AS (UPDATE client SET balance = balance + ? WHERE id = ?) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES (?, ?, ?) RETURNING id";
    static final String BALANCE = "SELECT balance FROM client WHERE id = ?";

    /** MAX_AMOUNT bounds deposits and transfers: 10^12. */
    public static final long MAX_AMOUNT = 1_000_000_000_000L;

    /** Client is the answer to a new client. */
    public record Client(long id, long balance) {}

    /** Transfer is the answer to a transfer. */
    public record Transfer(long id, long from_client_id, long to_client_id, long amount) {}

    /** Balance is the answer to a balance. */
    public record Balance(long balance) {}

    /**
     * Unresolved is thrown when a transfer's COMMIT failed and its outcome stayed unknown for the
     * whole resolution window: the client's connection must be closed without an answer.
     */
    public static final class Unresolved extends RuntimeException {
        Unresolved(String message) {
            super(message, null, false, false);
        }
    }

    private final Database db;
    private final InDoubt inDoubt;

    /** Bank runs on db and tells resolved the outcome of each in-doubt COMMIT (a metric). */
    public Bank(Database db, Consumer<String> resolved) {
        this.db = db;
        this.inDoubt = new InDoubt(db, resolved);
    }

    /** create creates a client with an initial deposit, client and ledger row in one statement. */
    public Client create(String rawBalance) {
        long balance = JsonBody.pathInteger(rawBalance, "balance", 0, MAX_AMOUNT);
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(CREATE_CLIENT)) {
            ps.setLong(1, balance);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Client(rs.getLong(1), rs.getLong(2));
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }

    /**
     * transfer moves amount from one client to another in one READ COMMITTED transaction: lock both
     * rows in id order (no deadlock whatever the pairs), check, move and record, commit. A failed
     * COMMIT is resolved (InDoubt), not guessed.
     */
    public Transfer transfer(byte[] bodyBytes) {
        JsonBody body = JsonBody.parse(bodyBytes, "from_client_id", "to_client_id", "amount");
        long from = body.integer("from_client_id", 1, JsonBody.MAX_ID);
        long to = body.integer("to_client_id", 1, JsonBody.MAX_ID);
        long amount = body.integer("amount", 1, MAX_AMOUNT);
        if (from == to) {
            throw ApiException.badRequest("from_client_id and to_client_id must differ");
        }
        long id;
        SQLException commitFailed = null;
        Connection c;
        try {
            c = db.connection();
        } catch (SQLException e) {
            throw db.failure(e);
        }
        try {
            c.setAutoCommit(false);
            try {
                id = transfer(c, from, to, amount);
            } catch (SQLException | RuntimeException e) {
                rollback(c, e);
                throw e;
            }
            try {
                c.commit();
            } catch (SQLException e) {
                db.discard(c); // its state is unknown: never lend it again
                commitFailed = e;
            }
        } catch (SQLException e) {
            close(c);
            throw db.failure(e);
        } catch (RuntimeException e) {
            close(c);
            throw e;
        }
        close(c);
        if (commitFailed != null) {
            // The COMMIT was sent: the server may have carried it out. Answer what happened, not the error.
            switch (inDoubt.resolve(id, from, to, amount, commitFailed)) {
                case COMMITTED -> { }
                case NOT_COMMITTED -> throw db.failure(commitFailed);
                case UNKNOWN -> throw new Unresolved("transfer " + id + ": outcome of its COMMIT unknown");
            }
        }
        return new Transfer(id, from, to, amount);
    }

    /** close hands c back to the pool; a broken connection's error on the way is no answer's business. */
    private static void close(Connection c) {
        try {
            c.close();
        } catch (SQLException e) {
            // the pool drops a connection that fails while being handed back
        }
    }

    private static long transfer(Connection c, long from, long to, long amount) throws SQLException {
        int rows = 0;
        long payer = -1;
        try (PreparedStatement ps = c.prepareStatement(LOCK_CLIENTS)) {
            ps.setLong(1, from);
            ps.setLong(2, to);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows++;
                    if (rs.getLong(1) == from) {
                        payer = rs.getLong(2);
                    }
                }
            }
        }
        if (rows < 2) {
            throw ApiException.notFound("client not found");
        }
        if (payer < amount) {
            throw new ApiException(409, "insufficient funds");
        }
        try (PreparedStatement ps = c.prepareStatement(TRANSFER)) {
            ps.setLong(1, amount);
            ps.setLong(2, from);
            ps.setLong(3, amount);
            ps.setLong(4, to);
            ps.setLong(5, from);
            ps.setLong(6, to);
            ps.setLong(7, amount);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void rollback(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e); // the connection is broken; the pool drops it
        }
    }

    /** balance answers a client's balance. */
    public Balance balance(String rawId) {
        long id = JsonBody.pathInteger(rawId, "id", 1, JsonBody.MAX_ID);
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(BALANCE)) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("client not found");
                }
                return new Balance(rs.getLong(1));
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }
}
