package dev.showdown.helidon;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.concurrency.limits.Limit;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;
import io.helidon.webserver.WebServer;
import java.lang.reflect.Field;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.logging.Level;

/**
 * Closing stops the service taking connections before it stops the server. Helidon 4.5 closes its
 * listening socket only in stop(), and stop() also cuts every open connection, a request being
 * served or answered included; so at SIGTERM the service first closes the listening sockets alone
 * (closeListeners), and new connections are refused while the requests in flight finish. Helidon has
 * no public call for that, so closeListeners reaches into its listener by reflection; should that
 * fail (another Helidon version), close() makes this selector, the first one Helidon asks about every
 * new connection, claim each new connection and close it unread instead: its client, having sent its
 * request, gets a reset and cannot know whether the request was carried out.
 */
final class Closing implements ServerConnectionSelector {

    private volatile boolean closed;

    /**
     * closeListeners closes the listening sockets of server, and nothing else: from then on a
     * connection is refused, and the connections already open are served on. Each listener is first
     * marked as suspended (the flag Helidon's CRaC checkpoint sets), so that its accepting thread
     * ends quietly instead of stopping the listener, which would cut every connection; a later
     * stop() then closes the connections as usual. It returns false, having changed nothing it
     * could not undo, if the server is not the Helidon 4.5 implementation it knows.
     */
    static boolean closeListeners(WebServer server) {
        try {
            Field listenersField = server.getClass().getDeclaredField("listeners");
            listenersField.setAccessible(true);
            Map<?, ?> listeners = (Map<?, ?>) listenersField.get(server);
            for (Object listener : listeners.values()) {
                Field suspended = listener.getClass().getDeclaredField("inCheckpoint");
                Field socket = listener.getClass().getDeclaredField("serverSocket");
                suspended.setAccessible(true);
                socket.setAccessible(true);
                if (suspended.getType() != boolean.class || !(socket.get(listener) instanceof ServerSocketChannel)) {
                    return false;
                }
            }
            for (Object listener : listeners.values()) {
                Field suspended = listener.getClass().getDeclaredField("inCheckpoint");
                Field socket = listener.getClass().getDeclaredField("serverSocket");
                suspended.setAccessible(true);
                socket.setAccessible(true);
                suspended.setBoolean(listener, true);
                ((ServerSocketChannel) socket.get(listener)).close();
            }
            return true;
        } catch (ReflectiveOperationException | RuntimeException | java.io.IOException e) {
            Logs.APP.log(Level.WARNING, "cannot close the listening socket before stopping; new connections are dropped instead", e);
            return false;
        }
    }

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
