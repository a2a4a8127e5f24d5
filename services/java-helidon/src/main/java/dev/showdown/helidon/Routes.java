package dev.showdown.helidon;

import io.helidon.http.Header;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Method;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;

/**
 * Routes builds the Helidon routing of the service and wraps every route's endpoint in what each
 * request shares: the contract's early answers (413 for a declared body over 1 MiB, 404 for a literal
 * dot segment, 400 for a ';' in the path), ApiException to a JSON error, any other exception to a
 * logged 500, Connection: close while draining, the request meters under the route pattern and,
 * with LOG_REQUESTS=true, one log line. After the routes it adds, per pattern, a 405 with Allow for
 * the other methods (OPTIONS included), and last a JSON 404 for every other path, labelled
 * "unmatched".
 */
public final class Routes {

    /** UNMATCHED is the route label of a request that matched no route. */
    public static final String UNMATCHED = "unmatched";

    /** Endpoint answers one request; it throws ApiException for the contract's error answers. */
    @FunctionalInterface
    public interface Endpoint {
        /** handle answers req on res. */
        void handle(ServerRequest req, ServerResponse res) throws Exception;
    }

    private final HttpRouting.Builder routing = HttpRouting.builder();
    private final RequestMetrics metrics;
    private final RequestMetrics.Route unmatched;
    private final boolean logRequests;
    private final Map<String, TreeSet<String>> methods = new LinkedHashMap<>();

    private final AtomicInteger inFlight = new AtomicInteger(); // requests being served

    /** Routes records into metrics and, when logRequests, logs every request. */
    public Routes(RequestMetrics metrics, boolean logRequests) {
        this.metrics = metrics;
        this.unmatched = metrics.route(UNMATCHED);
        this.logRequests = logRequests;
    }

    /** get routes GET pattern to endpoint. */
    public Routes get(String pattern, Endpoint endpoint) {
        return add(Method.GET, pattern, endpoint);
    }

    /** post routes POST pattern to endpoint. */
    public Routes post(String pattern, Endpoint endpoint) {
        return add(Method.POST, pattern, endpoint);
    }

    private Routes add(Method method, String pattern, Endpoint endpoint) {
        methods.computeIfAbsent(pattern, k -> new TreeSet<>()).add(method.text());
        routing.route(method, pattern, handler(metrics.route(pattern), endpoint));
        return this;
    }

    /** routing adds the 405 and 404 fallbacks and returns Helidon's routing. Call it once, last. */
    public HttpRouting.Builder routing() {
        methods.forEach((pattern, ms) -> {
            String allow = String.join(", ", ms);
            Header allowHeader = HeaderValues.create(HeaderNames.ALLOW, allow);
            routing.any(pattern, handler(metrics.route(pattern), (req, res) -> {
                res.header(allowHeader);
                throw new ApiException(405, "method " + req.prologue().method().text() + " not allowed; allowed: " + allow);
            }));
        });
        routing.any(handler(unmatched, (req, res) -> {
            throw ApiException.notFound("not found");
        }));
        return routing;
    }

    private Handler handler(RequestMetrics.Route route, Endpoint endpoint) {
        return (req, res) -> serve(route, endpoint, req, res);
    }

    /**
     * awaitInFlight waits, at most maxMillis, until no request is being served, and returns whether
     * that happened. Call it once no new connections are taken (Closing), so that the count can fall.
     */
    public boolean awaitInFlight(long maxMillis) throws InterruptedException {
        long deadline = System.nanoTime() + maxMillis * 1_000_000;
        while (inFlight.get() > 0) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    private void serve(RequestMetrics.Route route, Endpoint endpoint, ServerRequest req, ServerResponse res) {
        inFlight.incrementAndGet();
        try {
            serve0(route, endpoint, req, res);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    private void serve0(RequestMetrics.Route route, Endpoint endpoint, ServerRequest req, ServerResponse res) {
        long start = System.nanoTime();
        RequestMetrics.Route r = route;
        boolean closed = false;
        if (Main.draining) {
            res.header(HeaderValues.CONNECTION_CLOSE); // shutting down: clients move off this connection
        }
        try {
            String raw = req.prologue().uriPath().rawPath();
            if (hasDotSegment(raw)) {
                // Helidon normalises /count/../uppercase to /uppercase; to the contract it matches nothing.
                r = unmatched;
                throw ApiException.notFound("not found");
            }
            if (raw.indexOf(';') >= 0) {
                // Helidon strips ";..." as path parameters: /client/1;DROP/balance would read client 1.
                throw ApiException.badRequest("malformed path: ';' is not allowed");
            }
            if (JsonBody.tooLarge(req)) {
                throw new ApiException(413, "request body over 1 MiB");
            }
            endpoint.handle(req, res);
        } catch (CloseConnectionException e) {
            // Helidon closes the connection without an answer (an in-doubt COMMIT left unresolved).
            closed = true;
            throw e;
        } catch (ApiException e) {
            send(res, e.status(), Json.error(e.getMessage()));
        } catch (Exception e) {
            Logs.APP.log(Level.SEVERE, "unexpected error", e);
            send(res, 500, Json.error("internal error"));
        } finally {
            long nanos = System.nanoTime() - start;
            int status = closed ? 0 : res.status().code(); // 0: no answer
            r.record(status, nanos);
            if (logRequests) {
                Logs.info(Logs.REQUEST, "request",
                        "method", req.prologue().method().text(),
                        "path", req.prologue().uriPath().rawPath(),
                        "status", status,
                        "duration_ms", nanos / 1e6);
            }
        }
    }

    /** send answers status with a JSON body, unless an answer has already gone out. */
    public static void send(ServerResponse res, int status, byte[] json) {
        if (res.isSent()) {
            return;
        }
        res.status(status);
        res.header(HeaderValues.CONTENT_TYPE_JSON);
        res.send(json);
    }

    /**
     * hasDotSegment reports whether the raw path holds a literal "." or ".." segment. An encoded %2e%2e
     * is not one: it reaches the route as a malformed path parameter (400).
     */
    static boolean hasDotSegment(String path) {
        int n = path.length();
        for (int start = 0; start < n; ) {
            int end = path.indexOf('/', start);
            if (end < 0) {
                end = n;
            }
            int len = end - start;
            if ((len == 1 || len == 2) && path.charAt(start) == '.' && (len == 1 || path.charAt(start + 1) == '.')) {
                return true;
            }
            start = end + 1;
        }
        return false;
    }
}
