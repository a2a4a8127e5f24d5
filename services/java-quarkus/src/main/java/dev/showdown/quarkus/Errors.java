package dev.showdown.quarkus;

import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import jakarta.ws.rs.WebApplicationException;
import java.util.Map;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * Errors makes every error answer the contract's {"error":"..."} JSON: ApiException carries its
 * status; Quarkus REST's own errors keep theirs; anything else is a bug, 500. A transfer whose COMMIT
 * outcome stayed unknown gets no answer at all: its connection is closed.
 */
public class Errors {

    private static final Logger log = Logger.getLogger(Errors.class);

    /** send writes status and {"error":message} straight on the Vert.x response. */
    static void send(RoutingContext rc, int status, String message) {
        rc.response().setStatusCode(status)
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .end(JsonBody.errorJson(message));
    }

    /** json is an answer of status with body written by Jackson. */
    static RestResponse<Map<String, String>> json(int status, Map<String, String> body) {
        return RestResponse.ResponseBuilder.<Map<String, String>>create(status).entity(body)
                .type(jakarta.ws.rs.core.MediaType.APPLICATION_JSON_TYPE).build();
    }

    @ServerExceptionMapper
    public RestResponse<Map<String, String>> api(ApiException e) {
        return Errors.json(e.status(), Map.of("error", e.getMessage()));
    }

    @ServerExceptionMapper
    public RestResponse<Map<String, String>> web(WebApplicationException e) {
        int status = e.getResponse().getStatus();
        if (status >= 500) {
            log.error("request failed", e);
        }
        String reason = e.getResponse().getStatusInfo().getReasonPhrase();
        return Errors.json(status, Map.of("error", reason == null ? "error " + status : reason.toLowerCase()));
    }

    @ServerExceptionMapper
    public RestResponse<Map<String, String>> unresolved(Bank.Unresolved e, RoutingContext rc) {
        log.warn(e.getMessage() + "; closing the connection unanswered");
        rc.put(HttpFilter.UNANSWERED, Boolean.TRUE);
        rc.request().connection().close();
        return Errors.json(503, Map.of("error", "unknown"));
    }

    @ServerExceptionMapper(priority = 10_000)
    public RestResponse<Map<String, String>> bug(RuntimeException e) {
        log.error("request failed", e);
        return Errors.json(500, Map.of("error", "internal error"));
    }
}
