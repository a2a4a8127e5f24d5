package dev.showdown.spring;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** SkuController serves the sku workload: a read-heavy lookup on MariaDB/MySQL. */
@RestController
public class SkuController {

    // The statement of workloads/sku/queries.sql, verbatim.
    static final String GET_SKU = "SELECT id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr FROM purch_sku_master WHERE sku_id = ?";

    /** Sku is one row of purch_sku_master. */
    public record Sku(
            long id,
            @JsonProperty("mem_id") long memId,
            @JsonProperty("mem_code") String memCode,
            @JsonProperty("sku_id") long skuId,
            @JsonProperty("sku_code") String skuCode,
            String item,
            @JsonProperty("sku_name") String skuName,
            @JsonProperty("sku_abbr") String skuAbbr) {}

    private final Database db;

    /** SkuController runs its statement on the MariaDB/MySQL pool. */
    public SkuController(@Qualifier("mysql") Database db) {
        this.db = db;
    }

    /** get answers the row of one sku_id. */
    @GetMapping("/sku/{sku_id}")
    public Sku get(@PathVariable("sku_id") String raw) {
        long skuId = JsonBody.pathInteger(raw, "sku_id", 1, JsonBody.MAX_ID);
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(GET_SKU)) {
            ps.setLong(1, skuId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("sku not found");
                }
                return new Sku(rs.getLong(1), rs.getLong(2), rs.getString(3), rs.getLong(4),
                        rs.getString(5), rs.getString(6), rs.getString(7), rs.getString(8));
            }
        } catch (SQLException e) {
            throw db.failure(e);
        }
    }
}
