package dev.showdown.quarkus;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;
import sun.misc.Signal;

/**
 * Main turns the contract's database URLs into the two Agroal datasources' configuration (see
 * Datasources) and starts Quarkus. SIGTERM asks Quarkus for its graceful shutdown with exit status 0
 * (the JVM's own SIGTERM handling would exit 143).
 */
@QuarkusMain
public final class Main {

    private Main() {}

    /** main configures the datasources from the environment and runs the application until stopped. */
    public static void main(String... args) {
        Datasources.configure();
        Signal.handle(new Signal("TERM"), s -> Quarkus.asyncExit(0));
        Signal.handle(new Signal("INT"), s -> Quarkus.asyncExit(0));
        Quarkus.run(args);
    }
}
