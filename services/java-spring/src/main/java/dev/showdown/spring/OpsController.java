package dev.showdown.spring;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** OpsController serves what every service has whatever its workloads: /health and /metrics. */
@RestController
public class OpsController implements DisposableBean {

    /** PING_TIMEOUT_MS bounds each database ping of /health. */
    static final long PING_TIMEOUT_MS = 1_000;

    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private final Database postgres;
    private final Database mysql;
    private final PrometheusMeterRegistry registry;
    private final ExecutorService pings = Executors.newVirtualThreadPerTaskExecutor();

    /** OpsController pings both databases and scrapes registry. */
    public OpsController(@Qualifier("postgres") Database postgres, @Qualifier("mysql") Database mysql,
                         PrometheusMeterRegistry registry) {
        this.postgres = postgres;
        this.mysql = mysql;
        this.registry = registry;
    }

    /** health answers 200 once every configured database answers a ping within 1 s, else 503. */
    @GetMapping("/health")
    public ResponseEntity<Map<String, String>> health() {
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
            return ResponseEntity.status(503).body(Map.of("error", down + " unreachable"));
        }
        return ResponseEntity.ok(Map.of("status", "ok"));
    }

    /** metrics writes the Prometheus text exposition of every meter. */
    @GetMapping("/metrics")
    public void metrics(HttpServletResponse response) throws IOException {
        response.setContentType(PROMETHEUS_TEXT);
        try (OutputStream out = response.getOutputStream()) {
            registry.scrape(out);
        }
    }

    /** destroy stops the ping executor at shutdown. */
    @Override
    public void destroy() {
        pings.shutdownNow();
    }
}
