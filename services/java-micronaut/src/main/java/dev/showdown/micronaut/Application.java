package dev.showdown.micronaut;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.Micronaut;
import io.micronaut.serde.annotation.SerdeImport;
import java.util.HashMap;
import java.util.Map;
import sun.misc.Signal;

/**
 * Application starts Micronaut with the contract's environment turned into its configuration: HOST
 * and PORT for the Netty server, and the Hikari datasources "postgres" and "mysql" of Micronaut SQL
 * from DATABASE_URL and MYSQL_URL (postgres://... and mysql://... are not JDBC URLs), each sized
 * DB_POOL_SIZE. An unset URL defines no datasource, and its workloads answer 503. SIGTERM stops the
 * context (graceful shutdown: in-flight requests finish) and exits 0.
 */
@SerdeImport(Text.Upper.class)
@SerdeImport(Text.Count.class)
@SerdeImport(Bank.Client.class)
@SerdeImport(Bank.Transfer.class)
@SerdeImport(Bank.Balance.class)
@SerdeImport(Users.Created.class)
@SerdeImport(Users.User.class)
@SerdeImport(Sku.Row.class)
public final class Application {

    private Application() {}

    /** main configures Micronaut from the environment and runs until SIGTERM. */
    public static void main(String[] args) {
        ApplicationContext ctx = Micronaut.build(args)
                .mainClass(Application.class)
                .properties(properties())
                .banner(false)
                .start();
        Signal.handle(new Signal("TERM"), s -> stop(ctx));
        Signal.handle(new Signal("INT"), s -> stop(ctx));
        if (Boolean.getBoolean("showdown.cds")) {
            // build.sh's training start: the JVM records its class-data-sharing archive at this exit.
            ctx.stop();
            System.exit(0);
        }
    }

    /** DRAIN_MILLIS is how long answers say Connection: close before the drain waits for the last ones. */
    static final long DRAIN_MILLIS = 1_000;

    /** GRACE_MILLIS bounds the wait for requests in flight, within the contract's 10 s. */
    static final long GRACE_MILLIS = 6_000;

    /**
     * stop drains and exits 0: from the signal on every answer says Connection: close, so clients
     * move off their keep-alive connections; after DRAIN_MILLIS it waits, up to GRACE_MILLIS, until no
     * request is in flight (a request whose body is still on its way included: Micronaut's own
     * graceful shutdown closes such a connection), then stops the context (the server, then the
     * pools). The JVM's own SIGTERM handling would exit 143.
     */
    private static void stop(ApplicationContext ctx) {
        Thread.ofPlatform().name("shutdown").start(() -> {
            ContractFilter.draining = true;
            try {
                Thread.sleep(DRAIN_MILLIS);
                long deadline = System.nanoTime() + GRACE_MILLIS * 1_000_000;
                while (ContractFilter.IN_FLIGHT.get() > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ctx.stop();
            System.exit(0);
        });
    }

    /** properties is the configuration the environment sets (application.yml holds the rest). */
    static Map<String, Object> properties() {
        Map<String, Object> p = new HashMap<>();
        p.put("micronaut.server.host", env("HOST", "127.0.0.1"));
        p.put("micronaut.server.port", Integer.parseInt(env("PORT", "8080")));
        int size = poolSize();
        String pg = System.getenv("DATABASE_URL");
        if (pg != null && !pg.isBlank()) {
            DbUrl u = DbUrl.parse("DATABASE_URL", pg, "postgres", "postgresql");
            String sslmode = u.param("sslmode");
            pool(p, "postgres", "jdbc:postgresql://" + u.hostPort(5432) + "/" + u.database()
                    + "?sslmode=" + (sslmode == null ? "disable" : sslmode)
                    + "&connectTimeout=2"     // seconds: TCP connect to a dead host
                    + "&loginTimeout=2"       // seconds: connect + authentication
                    + "&socketTimeout=30"     // seconds: a safety net against a hung server, not a deadline
                    + "&tcpKeepAlive=true"
                    + "&ApplicationName=showdown-java-micronaut", u, size);
            p.put("datasources.postgres.transaction-isolation", "TRANSACTION_READ_COMMITTED");
        }
        String my = System.getenv("MYSQL_URL");
        if (my != null && !my.isBlank()) {
            DbUrl u = DbUrl.parse("MYSQL_URL", my, "mysql", "mariadb");
            pool(p, "mysql", "jdbc:mariadb://" + u.hostPort(3306) + "/" + u.database()
                    + "?connectTimeout=2000&socketTimeout=30000&tcpKeepAlive=true", u, size);
        }
        return p;
    }

    /**
     * pool is one Hikari datasource: a fixed pool of size connections that keeps idle ones open, a 2
     * s bounded wait for a connection (503 within the contract's 3 s), a 1 s validation of a
     * connection idle for over a second (Hikari's own check), and a start that never fails on a
     * database that is down (the pool fills in the background).
     */
    private static void pool(Map<String, Object> p, String name, String jdbcUrl, DbUrl u, int size) {
        String k = "datasources." + name + ".";
        p.put(k + "url", jdbcUrl);
        if (u.user() != null) {
            p.put(k + "username", u.user());
        }
        if (u.password() != null) {
            p.put(k + "password", u.password());
        }
        p.put(k + "pool-name", name);
        p.put(k + "maximum-pool-size", size);
        p.put(k + "minimum-idle", size);
        p.put(k + "connection-timeout", 2000);
        p.put(k + "validation-timeout", 1000);
        p.put(k + "initialization-fail-timeout", -1);
    }

    /** poolSize is DB_POOL_SIZE (default 20), the maximum connections of each pool. */
    static int poolSize() {
        String v = System.getenv("DB_POOL_SIZE");
        if (v == null || v.isBlank()) {
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

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v.trim();
    }
}
