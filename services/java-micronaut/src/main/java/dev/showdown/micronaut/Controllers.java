package dev.showdown.micronaut;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.micronaut.context.annotation.Bean;
import io.micronaut.context.annotation.Factory;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Consumes;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.Produces;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Controllers are the contract's endpoints on Micronaut's Netty server. The string workload runs on
 * the Netty event loop (no I/O; the body is already read); the database workloads and /health run on
 * Micronaut's blocking executor (@ExecuteOn(TaskExecutors.BLOCKING): virtual threads on JDK 21+), as
 * JDBC blocks. Bodies arrive as bytes whatever their Content-Type and are parsed by JsonBody (the
 * contract's I-JSON rules); answers are records written by Micronaut Serialization.
 */
public final class Controllers {

    private Controllers() {}

    /** Beans makes the workloads' logic and the request meters. */
    @Factory
    public static class Beans {

        @Singleton
        RequestMetrics metrics(MeterRegistry registry) {
            return new RequestMetrics(registry);
        }

        @Singleton
        Bank bank(Datasources ds, RequestMetrics metrics) {
            return new Bank(ds.postgres(), metrics::commitResolved);
        }

        @Singleton
        Users users(Datasources ds) {
            return new Users(ds.postgres());
        }

        @Singleton
        Sku sku(Datasources ds) {
            return new Sku(ds.mysql());
        }
    }

    /** Strings serves the string workload. */
    @Controller
    @Consumes(MediaType.ALL)
    @Produces(MediaType.APPLICATION_JSON)
    public static class Strings {

        @Post("/uppercase")
        public Text.Upper uppercase(@Body @Nullable byte[] body) {
            return Text.uppercase(bounded(body));
        }

        @Post("/count")
        public Text.Count count(@Body @Nullable byte[] body) {
            return Text.count(bounded(body));
        }
    }

    /** Accounts serves the bank workload. */
    @Controller
    @Consumes(MediaType.ALL)
    @Produces(MediaType.APPLICATION_JSON)
    @ExecuteOn(TaskExecutors.BLOCKING)
    public static class Accounts {

        private final Bank bank;

        Accounts(Bank bank) {
            this.bank = bank;
        }

        @Post("/client/new/{balance}")
        public Bank.Client create(@PathVariable String balance) {
            return bank.create(balance);
        }

        @Post("/transaction")
        public Bank.Transfer transfer(@Body @Nullable byte[] body) {
            return bank.transfer(bounded(body));
        }

        @Get("/client/{id}/balance")
        public Bank.Balance balance(@PathVariable String id) {
            return bank.balance(id);
        }
    }

    /** SignUps serves the users workload. */
    @Controller
    @Consumes(MediaType.ALL)
    @Produces(MediaType.APPLICATION_JSON)
    @ExecuteOn(TaskExecutors.BLOCKING)
    public static class SignUps {

        private final Users users;

        SignUps(Users users) {
            this.users = users;
        }

        @Post("/user")
        public HttpResponse<Users.Created> create(@Body @Nullable byte[] body) {
            Users.Created c = users.create(bounded(body));
            return HttpResponse.created(c).header("Location", "/user/" + c.id());
        }

        @Get("/user/{id}")
        public Users.User get(@PathVariable String id) {
            return users.get(id);
        }
    }

    /** Skus serves the sku workload. */
    @Controller
    @Produces(MediaType.APPLICATION_JSON)
    @ExecuteOn(TaskExecutors.BLOCKING)
    public static class Skus {

        private final Sku sku;

        Skus(Sku sku) {
            this.sku = sku;
        }

        @Get("/sku/{sku_id}")
        public Sku.Row get(@PathVariable("sku_id") String skuId) {
            return sku.get(skuId);
        }
    }

    /** Ops serves what every service has whatever its workloads: /health and /metrics. */
    @Controller
    public static class Ops {

        /** PING_TIMEOUT_MS bounds each database ping of /health. */
        static final long PING_TIMEOUT_MS = 1_000;

        private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

        private final Datasources ds;
        private final PrometheusMeterRegistry registry;
        private final ExecutorService pings = Executors.newVirtualThreadPerTaskExecutor();

        Ops(Datasources ds, PrometheusMeterRegistry registry) {
            this.ds = ds;
            this.registry = registry;
        }

        @Get("/health")
        @Produces(MediaType.APPLICATION_JSON)
        @ExecuteOn(TaskExecutors.BLOCKING)
        public HttpResponse<Map<String, String>> health() {
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
                return HttpResponse.<Map<String, String>>status(io.micronaut.http.HttpStatus.SERVICE_UNAVAILABLE)
                        .body(Map.of("error", down + " unreachable"));
            }
            return HttpResponse.ok(Map.of("status", "ok"));
        }

        @Get("/metrics")
        @Produces(PROMETHEUS_TEXT)
        @ExecuteOn(TaskExecutors.BLOCKING)
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
