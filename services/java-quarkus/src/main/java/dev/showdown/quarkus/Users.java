package dev.showdown.quarkus;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Users is the users workload's logic on PostgreSQL, apart from the framework: the statements of
 * workloads/users/queries.sql verbatim (JDBC's ? placeholders), on plain JDBC.
 */
public final class Users {

    static final String CREATE_USER = "INSERT INTO users (email, password) VALUES (?, ?) RETURNING id";
    static final String GET_USER = "SELECT id, email FROM users WHERE id = ?";

    /** MAX_LENGTH is the column size, varchar(255), in code points. */
    static final int MAX_LENGTH = 255;

    /** Created is the answer to a sign-up. */
    public record Created(long id, String message) {}

    /** User is the answer to a user's lookup; never the password. */
    public record User(long id, String email) {}

    private final Database db;

    /** Users runs its statements on db. */
    public Users(Database db) {
        this.db = db;
    }

    /** create stores a user; the caller answers 201 with Location /user/{id}. */
    public Created create(byte[] bodyBytes) {
        JsonBody body = JsonBody.parse(bodyBytes, "email", "password");
        String email = body.string("email", MAX_LENGTH);
        String password = body.string("password", MAX_LENGTH);
        if (email.indexOf('@') < 0) {
            throw ApiException.badRequest("email must contain @");
        }
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(CREATE_USER)) {
            ps.setString(1, email);
            ps.setString(2, password);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Created(rs.getLong(1), "User created");
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }

    /** get answers a user's id and email. */
    public User get(String rawId) {
        long id = JsonBody.pathInteger(rawId, "id", 1, JsonBody.MAX_ID);
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(GET_USER)) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("user not found");
                }
                return new User(rs.getLong(1), rs.getString(2));
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }
}
