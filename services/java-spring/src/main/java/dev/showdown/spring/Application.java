package dev.showdown.spring;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import sun.misc.Signal;

/** Application starts the showdown reference service: every workload of the contract in one process. */
@SpringBootApplication
public class Application {

    private static final Logger log = LoggerFactory.getLogger(Application.class);

    /**
     * main starts the service. SIGTERM is turned into System.exit(0): the JVM's own handler would exit
     * 143 after the shutdown hooks, but the contract wants 0. System.exit still runs Spring's shutdown
     * hook, which drains Tomcat gracefully (in-flight requests finish) and closes the pools first.
     */
    public static void main(String[] args) {
        Signal.handle(new Signal("TERM"), signal -> System.exit(0));
        SpringApplication.run(Application.class, args);
    }

    /** ready logs one line once the service accepts requests. */
    @EventListener
    public void ready(ApplicationReadyEvent event) {
        var env = event.getApplicationContext().getEnvironment();
        log.atInfo().setMessage("ready")
                .addKeyValue("address", env.getProperty("server.address"))
                .addKeyValue("port", env.getProperty("local.server.port"))
                .addKeyValue("startup_ms", event.getTimeTaken().toMillis())
                .log();
    }
}
