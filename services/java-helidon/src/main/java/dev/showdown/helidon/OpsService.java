package dev.showdown.helidon;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** OpsService serves what every service has whatever its workloads: /health and /metrics. */
public final class OpsService implements AutoCloseable {

    /** PING_TIMEOUT_MS bounds each database ping of /health. */
    static final long PING_TIMEOUT_MS = 1_000;

    private final Database postgres;
    private final Database mysql;
    private final RequestMetrics metrics;
    private final ExecutorService pings = Executors.newVirtualThreadPerTaskExecutor();

    /** OpsService pings both databases and scrapes metrics. */
    public OpsService(Database postgres, Database mysql, RequestMetrics metrics) {
        this.postgres = postgres;
        this.mysql = mysql;
        this.metrics = metrics;
    }

    /** register adds GET /health and GET /metrics to routes. */
    public void register(Routes routes) {
        routes.get("/health", this::health).get("/metrics", this::metrics);
    }

    /** health answers 200 once every configured database answers a ping within 1 s, else 503. */
    void health(ServerRequest req, ServerResponse res) {
        CompletableFuture<Boolean> pg = postgres.ping(pings, PING_TIMEOUT_MS);
        CompletableFuture<Boolean> my = mysql.ping(pings, PING_TIMEOUT_MS);
        StringBuilder down = new StringBuilder();
        if (!pg.join()) {
            down.append(postgres.name());
        }
        if (!my.join()) {
            down.append(down.isEmpty() ? "" : " and ").append(mysql.name());
        }
        if (!down.isEmpty()) {
            throw new ApiException(503, down + " unreachable");
        }
        Routes.send(res, 200, Json.object().put("status", "ok").bytes());
    }

    /** metrics writes the Prometheus text exposition of every meter. */
    void metrics(ServerRequest req, ServerResponse res) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 << 10);
        metrics.scrape(out);
        res.header(HeaderNames.CONTENT_TYPE, RequestMetrics.CONTENT_TYPE);
        res.send(out.toByteArray());
    }

    /** close stops the ping executor at shutdown. */
    @Override
    public void close() {
        pings.shutdownNow();
    }
}
