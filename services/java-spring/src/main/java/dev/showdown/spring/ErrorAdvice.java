package dev.showdown.spring;

import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponse;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.HandlerMapping;

/**
 * ErrorAdvice turns every failure into the contract's JSON error {"error":"..."}: the service's own
 * ApiException, Spring MVC's 404 and 405 (with its Allow header), any other 4xx Spring raises, and,
 * as a last resort, a 500 for a bug, which is logged.
 */
@RestControllerAdvice
public class ErrorAdvice {

    private static final Logger log = LoggerFactory.getLogger(ErrorAdvice.class);

    /** ErrorBody is the contract's error answer. */
    public record ErrorBody(String error) {}

    private final Routes routes;

    /** ErrorAdvice looks up route patterns in routes to label 405 answers. */
    public ErrorAdvice(Routes routes) {
        this.routes = routes;
    }

    /** api answers an ApiException as it says. */
    @ExceptionHandler(ApiException.class)
    public ResponseEntity<ErrorBody> api(ApiException e) {
        return ResponseEntity.status(e.status()).body(new ErrorBody(e.getMessage()));
    }

    /**
     * unresolved answers nothing: a transfer whose COMMIT's outcome stayed unknown is left unanswered,
     * and TomcatConfig's valve closes the connection (the truth is "unknown", not an error).
     */
    @ExceptionHandler(InDoubt.Unresolved.class)
    public void unresolved(HttpServletRequest request) {
        request.setAttribute(TomcatConfig.CLOSE_UNANSWERED, Boolean.TRUE);
    }

    /** methodNotAllowed answers 405 with Allow, labelled with the route the path matched. */
    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    public ResponseEntity<ErrorBody> methodNotAllowed(HttpRequestMethodNotSupportedException e,
                                                      HttpServletRequest request) {
        String route = routes.match(request.getRequestURI());
        if (route != null) {
            request.setAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE, route);
        }
        return ResponseEntity.status(405)
                .headers(e.getHeaders())
                .body(new ErrorBody("method " + e.getMethod() + " not allowed; allowed: "
                        + String.join(", ", e.getHeaders().getOrEmpty(HttpHeaders.ALLOW))));
    }

    /** other answers every other exception: Spring's own 4xx as JSON, anything else 500. */
    @ExceptionHandler(Exception.class)
    public ResponseEntity<ErrorBody> other(Exception e) {
        if (e instanceof ErrorResponse r && r.getStatusCode().is4xxClientError()) {
            HttpStatusCode status = r.getStatusCode();
            return ResponseEntity.status(status).headers(r.getHeaders()).body(new ErrorBody(message(status)));
        }
        log.error("unexpected error", e);
        return ResponseEntity.status(500).body(new ErrorBody("internal error"));
    }

    /** message is a short text for a status: "not found" for 404. */
    static String message(HttpStatusCode status) {
        HttpStatus s = HttpStatus.resolve(status.value());
        return s == null ? "error " + status.value() : s.getReasonPhrase().toLowerCase();
    }
}
