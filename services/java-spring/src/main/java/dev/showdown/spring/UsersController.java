package dev.showdown.spring;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/** UsersController serves the users workload: one insert per sign-up on PostgreSQL. */
@RestController
public class UsersController {

    // The statements of workloads/users/queries.sql, verbatim but for JDBC's ? placeholders.
    static final String CREATE_USER = "INSERT INTO users (email, password) VALUES (?, ?) RETURNING id";
    static final String GET_USER = "SELECT id, email FROM users WHERE id = ?";

    /** MAX_LENGTH is the column size, varchar(255), in code points. */
    static final int MAX_LENGTH = 255;

    /** Created is the answer to a sign-up. */
    public record Created(long id, String message) {}

    /** User is the answer to a lookup: never the password. */
    public record User(long id, String email) {}

    private final Database db;
    private final JsonBody json;

    /** UsersController runs its statements on the PostgreSQL pool. */
    public UsersController(@Qualifier("postgres") Database db, JsonBody json) {
        this.db = db;
        this.json = json;
    }

    /** create stores a user and answers 201 with its Location. */
    @PostMapping("/user")
    public ResponseEntity<Created> create(HttpServletRequest request) throws IOException {
        JsonNode req = json.object(request);
        String email = JsonBody.string(req, "email", MAX_LENGTH);
        String password = JsonBody.string(req, "password", MAX_LENGTH);
        if (email.indexOf('@') < 0) {
            throw ApiException.badRequest("email must contain @");
        }
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(CREATE_USER)) {
            ps.setString(1, email);
            ps.setString(2, password);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long id = rs.getLong(1);
                return ResponseEntity.created(URI.create("/user/" + id)).body(new Created(id, "User created"));
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }

    /** get answers a user's id and email. */
    @GetMapping("/user/{id}")
    public User get(@PathVariable("id") String raw) {
        long id = JsonBody.pathInteger(raw, "id", 1, JsonBody.MAX_ID);
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
