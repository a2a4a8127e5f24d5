package dev.showdown.helidon;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * RequestMetrics holds the contract's two request meters in Prometheus' own Java client: the counter
 * http_requests_total{route,status} and the histogram http_request_duration_seconds{route}, with the
 * JVM's meters beside them. A route's data points are looked up once, when its route is registered, and
 * a status's once, at its first use: a request costs an array read, an add and a histogram observe.
 * Exemplars are off: they would ask a tracer on every request, and there is no tracer here.
 */
public final class RequestMetrics {

    /** BUCKETS are the histogram's upper bounds in seconds, 0.5 ms to 10 s. */
    static final double[] BUCKETS = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

    /** CONTENT_TYPE is the Prometheus text format's media type. */
    static final String CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final Counter requests;
    private final Histogram duration;
    private final Counter commitsResolved;

    /** RequestMetrics registers the request meters and the JVM's own. */
    public RequestMetrics() {
        requests = Counter.builder()
                .name("http_requests_total")
                .help("HTTP requests by route pattern and status")
                .labelNames("route", "status")
                .withoutExemplars()
                .register(registry);
        duration = Histogram.builder()
                .name("http_request_duration_seconds")
                .help("HTTP request latency by route pattern")
                .labelNames("route")
                .classicOnly()
                .classicUpperBounds(BUCKETS)
                .withoutExemplars()
                .register(registry);
        commitsResolved = Counter.builder()
                .name("bank_commit_resolved_total")
                .help("Transfers whose COMMIT failed, by what the resolution found: committed, not committed, unknown")
                .labelNames("outcome")
                .withoutExemplars()
                .register(registry);
        JvmMetrics.builder().register(registry);
    }

    /** commitResolved counts one in-doubt COMMIT resolved with outcome. */
    public void commitResolved(String outcome) {
        commitsResolved.labelValues(outcome).inc();
    }

    /** route returns the meters of one route label. */
    public Route route(String label) {
        return new Route(label, duration.labelValues(label));
    }

    /** scrape writes the text exposition of every meter. */
    public void scrape(OutputStream out) throws IOException {
        writer.write(out, registry.scrape());
    }

    /** Route is the meters of one route label; record is safe from any thread. */
    public final class Route {

        private final String label;
        private final DistributionDataPoint latency;
        private final AtomicReferenceArray<CounterDataPoint> byStatus = new AtomicReferenceArray<>(600);

        private Route(String label, DistributionDataPoint latency) {
            this.label = label;
            this.latency = latency;
        }

        /** record counts one request answered with status after nanos. */
        public void record(int status, long nanos) {
            int i = status >= 0 && status < 600 ? status : 599; // 0: closed without an answer
            CounterDataPoint c = byStatus.get(i);
            if (c == null) {
                c = requests.labelValues(label, Integer.toString(status));
                byStatus.set(i, c); // labelValues returns the same data point for the same labels
            }
            c.inc();
            latency.observe(nanos / 1e9);
        }
    }
}
