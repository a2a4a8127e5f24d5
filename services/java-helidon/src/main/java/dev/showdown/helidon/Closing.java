package dev.showdown.helidon;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.concurrency.limits.Limit;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.Semaphore;

/**
 * Closing lets the service stop taking connections before it stops the server. Helidon closes its
 * listening socket only in stop(), which also closes every open connection, a request being read or
 * answered included; so at SIGTERM the service first closes() this selector, the first one Helidon
 * asks about every new connection: from then on it claims each new connection and closes it unread,
 * as a closed listener would refuse it, while the requests already in flight finish.
 */
final class Closing implements ServerConnectionSelector {

    private volatile boolean closed;

    /** close makes every new connection close unanswered. */
    void close() {
        closed = true;
    }

    @Override
    public int bytesToIdentifyConnection() {
        return 0;
    }

    @Override
    public Support supports(BufferData request) {
        return closed ? Support.SUPPORTED : Support.UNSUPPORTED;
    }

    @Override
    public Set<String> supportedApplicationProtocols() {
        return Set.of();
    }

    @Override
    public ServerConnection connection(ConnectionContext ctx) {
        return new ServerConnection() {
            @Override
            public void handle(Limit limit) {
                // nothing: Helidon closes the socket when handle returns
            }

            @Override
            public void handle(Semaphore requestSemaphore) {
                // nothing, as above
            }

            @Override
            public Duration idleTime() {
                return Duration.ZERO;
            }

            @Override
            public void close(boolean interrupt) {
                // nothing to close: the connection handler owns the socket
            }
        };
    }
}
