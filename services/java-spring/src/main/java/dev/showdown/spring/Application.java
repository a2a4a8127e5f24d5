package dev.showdown.spring;

import org.apache.catalina.connector.Connector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.EventListener;
import sun.misc.Signal;

/** Application starts the showdown reference service: every workload of the contract in one process. */
@SpringBootApplication
public class Application {

    private static final Logger log = LoggerFactory.getLogger(Application.class);

    /** DRAIN_MILLIS is how long answers say Connection: close before Tomcat pauses its connector. */
    static final long DRAIN_MILLIS = 500;

    /** draining is set by SIGTERM; RequestFilter then answers with Connection: close. */
    static volatile boolean draining;

    private static volatile ConfigurableApplicationContext context;

    /**
     * main starts the service. SIGTERM is turned into a drain and then System.exit(0): the JVM's own
     * handler would exit 143 after the shutdown hooks, but the contract wants 0. System.exit still runs
     * Spring's shutdown hook, which drains Tomcat gracefully (in-flight requests finish) and closes the
     * pools first.
     */
    public static void main(String[] args) {
        Signal.handle(new Signal("TERM"), signal -> drainThenExit());
        context = SpringApplication.run(Application.class, args);
    }

    /**
     * drainThenExit stops accepting connections at once, then for DRAIN_MILLIS answers every request
     * on an open keep-alive connection with Connection: close, so clients move off those connections
     * before Spring's graceful shutdown pauses Tomcat's connector. A request that reached a connection
     * just as the connector paused could otherwise be refused by Tomcat itself (seen as a 400 under
     * load), which the contract counts as a lost in-flight request. go-stdlib and node-http drain the
     * same way.
     */
    static void drainThenExit() {
        draining = true;
        if (context instanceof WebServerApplicationContext web && web.getWebServer() instanceof TomcatWebServer tomcat) {
            for (Connector c : tomcat.getTomcat().getService().findConnectors()) {
                c.getProtocolHandler().closeServerSocketGraceful();
            }
        }
        try {
            Thread.sleep(DRAIN_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.exit(0);
    }

    /**
     * ready logs one line once the service accepts requests. With -Dshowdown.train=N (the build's AOT
     * training run) it then sends the service N rounds of requests (Training) and exits 0, so the JVM
     * writes its AOT cache.
     */
    @EventListener
    public void ready(ApplicationReadyEvent event) {
        var env = event.getApplicationContext().getEnvironment();
        String port = env.getProperty("local.server.port");
        log.atInfo().setMessage("ready")
                .addKeyValue("address", env.getProperty("server.address"))
                .addKeyValue("port", port)
                .addKeyValue("startup_ms", event.getTimeTaken().toMillis())
                .log();
        Integer train = Integer.getInteger("showdown.train");
        if (train != null && port != null) {
            Training.run(Integer.parseInt(port), train);
            System.exit(SpringApplication.exit(event.getApplicationContext()));
        }
    }
}
