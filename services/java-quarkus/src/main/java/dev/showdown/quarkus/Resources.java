package dev.showdown.quarkus;

import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.smallrye.common.annotation.NonBlocking;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * Resources are the contract's endpoints on Quarkus REST. The string workload runs on the event loop
 * (@NonBlocking: no I/O, the body is already read); the database workloads and /health run on
 * Quarkus's worker pool, Quarkus REST's default for a method that returns a plain value, as JDBC
 * blocks. Bodies arrive as bytes and are parsed by JsonBody (the contract's I-JSON rules), answers
 * are records written by Jackson.
 */
public final class Resources {

    private Resources() {}

    /** Strings serves the string workload. */
    @Path("/")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Strings {

        @POST
        @Path("uppercase")
        @NonBlocking
        public Text.Upper uppercase(byte[] body) {
            return Text.uppercase(bounded(body));
        }

        @POST
        @Path("count")
        @NonBlocking
        public Text.Count count(byte[] body) {
            return Text.count(bounded(body));
        }
    }

    /** Accounts serves the bank workload. */
    @Path("/")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Accounts {

        @Inject
        Bank bank;

        @POST
        @Path("client/new/{balance}")
        public Bank.Client create(@RestPath String balance) {
            return bank.create(balance);
        }

        @POST
        @Path("transaction")
        public Bank.Transfer transfer(byte[] body) {
            return bank.transfer(bounded(body));
        }

        @GET
        @Path("client/{id}/balance")
        public Bank.Balance balance(@RestPath String id) {
            return bank.balance(id);
        }
    }

    /** SignUps serves the users workload. */
    @Path("/")
    @Produces(MediaType.APPLICATION_JSON)
    public static class SignUps {

        @Inject
        Users users;

        @POST
        @Path("user")
        public RestResponse<Users.Created> create(byte[] body) {
            Users.Created c = users.create(bounded(body));
            // A relative Location, as the contract has it (JAX-RS's location() would make it absolute).
            return RestResponse.ResponseBuilder.create(RestResponse.Status.CREATED, c)
                    .header(HttpHeaders.LOCATION, "/user/" + c.id()).build();
        }

        @GET
        @Path("user/{id}")
        public Users.User get(@RestPath String id) {
            return users.get(id);
        }
    }

    /** Skus serves the sku workload. */
    @Path("/")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Skus {

        @Inject
        Sku sku;

        @GET
        @Path("sku/{sku_id}")
        public Sku.Row get(@RestPath("sku_id") String skuId) {
            return sku.get(skuId);
        }
    }

    /** Ops serves what every service has whatever its workloads: /health and /metrics. */
    @Path("/")
    public static class Ops {

        /** PING_TIMEOUT_MS bounds each database ping of /health. */
        static final long PING_TIMEOUT_MS = 1_000;

        private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

        @Inject
        Datasources ds;

        @Inject
        PrometheusMeterRegistry registry;

        private final ExecutorService pings = Executors.newVirtualThreadPerTaskExecutor();

        @GET
        @Path("health")
        @Produces(MediaType.APPLICATION_JSON)
        public RestResponse<Map<String, String>> health() {
            CompletableFuture<Boolean> pg = ds.postgres().ping(pings, PING_TIMEOUT_MS);
            CompletableFuture<Boolean> my = ds.mysql().ping(pings, PING_TIMEOUT_MS);
            StringBuilder down = new StringBuilder();
            if (!pg.join()) {
                down.append(ds.postgres().name());
            }
            if (!my.join()) {
                down.append(down.isEmpty() ? "" : " and ").append(ds.mysql().name());
            }
            if (!down.isEmpty()) {
                return Errors.json(503, Map.of("error", down + " unreachable"));
            }
            return RestResponse.ok(Map.of("status", "ok"));
        }

        @GET
        @Path("metrics")
        @Produces(PROMETHEUS_TEXT)
        public String metrics() {
            return registry.scrape();
        }

        @PreDestroy
        void close() {
            pings.shutdownNow();
        }
    }

    /** bounded is body, or an empty one, refused with 413 when over 1 MiB (a chunked body has no length to check first). */
    static byte[] bounded(byte[] body) {
        if (body == null) {
            return new byte[0];
        }
        if (body.length > JsonBody.MAX_BYTES) {
            throw new ApiException(413, "request body over 1 MiB");
        }
        return body;
    }
}
