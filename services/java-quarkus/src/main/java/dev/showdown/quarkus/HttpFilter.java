package dev.showdown.quarkus;

import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;
import org.jboss.logging.MDC;

/**
 * HttpFilter runs on the event loop before Quarkus REST sees a request: it answers what the contract
 * fixes for every path (RouteTable: 404, 405 with Allow, 400 for a malformed path parameter, and 413
 * for a declared body over 1 MiB), records the request meters under the route pattern, and, with
 * LOG_REQUESTS=true, logs one JSON line per request.
 */
@ApplicationScoped
public class HttpFilter {

    /** UNANSWERED marks a request whose connection was closed without an answer (status 0). */
    static final String UNANSWERED = "showdown.unanswered";

    private static final Logger log = Logger.getLogger("http.request");

    private final RequestMetrics metrics;
    private final boolean logRequests = "true".equalsIgnoreCase(System.getenv("LOG_REQUESTS"));

    /** HttpFilter records into metrics. */
    @Inject
    public HttpFilter(RequestMetrics metrics) {
        this.metrics = metrics;
    }

    /** register installs the filter ahead of every route. */
    void register(@Observes Filters filters) {
        filters.register(this::handle, 1000);
    }

    void handle(RoutingContext rc) {
        long start = System.nanoTime();
        HttpServerRequest req = rc.request();
        String method = req.method().name();
        String path = req.path();
        RouteTable.Decision d = RouteTable.decide(method, path);
        String label = d.label();
        rc.addEndHandler(v -> {
            long nanos = System.nanoTime() - start;
            int status = rc.get(UNANSWERED) != null ? 0 : rc.response().getStatusCode();
            metrics.record(label, status, nanos);
            if (logRequests) {
                MDC.put("method", method);
                MDC.put("path", path);
                MDC.put("status", status);
                MDC.put("duration_ms", nanos / 1e6);
                log.info("request");
                MDC.clear();
            }
        });
        if (!d.pass()) {
            if (d.allow() != null) {
                rc.response().putHeader(HttpHeaders.ALLOW, d.allow());
            }
            Errors.send(rc, d.status(), d.error());
            return;
        }
        String length = req.getHeader(HttpHeaders.CONTENT_LENGTH);
        if (length != null && tooLarge(length)) {
            Errors.send(rc, 413, "request body over 1 MiB");
            return;
        }
        rc.next();
    }

    private static boolean tooLarge(String length) {
        try {
            return Long.parseLong(length.trim()) > JsonBody.MAX_BYTES;
        } catch (NumberFormatException e) {
            return false; // Vert.x refuses a malformed Content-Length itself
        }
    }
}
