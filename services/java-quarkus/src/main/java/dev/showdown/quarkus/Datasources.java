package dev.showdown.quarkus;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.AgroalPoolInterceptor;
import io.quarkus.agroal.DataSource;
import io.quarkus.arc.InjectableInstance;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * Datasources holds the service's two Agroal pools, Quarkus datasources named "postgres" and "mysql"
 * (application.properties). The contract's URLs (postgres://..., mysql://...) are not JDBC URLs, so
 * configure, called before Quarkus starts, sets each datasource's JDBC URL and credentials as system
 * properties, or deactivates the datasource when its variable is unset: an inactive datasource gets
 * a Database without a pool, which answers 503 "database not configured".
 */
@ApplicationScoped
@Startup
public class Datasources {

    private final Database postgres;
    private final Database mysql;

    /** Datasources wraps the two datasources, active or not. */
    @Inject
    public Datasources(@DataSource("postgres") InjectableInstance<AgroalDataSource> postgres,
                       @DataSource("mysql") InjectableInstance<AgroalDataSource> mysql) {
        this.postgres = database("PostgreSQL", postgres);
        this.mysql = database("MariaDB", mysql);
    }

    /** postgres is the PostgreSQL database of DATABASE_URL (bank, users). */
    public Database postgres() {
        return postgres;
    }

    /** mysql is the MariaDB/MySQL database of MYSQL_URL (sku). */
    public Database mysql() {
        return mysql;
    }

    private static Database database(String name, InjectableInstance<AgroalDataSource> ds) {
        if (!ds.getHandle().getBean().isActive()) {
            return new Database(name, null, c -> { }, c -> { });
        }
        AgroalDataSource pool = ds.get();
        IdleCheck idle = new IdleCheck();
        pool.setPoolInterceptors(List.of(idle));
        return new Database(name, pool, Datasources::discard, idle);
    }

    /**
     * discard closes the physical connection under c at once (abort) and makes the pool drop it: a
     * use of the closed connection through Agroal's wrapper fails with a connection-class SQLSTATE
     * (08...), which the database kind's exception sorter takes as fatal, so the connection is
     * destroyed when c is handed back instead of being lent again. Agroal has no per-connection
     * eviction in its API.
     */
    static void discard(Connection c) {
        try {
            c.unwrap(Connection.class).abort(DIRECT);
        } catch (SQLException | RuntimeException e) {
            // already broken
        }
        try {
            c.createStatement().close();
        } catch (SQLException expected) {
            // "connection closed": the wrapper has marked the connection for destruction
        }
        try {
            c.close();
        } catch (SQLException e) {
            // handing back a broken connection
        }
    }

    /** DIRECT runs the drivers' abort and network-timeout work on the calling thread. */
    private static final Executor DIRECT = Runnable::run;

    /**
     * IdleCheck checks a connection that sat in the pool for over a second before it is lent:
     * isValid with a 1 s limit, under a 1 s network timeout (MariaDB Connector/J's isValid does not
     * bound its own wait, so a hung server would hold it). A connection that fails is discarded and
     * the borrow fails (503) at once, within the contract's 3 s, instead of trying the pool's other
     * idle connections one after another, as Agroal's own foreground validation does (its loop is
     * not bounded by the acquisition timeout). It also records when each connection is made and when it comes back.
     */
    static final class IdleCheck implements AgroalPoolInterceptor, Database.Lend {

        /** IDLE_NANOS is how long a connection may sit unused before it is checked: 1 s. */
        static final long IDLE_NANOS = 1_000_000_000L;

        private final Map<Connection, Long> returned = new ConcurrentHashMap<>();

        @Override
        public void onConnectionCreate(Connection c) {
            onConnectionReturn(c); // a new connection that waits to be lent is idle from now on
        }

        @Override
        public void onConnectionReturn(Connection c) {
            Connection raw = raw(c);
            if (raw != null) {
                returned.put(raw, System.nanoTime());
            }
        }

        @Override
        public void onConnectionDestroy(Connection c) {
            Connection raw = raw(c);
            if (raw != null) {
                returned.remove(raw);
            }
        }

        @Override
        public void check(Connection c) throws SQLException {
            Connection raw = raw(c);
            Long at = raw == null ? null : returned.get(raw);
            if (at == null || System.nanoTime() - at < IDLE_NANOS) {
                return;
            }
            boolean ok;
            try {
                int before = raw.getNetworkTimeout();
                raw.setNetworkTimeout(DIRECT, 1_000);
                ok = raw.isValid(1);
                if (ok) {
                    raw.setNetworkTimeout(DIRECT, before);
                }
            } catch (SQLException | RuntimeException e) {
                ok = false;
            }
            if (!ok) {
                returned.remove(raw);
                discard(c);
                throw new SQLTransientConnectionException("a pooled connection failed its check after being idle");
            }
        }

        private static Connection raw(Connection c) {
            try {
                return c.unwrap(Connection.class);
            } catch (SQLException | RuntimeException e) {
                return null;
            }
        }
    }

    /** configure sets the datasources' runtime configuration from DATABASE_URL and MYSQL_URL. */
    static void configure() {
        String pg = System.getenv("DATABASE_URL");
        if (blank(pg)) {
            System.setProperty("quarkus.datasource.postgres.active", "false");
        } else {
            DbUrl u = DbUrl.parse("DATABASE_URL", pg, "postgres", "postgresql");
            String sslmode = u.param("sslmode");
            set("postgres", "jdbc:postgresql://" + u.hostPort(5432) + "/" + u.database()
                    + "?sslmode=" + (sslmode == null ? "disable" : sslmode), u);
        }
        String my = System.getenv("MYSQL_URL");
        if (blank(my)) {
            System.setProperty("quarkus.datasource.mysql.active", "false");
        } else {
            DbUrl u = DbUrl.parse("MYSQL_URL", my, "mysql", "mariadb");
            set("mysql", "jdbc:mariadb://" + u.hostPort(3306) + "/" + u.database(), u);
        }
    }

    private static void set(String name, String jdbcUrl, DbUrl u) {
        String p = "quarkus.datasource." + name + ".";
        System.setProperty(p + "jdbc.url", jdbcUrl);
        if (u.user() != null) {
            System.setProperty(p + "username", u.user());
        }
        if (u.password() != null) {
            System.setProperty(p + "password", u.password());
        }
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
