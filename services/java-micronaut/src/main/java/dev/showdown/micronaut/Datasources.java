package dev.showdown.micronaut;

import com.zaxxer.hikari.HikariDataSource;
import io.micronaut.context.BeanContext;
import io.micronaut.inject.qualifiers.Qualifiers;
import jakarta.inject.Singleton;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Datasources holds the service's two Hikari pools, the datasources "postgres" and "mysql" that
 * Micronaut SQL builds from the configuration Application sets. A datasource that is not configured
 * (its URL unset) gives a Database without a pool, which answers 503 "database not configured".
 */
@Singleton
public class Datasources {

    private final Database postgres;
    private final Database mysql;

    /** Datasources looks both datasources up in ctx. */
    public Datasources(BeanContext ctx) {
        this.postgres = database("PostgreSQL", ctx, "postgres");
        this.mysql = database("MariaDB", ctx, "mysql");
    }

    /** postgres is the PostgreSQL database of DATABASE_URL (bank, users). */
    public Database postgres() {
        return postgres;
    }

    /** mysql is the MariaDB/MySQL database of MYSQL_URL (sku). */
    public Database mysql() {
        return mysql;
    }

    private static Database database(String name, BeanContext ctx, String bean) {
        DataSource ds = ctx.findBean(DataSource.class, Qualifiers.byName(bean)).orElse(null);
        if (ds == null) {
            return new Database(name, null, c -> { }, c -> { });
        }
        HikariDataSource pool;
        try {
            pool = ds instanceof HikariDataSource h ? h : ds.unwrap(HikariDataSource.class);
        } catch (SQLException e) {
            throw new IllegalStateException("datasource " + bean + " is not a Hikari pool", e);
        }
        // Hikari checks a connection idle for over 0.5 s before lending it (isValid under the
        // validation timeout), so Database's own check has nothing to do.
        return new Database(name, pool, pool::evictConnection, c -> { });
    }
}
