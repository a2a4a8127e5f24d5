package dev.showdown.micronaut;

import io.micronaut.core.async.publisher.Publishers;
import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.MediaType;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.http.annotation.Filter;
import io.micronaut.http.filter.HttpServerFilter;
import io.micronaut.http.filter.ServerFilterChain;
import io.micronaut.http.filter.ServerFilterPhase;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ContractFilter runs before Micronaut's router handles a request: it answers what the contract fixes
 * for every path (RouteTable: 404, 405 with Allow, 400 for a malformed path parameter, and 413 for a
 * declared body over 1 MiB), records the request meters under the route pattern, and, with
 * LOG_REQUESTS=true, logs one JSON line per request.
 */
@Filter(Filter.MATCH_ALL_PATTERN)
public class ContractFilter implements HttpServerFilter {

    /** UNANSWERED is the request attribute of a request whose connection was closed unanswered. */
    static final String UNANSWERED = "showdown.unanswered";

    private static final Logger log = LoggerFactory.getLogger("http.request");

    /** IN_FLIGHT counts the requests between the filter and their answer, for the shutdown's drain. */
    static final AtomicInteger IN_FLIGHT = new AtomicInteger();

    /** draining is set by SIGTERM; every answer then carries Connection: close. */
    static volatile boolean draining;

    private final RequestMetrics metrics;
    private final boolean logRequests = "true".equalsIgnoreCase(System.getenv("LOG_REQUESTS"));

    /** ContractFilter records into metrics. */
    public ContractFilter(RequestMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public int getOrder() {
        return ServerFilterPhase.FIRST.order();
    }

    @Override
    public Publisher<MutableHttpResponse<?>> doFilter(HttpRequest<?> request, ServerFilterChain chain) {
        long start = System.nanoTime();
        IN_FLIGHT.incrementAndGet();
        String method = request.getMethodName();
        String path = request.getUri().getRawPath();
        RouteTable.Decision d = RouteTable.decide(method, path);
        String label = d.label();
        if (!d.pass()) {
            MutableHttpResponse<?> res = error(d.status(), d.error());
            if (d.allow() != null) {
                res.header(HttpHeaders.ALLOW, d.allow());
            }
            return Publishers.just(done(request, res, label, start));
        }
        if (request.getContentLength() > JsonBody.MAX_BYTES) {
            return Publishers.just(done(request, error(413, "request body over 1 MiB"), label, start));
        }
        return Publishers.map(chain.proceed(request), res -> done(request, res, label, start));
    }

    /** error is the contract's JSON error answer. */
    static MutableHttpResponse<?> error(int status, String message) {
        return HttpResponse.status(io.micronaut.http.HttpStatus.valueOf(status))
                .contentType(MediaType.APPLICATION_JSON_TYPE)
                .body(Map.of("error", message));
    }

    private MutableHttpResponse<?> done(HttpRequest<?> request, MutableHttpResponse<?> res, String label, long start) {
        long nanos = System.nanoTime() - start;
        IN_FLIGHT.decrementAndGet();
        if (draining) {
            res.header(HttpHeaders.CONNECTION, "close");
        }
        int status = request.getAttribute(UNANSWERED).isPresent() ? 0 : res.code();
        metrics.record(label, status, nanos);
        if (logRequests) {
            log.atInfo()
                    .setMessage("request")
                    .addKeyValue("method", request.getMethodName())
                    .addKeyValue("path", request.getUri().getRawPath())
                    .addKeyValue("status", status)
                    .addKeyValue("duration_ms", nanos / 1e6)
                    .log();
        }
        return res;
    }
}
