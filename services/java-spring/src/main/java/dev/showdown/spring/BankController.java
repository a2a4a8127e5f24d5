package dev.showdown.spring;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/** BankController serves the bank workload: clients and transfers on PostgreSQL. */
@RestController
public class BankController {

    // The statements of workloads/bank/queries.sql, verbatim but for JDBC's ? placeholders.
    static final String CREATE_CLIENT = "WITH c AS (INSERT INTO client (balance) VALUES (?) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c";
    static final String LOCK_CLIENTS = "SELECT id, balance FROM client WHERE id IN (?, ?) ORDER BY id FOR UPDATE";
    static final String TRANSFER = "WITH debit AS (UPDATE client SET balance = balance - ? WHERE id = ?), credit AS (UPDATE client SET balance = balance + ? WHERE id = ?) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES (?, ?, ?) RETURNING id";
    static final String BALANCE = "SELECT balance FROM client WHERE id = ?";

    /** MAX_AMOUNT bounds deposits and transfers: 10^12. */
    static final long MAX_AMOUNT = 1_000_000_000_000L;

    /** Client is the answer to a new client. */
    public record Client(long id, long balance) {}

    /** Balance is the answer to a balance query. */
    public record Balance(long balance) {}

    /** Transfer is the answer to a transfer. */
    public record Transfer(
            long id,
            @JsonProperty("from_client_id") long fromClientId,
            @JsonProperty("to_client_id") long toClientId,
            long amount) {}

    private final Database db;
    private final JsonBody json;
    private final InDoubt inDoubt;

    /** BankController runs its statements on the PostgreSQL pool and counts in-doubt commits in metrics. */
    public BankController(@Qualifier("postgres") Database db, JsonBody json, RequestMetrics metrics) {
        this.db = db;
        this.json = json;
        this.inDoubt = new InDoubt(db, metrics);
    }

    /** create creates a client with an initial deposit, client and ledger row in one statement. */
    @PostMapping("/client/new/{balance}")
    public Client create(@PathVariable("balance") String raw) {
        long balance = JsonBody.pathInteger(raw, "balance", 0, MAX_AMOUNT);
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
     * rows in id order (no deadlock whatever the pairs), check, move and record, commit.
     */
    @PostMapping("/transaction")
    public Transfer transfer(HttpServletRequest request) throws IOException {
        JsonNode req = json.object(request);
        long from = JsonBody.integer(req, "from_client_id", 1, JsonBody.MAX_ID);
        long to = JsonBody.integer(req, "to_client_id", 1, JsonBody.MAX_ID);
        long amount = JsonBody.integer(req, "amount", 1, MAX_AMOUNT);
        if (from == to) {
            throw ApiException.badRequest("from_client_id and to_client_id must differ");
        }
        Transfer t;
        SQLException commitFailed = null;
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try {
                t = transfer(c, from, to, amount);
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
            switch (inDoubt.resolve(t.id(), from, to, amount, commitFailed)) {
                case COMMITTED -> { }
                case NOT_COMMITTED -> throw db.failure(commitFailed);
                case UNKNOWN -> throw new InDoubt.Unresolved("transfer " + t.id() + ": outcome of its COMMIT unknown");
            }
        }
        return t;
    }

    private static Transfer transfer(Connection c, long from, long to, long amount) throws SQLException {
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
                return new Transfer(rs.getLong(1), from, to, amount);
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
    @GetMapping("/client/{id}/balance")
    public Balance balance(@PathVariable("id") String raw) {
        long id = JsonBody.pathInteger(raw, "id", 1, JsonBody.MAX_ID);
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
