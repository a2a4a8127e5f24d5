package dev.showdown.spring;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * RequestMetrics holds the contract's two request meters: the counter http_requests_total{route,status}
 * and the histogram http_request_duration_seconds{route}. Meters are cached per label set, so a request
 * costs two map lookups and no registration.
 */
@Configuration(proxyBeanMethods = false)
public class RequestMetrics implements DisposableBean {

    /** BUCKETS are the histogram's upper bounds, 0.5 ms to 10 s. */
    static final Duration[] BUCKETS = {
        Duration.ofNanos(500_000), Duration.ofMillis(1), Duration.ofNanos(2_500_000), Duration.ofMillis(5),
        Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
        Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500),
        Duration.ofSeconds(5), Duration.ofSeconds(10),
    };

    private final PrometheusMeterRegistry registry;
    private final JvmGcMetrics gc = new JvmGcMetrics();
    private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();

    /** RequestMetrics creates the registry, with the JVM's own meters beside the request meters. */
    public RequestMetrics() {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        gc.bindTo(registry);
    }

    /** destroy stops listening to GC notifications at shutdown. */
    @Override
    public void destroy() {
        gc.close();
    }

    /** registry is the Prometheus registry /metrics scrapes. */
    @Bean
    public PrometheusMeterRegistry prometheusMeterRegistry() {
        return registry;
    }

    /** commitResolved counts one in-doubt COMMIT resolved with outcome: bank_commit_resolved_total{outcome}. */
    public void commitResolved(String outcome) {
        Counter.builder("bank.commit.resolved")
                .description("Transfers whose COMMIT failed, by what the resolution found: committed, not committed, unknown")
                .tag("outcome", outcome)
                .register(registry)
                .increment();
    }

    /** record counts one request of route answered with status after nanos. */
    public void record(String route, int status, long nanos) {
        counters.computeIfAbsent(route + ' ' + status, k -> Counter.builder("http.requests")
                        .description("HTTP requests by route pattern and status")
                        .tag("route", route)
                        .tag("status", Integer.toString(status))
                        .register(registry))
                .increment();
        timers.computeIfAbsent(route, k -> Timer.builder("http.request.duration")
                        .description("HTTP request latency by route pattern")
                        .tag("route", route)
                        .serviceLevelObjectives(BUCKETS)
                        .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }
}
