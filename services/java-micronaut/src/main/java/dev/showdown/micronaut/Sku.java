package dev.showdown.micronaut;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Sku is the sku workload's logic on MariaDB/MySQL, apart from the framework: the statement of
 * workloads/sku/queries.sql verbatim, on plain JDBC.
 */
public final class Sku {

    static final String GET_SKU = "SELECT id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr FROM purch_sku_master WHERE sku_id = ?";

    /** Row is one purch_sku_master row, the answer. */
    public record Row(long id, long mem_id, String mem_code, long sku_id, String sku_code, String item,
                      String sku_name, String sku_abbr) {}

    private final Database db;

    /** Sku runs its statement on db. */
    public Sku(Database db) {
        this.db = db;
    }

    /** get answers the row of one sku_id. */
    public Row get(String rawSkuId) {
        long skuId = JsonBody.pathInteger(rawSkuId, "sku_id", 1, JsonBody.MAX_ID);
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(GET_SKU)) {
            ps.setLong(1, skuId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("sku not found");
                }
                return new Row(rs.getLong(1), rs.getLong(2), rs.getString(3), rs.getLong(4), rs.getString(5),
                        rs.getString(6), rs.getString(7), rs.getString(8));
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }
}
