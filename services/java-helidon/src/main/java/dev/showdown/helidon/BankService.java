package dev.showdown.helidon;

import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** BankService serves the bank workload: clients and transfers on PostgreSQL. */
public final class BankService {

    // The statements of workloads/bank/queries.sql, verbatim but for JDBC's ? placeholders.
    static final String CREATE_CLIENT = "WITH c AS (INSERT INTO client (balance) VALUES (?) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c";
    static final String LOCK_CLIENTS = "SELECT id, balance FROM client WHERE id IN (?, ?) ORDER BY id FOR UPDATE";
    static final String TRANSFER = "WITH debit AS (UPDATE client SET balance = balance - ? WHERE id = ?), credit AS (UPDATE client SET balance = balance + ? WHERE id = ?) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES (?, ?, ?) RETURNING id";
    static final String BALANCE = "SELECT balance FROM client WHERE id = ?";

    /** MAX_AMOUNT bounds deposits and transfers: 10^12. */
    static final long MAX_AMOUNT = 1_000_000_000_000L;

    private final Database db;
    private final InDoubt inDoubt;

    /** BankService runs its statements on the PostgreSQL pool and counts in-doubt commits in metrics. */
    public BankService(Database db, RequestMetrics metrics) {
        this.db = db;
        this.inDoubt = new InDoubt(db, metrics);
    }

    /** register adds the bank's three routes to routes. */
    public void register(Routes routes) {
        routes.post("/client/new/{balance}", this::create)
                .post("/transaction", this::transfer)
                .get("/client/{id}/balance", this::balance);
    }

    /** create creates a client with an initial deposit, client and ledger row in one statement. */
    void create(ServerRequest req, ServerResponse res) {
        long balance = JsonBody.pathInteger(req.path().pathParameters().get("balance"), "balance", 0, MAX_AMOUNT);
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(CREATE_CLIENT)) {
            ps.setLong(1, balance);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                Routes.send(res, 200, Json.object().put("id", rs.getLong(1)).put("balance", rs.getLong(2)).bytes());
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }

    /**
     * transfer moves amount from one client to another in one READ COMMITTED transaction: lock both
     * rows in id order (no deadlock whatever the pairs), check, move and record, commit.
     */
    void transfer(ServerRequest req, ServerResponse res) {
        JsonBody body = JsonBody.read(req, "from_client_id", "to_client_id", "amount");
        long from = body.integer("from_client_id", 1, JsonBody.MAX_ID);
        long to = body.integer("to_client_id", 1, JsonBody.MAX_ID);
        long amount = body.integer("amount", 1, MAX_AMOUNT);
        if (from == to) {
            throw ApiException.badRequest("from_client_id and to_client_id must differ");
        }
        long id;
        SQLException commitFailed = null;
        try (Connection c = db.connection()) {
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
        } catch (SQLException e) { // closing hands the connection back; Hikari restores auto-commit
            throw db.failure(e);
        }
        if (commitFailed != null) {
            // The COMMIT was sent: the server may have carried it out. Answer what happened, not the error.
            switch (inDoubt.resolve(id, from, to, amount, commitFailed)) {
                case COMMITTED -> { }
                case NOT_COMMITTED -> throw db.failure(commitFailed);
                case UNKNOWN -> throw new CloseConnectionException("transfer " + id + ": outcome of its COMMIT unknown");
            }
        }
        Routes.send(res, 200, Json.object().put("id", id).put("from_client_id", from)
                .put("to_client_id", to).put("amount", amount).bytes());
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
            cause.addSuppressed(e); // the connection is broken; the pool evicts it
        }
    }

    /** balance answers a client's balance. */
    void balance(ServerRequest req, ServerResponse res) {
        long id = JsonBody.pathInteger(req.path().pathParameters().get("id"), "id", 1, JsonBody.MAX_ID);
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(BALANCE)) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("client not found");
                }
                Routes.send(res, 200, Json.object().put("balance", rs.getLong(1)).bytes());
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }
}
