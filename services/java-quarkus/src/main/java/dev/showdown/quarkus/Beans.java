package dev.showdown.quarkus;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** Beans produces the workloads' logic and the request meters as CDI singletons. */
public class Beans {

    @Produces
    @Singleton
    RequestMetrics metrics(MeterRegistry registry) {
        return new RequestMetrics(registry);
    }

    @Produces
    @Singleton
    Bank bank(Datasources ds, RequestMetrics metrics) {
        return new Bank(ds.postgres(), metrics::commitResolved);
    }

    @Produces
    @Singleton
    Users users(Datasources ds) {
        return new Users(ds.postgres());
    }

    @Produces
    @Singleton
    Sku sku(Datasources ds) {
        return new Sku(ds.mysql());
    }
}
