package dev.showdown.helidon;

import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderValues;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.DirectHandlers;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import sun.misc.Signal;

/**
 * Main starts the showdown reference service on Helidon SE's web server: every workload of the
 * contract in one process, each connection served on its own virtual thread.
 */
public final class Main {

    /** DRAIN_MILLIS is how long answers say Connection: close before the server may stop. */
    static final long DRAIN_MILLIS = 500;

    /** GRACE is how long the stopping server waits for requests in flight. */
    static final Duration GRACE = Duration.ofSeconds(5);

    /** draining is set by SIGTERM; every answer then carries Connection: close. */
    static volatile boolean draining;

    private Main() {}

    /** main reads the contract's environment, builds the pools and routes, and starts the server. */
    public static void main(String[] args) {
        Logs.configure();
        String host = env("HOST", "127.0.0.1");
        int port = Integer.parseInt(env("PORT", "8080"));
        boolean logRequests = "true".equalsIgnoreCase(System.getenv("LOG_REQUESTS"));

        RequestMetrics metrics = new RequestMetrics();
        Database postgres = Pools.postgres();
        Database mysql = Pools.mysql();
        OpsService ops = new OpsService(postgres, mysql, metrics);

        Routes routes = new Routes(metrics, logRequests);
        ops.register(routes);
        new StringService().register(routes);
        new BankService(postgres, metrics).register(routes);
        new UsersService(postgres).register(routes);
        new SkuService(mysql).register(routes);

        Closing closing = new Closing();
        WebServer server = WebServer.builder()
                .host(host)
                .port(port)
                .shutdownHook(false) // SIGTERM is ours: drain, stop, close the pools, exit 0
                .shutdownGracePeriod(GRACE)
                .directHandlers(DirectHandlers.builder()
                        .addHandler(DirectHandler.EventType.BAD_REQUEST, Main::jsonError)
                        .addHandler(DirectHandler.EventType.PAYLOAD_TOO_LARGE, Main::jsonError)
                        .addHandler(DirectHandler.EventType.FORBIDDEN, Main::jsonError)
                        .addHandler(DirectHandler.EventType.INTERNAL_ERROR, Main::jsonError)
                        .addHandler(DirectHandler.EventType.OTHER, Main::jsonError)
                        .addHandler(DirectHandler.EventType.HTTP_VERSION_NOT_SUPPORTED, Main::jsonError)
                        .build())
                .addConnectionSelector(closing) // first: asked before any other about a new connection
                .addConnectionSelector(new Http10())
                .routing(routes.routing())
                .build();

        Runnable stop = () -> shutdown(server, closing, routes, ops, postgres, mysql);
        // The drain runs on a thread of its own that keeps the JVM alive: the signal's thread is a
        // daemon, and once the listener's thread ends no other thread would.
        Signal.handle(new Signal("TERM"), s -> Thread.ofPlatform().name("shutdown").daemon(false).start(stop));
        Signal.handle(new Signal("INT"), s -> Thread.ofPlatform().name("shutdown").daemon(false).start(stop));
        server.start();
        Logs.info(Logs.APP, "ready", "address", host, "port", server.port(),
                "startup_ms", ManagementFactory.getRuntimeMXBean().getUptime());
        Integer train = Integer.getInteger("showdown.train");
        if (train != null) {
            Training.run(server.port(), train);
            stop.run();
        }
    }

    /**
     * shutdown drains and exits 0. From the signal on, every answer says Connection: close, so clients
     * move off their keep-alive connections, and the listening socket is closed (Closing.closeListeners):
     * new connections are refused. After DRAIN_MILLIS it waits, up to GRACE, until no request is in
     * flight, because Helidon's stop() cuts every connection, one whose request is being served or
     * whose answer is being written included; then Helidon stops and the pools close. The JVM's own
     * SIGTERM handling would exit 143.
     */
    static void shutdown(WebServer server, Closing closing, Routes routes, OpsService ops, Database postgres, Database mysql) {
        draining = true;
        if (!Closing.closeListeners(server)) {
            closing.close();
        }
        try {
            Thread.sleep(DRAIN_MILLIS);
            if (!routes.awaitInFlight(GRACE.toMillis())) {
                Logs.APP.warning("requests still in flight after " + GRACE + "; stopping anyway");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.stop();
        ops.close();
        postgres.close();
        mysql.close();
        System.exit(0);
    }

    /**
     * jsonError answers the requests Helidon rejects before routing (a malformed request line or
     * header, bad framing) with the contract's JSON error instead of plain text.
     */
    static DirectHandler.TransportResponse jsonError(DirectHandler.TransportRequest req, DirectHandler.EventType type,
                                                     io.helidon.http.Status status,
                                                     io.helidon.http.ServerResponseHeaders headers, String message) {
        String text = status.reasonPhrase() == null ? "error " + status.code() : status.reasonPhrase().toLowerCase();
        headers.set(HeaderValues.CONTENT_TYPE_JSON);
        return DirectHandler.TransportResponse.builder()
                .status(status)
                .headers(headers)
                .keepAlive(false)
                .entity(Json.error(text))
                .build();
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v.trim();
    }
}
