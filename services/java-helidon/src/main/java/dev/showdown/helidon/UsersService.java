package dev.showdown.helidon;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** UsersService serves the users workload: one insert per sign-up on PostgreSQL. */
public final class UsersService {

    // The statements of workloads/users/queries.sql, verbatim but for JDBC's ? placeholders.
    static final String CREATE_USER = "INSERT INTO users (email, password) VALUES (?, ?) RETURNING id";
    static final String GET_USER = "SELECT id, email FROM users WHERE id = ?";

    /** MAX_LENGTH is the column size, varchar(255), in code points. */
    static final int MAX_LENGTH = 255;

    private final Database db;

    /** UsersService runs its statements on the PostgreSQL pool. */
    public UsersService(Database db) {
        this.db = db;
    }

    /** register adds POST /user and GET /user/{id} to routes. */
    public void register(Routes routes) {
        routes.post("/user", this::create).get("/user/{id}", this::get);
    }

    /** create stores a user and answers 201 with its Location. */
    void create(ServerRequest req, ServerResponse res) {
        JsonBody body = JsonBody.read(req, "email", "password");
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
                long id = rs.getLong(1);
                res.header(HeaderNames.LOCATION, "/user/" + id);
                Routes.send(res, 201, Json.object().put("id", id).put("message", "User created").bytes());
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }

    /** get answers a user's id and email. */
    void get(ServerRequest req, ServerResponse res) {
        long id = JsonBody.pathInteger(req.path().pathParameters().get("id"), "id", 1, JsonBody.MAX_ID);
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(GET_USER)) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("user not found");
                }
                Routes.send(res, 200, Json.object().put("id", rs.getLong(1)).put("email", rs.getString(2)).bytes());
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }
}
