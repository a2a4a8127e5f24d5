package dev.showdown.spring;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.HandlerMapping;

/**
 * RequestFilter wraps every request: it refuses a declared body over 1 MiB with 413 before anything
 * reads it, answers 404 for a path with a literal dot segment and 400 for one with a ';' (Tomcat and
 * Spring would otherwise strip ";..." as path parameters, so /client/1;DROP/balance would read client 1),
 * records the request meters under the matched route pattern ("unmatched" when no route
 * matched) and, when LOG_REQUESTS=true, logs one JSON line per request.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
public class RequestFilter extends OncePerRequestFilter {

    /** UNMATCHED is the route label of a request that matched no route. */
    static final String UNMATCHED = "unmatched";

    private static final Logger log = LoggerFactory.getLogger("http.request");
    private static final byte[] NOT_FOUND = "{\"error\":\"not found\"}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] MALFORMED_PATH = "{\"error\":\"malformed path: ';' is not allowed\"}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] TOO_LARGE = "{\"error\":\"request body over 1 MiB\"}".getBytes(StandardCharsets.UTF_8);

    private final RequestMetrics metrics;
    private final Routes routes;
    private final boolean logRequests = "true".equalsIgnoreCase(System.getenv("LOG_REQUESTS"));

    /** RequestFilter records into metrics, labelling early answers with routes. */
    public RequestFilter(RequestMetrics metrics, Routes routes) {
        this.metrics = metrics;
        this.routes = routes;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long start = System.nanoTime();
        if (Application.draining) {
            // Shutting down: close this keep-alive connection after the answer (see Application).
            response.setHeader("Connection", "close");
        }
        try {
            if (request.getContentLengthLong() > JsonBody.MAX_BYTES) {
                String route = routes.match(request.getRequestURI());
                if (route != null) {
                    request.setAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE, route);
                }
                write(response, 413, TOO_LARGE);
            } else if (hasDotSegment(request.getRequestURI())) {
                write(response, 404, NOT_FOUND);
            } else if (request.getRequestURI().indexOf(';') >= 0) {
                write(response, 400, MALFORMED_PATH);
            } else if ("OPTIONS".equals(request.getMethod()) && routes.allow(request.getRequestURI()) != null) {
                // No route serves OPTIONS: 405 with Allow and a JSON body, as for any other method
                // and as the other stacks answer, rather than Spring's automatic empty 200.
                String uri = request.getRequestURI();
                String allow = routes.allow(uri);
                request.setAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE, routes.match(uri));
                response.setHeader("Allow", allow);
                write(response, 405, ("{\"error\":\"method OPTIONS not allowed; allowed: " + allow + "\"}")
                        .getBytes(StandardCharsets.UTF_8));
            } else {
                chain.doFilter(request, response);
            }
        } finally {
            long nanos = System.nanoTime() - start;
            Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
            String route = pattern == null ? UNMATCHED : pattern.toString();
            int status = request.getAttribute(TomcatConfig.CLOSE_UNANSWERED) != null ? 0 : response.getStatus(); // 0: no answer
            metrics.record(route, status, nanos);
            if (logRequests) {
                log.atInfo()
                        .setMessage("request")
                        .addKeyValue("method", request.getMethod())
                        .addKeyValue("path", request.getRequestURI())
                        .addKeyValue("status", status)
                        .addKeyValue("duration_ms", nanos / 1e6)
                        .log();
            }
        }
    }

    /**
     * hasDotSegment reports whether the raw path holds a literal "." or ".." segment. Spring MVC matches
     * routes on the raw path, so /client/../balance would reach /client/{id}/balance with id "..";
     * the contract wants such a path to match nothing: 404. An encoded %2e%2e is a malformed path
     * parameter instead (400).
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

    private static void write(HttpServletResponse response, int status, byte[] body) throws IOException {
        response.setStatus(status);
        response.setContentType("application/json");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
