package dev.showdown.quarkus;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * RequestMetrics holds the contract's two request meters on the framework's Micrometer registry: the
 * counter http_requests_total{route,status} and the histogram http_request_duration_seconds{route}.
 * Meters are cached per label set, so a request costs two map lookups and no registration.
 */
public final class RequestMetrics {

    /** BUCKETS are the histogram's upper bounds, 0.5 ms to 10 s. */
    static final Duration[] BUCKETS = {
        Duration.ofNanos(500_000), Duration.ofMillis(1), Duration.ofNanos(2_500_000), Duration.ofMillis(5),
        Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
        Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500),
        Duration.ofSeconds(5), Duration.ofSeconds(10),
    };

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();

    /** RequestMetrics records into registry. */
    public RequestMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** commitResolved counts one in-doubt COMMIT resolved with outcome: bank_commit_resolved_total{outcome}. */
    public void commitResolved(String outcome) {
        Counter.builder("bank.commit.resolved")
                .description("Transfers whose COMMIT failed, by what the resolution found: committed, not committed, unknown")
                .tag("outcome", outcome)
                .register(registry)
                .increment();
    }

    /** record counts one request of route answered with status (0: none) after nanos. */
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
