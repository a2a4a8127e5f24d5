package dev.showdown.helidon;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * Pools builds the two optional pools from the contract's environment: DATABASE_URL (PostgreSQL:
 * bank, users) and MYSQL_URL (MariaDB/MySQL: sku), each sized DB_POOL_SIZE. An unset URL or a
 * database that is down at start never fails startup.
 */
public final class Pools {

    private Pools() {}

    /** CONNECTION_TIMEOUT_MS bounds a pool borrow, so a down database answers 503 well within 3 s. */
    static final long CONNECTION_TIMEOUT_MS = 2_000;

    /** postgres is the PostgreSQL pool of DATABASE_URL, or an unconfigured Database. */
    public static Database postgres() {
        String url = System.getenv("DATABASE_URL");
        if (blank(url)) {
            return new Database("PostgreSQL", null);
        }
        DbUrl u = DbUrl.parse("DATABASE_URL", url, "postgres", "postgresql");
        String sslmode = u.param("sslmode");
        String jdbc = "jdbc:postgresql://" + u.hostPort(5432) + "/" + u.database()
                + "?sslmode=" + (sslmode == null ? "disable" : sslmode)
                + "&connectTimeout=2"            // seconds: TCP connect to a dead host
                + "&loginTimeout=2"              // seconds: connect + authentication
                + "&socketTimeout=" + socketTimeout() // seconds, 0 = none: a safety net, not a deadline
                + "&tcpKeepAlive=true"
                + "&ApplicationName=showdown-java-helidon";
        HikariConfig c = pool("postgres", jdbc, u);
        c.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        return new Database("PostgreSQL", new HikariDataSource(c));
    }

    /** mysql is the MariaDB/MySQL pool of MYSQL_URL, or an unconfigured Database. */
    public static Database mysql() {
        String url = System.getenv("MYSQL_URL");
        if (blank(url)) {
            return new Database("MariaDB", null);
        }
        DbUrl u = DbUrl.parse("MYSQL_URL", url, "mysql", "mariadb");
        String jdbc = "jdbc:mariadb://" + u.hostPort(3306) + "/" + u.database()
                + "?connectTimeout=2000"         // milliseconds
                + "&socketTimeout=" + socketTimeout() * 1000 // milliseconds, as above
                + "&tcpKeepAlive=true";
        return new Database("MariaDB", new HikariDataSource(pool("mysql", jdbc, u)));
    }

    /**
     * socketTimeout is DB_SOCKET_TIMEOUT in seconds (default 30, 0 = none): the longest a driver waits
     * for a database's answer before it gives the connection up, a safety net for a hung server. On a
     * virtual thread every read under a timeout is a timed park, which the scheduler's timer thread
     * has to arm and cancel; the knob lets a plan measure that cost.
     */
    static int socketTimeout() {
        String v = System.getenv("DB_SOCKET_TIMEOUT");
        if (blank(v)) {
            return 30;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 0 && n <= 86_400) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the error below
        }
        throw new IllegalArgumentException("DB_SOCKET_TIMEOUT=" + v + ": want whole seconds, 0 .. 86400 (0 = none; default 30)");
    }

    /** poolSize is DB_POOL_SIZE (default 20), the maximum connections of each pool. */
    static int poolSize() {
        String v = System.getenv("DB_POOL_SIZE");
        if (blank(v)) {
            return 20;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the error below
        }
        throw new IllegalArgumentException("DB_POOL_SIZE=" + v + ": want a whole number >= 1 (default 20)");
    }

    private static HikariConfig pool(String name, String jdbcUrl, DbUrl u) {
        int size = poolSize();
        HikariConfig c = new HikariConfig();
        c.setPoolName(name);
        c.setJdbcUrl(jdbcUrl);
        c.setUsername(u.user());
        c.setPassword(u.password());
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(size);                  // a fixed-size pool: idle connections stay open
        c.setConnectionTimeout(CONNECTION_TIMEOUT_MS);
        c.setValidationTimeout(1_000);
        c.setInitializationFailTimeout(-1);      // start even when the database is down; fill in background
        return c;
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    /** DbUrl is a parsed scheme://user:password@host:port/dbname?params database URL. */
    record DbUrl(URI uri, String user, String password, String database) {

        static DbUrl parse(String var, String raw, String... schemes) {
            URI uri;
            try {
                uri = new URI(raw.trim());
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException(var + ": not a URL (" + e.getMessage()
                        + "); want " + schemes[0] + "://user:password@host:port/dbname");
            }
            boolean known = false;
            for (String s : schemes) {
                known |= s.equalsIgnoreCase(uri.getScheme());
            }
            String db = uri.getRawPath() == null ? "" : uri.getRawPath().replaceFirst("^/", "");
            if (!known || uri.getHost() == null || db.isEmpty()) {
                throw new IllegalArgumentException(var + "=" + redact(raw) + ": want "
                        + schemes[0] + "://user:password@host:port/dbname");
            }
            String user = null;
            String password = null;
            String info = uri.getRawUserInfo();
            if (info != null) {
                int colon = info.indexOf(':');
                user = decode(colon < 0 ? info : info.substring(0, colon));
                password = colon < 0 ? null : decode(info.substring(colon + 1));
            }
            return new DbUrl(uri, user, password, db);
        }

        String hostPort(int defaultPort) {
            return uri.getHost() + ":" + (uri.getPort() < 0 ? defaultPort : uri.getPort());
        }

        String param(String name) {
            String q = uri.getRawQuery();
            if (q == null) {
                return null;
            }
            for (String kv : q.split("&")) {
                int eq = kv.indexOf('=');
                if (eq > 0 && decode(kv.substring(0, eq)).equals(name)) {
                    return decode(kv.substring(eq + 1));
                }
            }
            return null;
        }

        private static String decode(String s) {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        }

        private static String redact(String raw) {
            return raw.replaceFirst("://([^:@/]*):[^@/]*@", "://$1:***@");
        }
    }
}
