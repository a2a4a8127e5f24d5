package dev.showdown.micronaut;

import io.micronaut.context.annotation.Replaces;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.server.exceptions.ExceptionHandler;
import io.micronaut.http.server.exceptions.response.ErrorContext;
import io.micronaut.http.server.exceptions.response.JsonErrorResponseBodyProvider;
import io.micronaut.http.server.netty.NettyHttpRequest;
import jakarta.inject.Singleton;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Errors makes every error answer the contract's {"error":"..."} JSON: ApiException carries its
 * status; Micronaut's own errors (a body it cannot read, a request it refuses) keep theirs with the
 * same body shape; anything else is a bug, 500. A transfer whose COMMIT outcome stayed unknown gets
 * no answer at all: its connection is closed.
 */
public final class Errors {

    private static final Logger log = LoggerFactory.getLogger(Errors.class);

    private Errors() {}

    /** Api answers an ApiException with its status and message. */
    @Singleton
    public static class Api implements ExceptionHandler<ApiException, HttpResponse<?>> {
        @Override
        public HttpResponse<?> handle(HttpRequest request, ApiException e) {
            return ContractFilter.error(e.status(), e.getMessage());
        }
    }

    /** Unanswered closes the connection of a transfer whose outcome is unknown, without an answer. */
    @Singleton
    public static class Unanswered implements ExceptionHandler<Bank.Unresolved, HttpResponse<?>> {
        @Override
        public HttpResponse<?> handle(HttpRequest request, Bank.Unresolved e) {
            log.warn(e.getMessage() + "; closing the connection unanswered");
            request.setAttribute(ContractFilter.UNANSWERED, Boolean.TRUE);
            if (request instanceof NettyHttpRequest<?> n) {
                n.getChannelHandlerContext().channel().close();
            }
            return ContractFilter.error(503, "unknown");
        }
    }

    /** Bug answers any other exception with 500 and logs it. */
    @Singleton
    public static class Bug implements ExceptionHandler<RuntimeException, HttpResponse<?>> {
        @Override
        public HttpResponse<?> handle(HttpRequest request, RuntimeException e) {
            log.error("request failed", e);
            return ContractFilter.error(500, "internal error");
        }
    }

    /** Body writes Micronaut's own error answers as {"error":"..."}. */
    @Singleton
    @Replaces(JsonErrorResponseBodyProvider.class)
    public static class Body implements JsonErrorResponseBodyProvider<Map<String, String>> {
        @Override
        public Map<String, String> body(ErrorContext ctx, HttpResponse<?> response) {
            String message = ctx.getErrors().isEmpty() ? response.reason() : ctx.getErrors().get(0).getMessage();
            return Map.of("error", message == null ? "error " + response.code() : message);
        }
    }
}
