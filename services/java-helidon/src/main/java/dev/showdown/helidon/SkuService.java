package dev.showdown.helidon;

import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** SkuService serves the sku workload: a read-heavy lookup on MariaDB/MySQL. */
public final class SkuService {

    // The statement of workloads/sku/queries.sql, verbatim.
    static final String GET_SKU = "SELECT id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr FROM purch_sku_master WHERE sku_id = ?";

    private final Database db;

    /** SkuService runs its statement on the MariaDB/MySQL pool. */
    public SkuService(Database db) {
        this.db = db;
    }

    /** register adds GET /sku/{sku_id} to routes. */
    public void register(Routes routes) {
        routes.get("/sku/{sku_id}", this::get);
    }

    /** get answers the row of one sku_id. */
    void get(ServerRequest req, ServerResponse res) {
        long skuId = JsonBody.pathInteger(req.path().pathParameters().get("sku_id"), "sku_id", 1, JsonBody.MAX_ID);
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(GET_SKU)) {
            ps.setLong(1, skuId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("sku not found");
                }
                Routes.send(res, 200, Json.object()
                        .put("id", rs.getLong(1))
                        .put("mem_id", rs.getLong(2))
                        .put("mem_code", rs.getString(3))
                        .put("sku_id", rs.getLong(4))
                        .put("sku_code", rs.getString(5))
                        .put("item", rs.getString(6))
                        .put("sku_name", rs.getString(7))
                        .put("sku_abbr", rs.getString(8))
                        .bytes());
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }
}
