package dev.showdown.helidon;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.common.buffers.DataWriter;
import io.helidon.common.socket.PeerInfo;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.ListenerContext;
import io.helidon.webserver.Router;
import io.helidon.webserver.http1.Http1ConnectionSelector;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ExecutorService;

/**
 * Http10 lets HTTP/1.0 clients in. Helidon 4 speaks HTTP/1.1 only and answers a request line ending
 * in HTTP/1.0 with 505, by design. This selector claims the connections whose first line ends in
 * " HTTP/1.0" and hands them to Helidon's own HTTP/1.1 connection with that line read as
 * "HTTP/1.1" followed by "Connection: close", which is what HTTP/1.0 means: one request, then the
 * server closes. The answer says HTTP/1.1 (a server answers with the highest version it speaks,
 * RFC 9110 6.2) and always carries a Content-Length, so a 1.0 client reads it. HTTP/1.0 requests
 * carry no Host header, so these connections do not require one.
 */
final class Http10 implements ServerConnectionSelector {

    private static final byte[] HTTP_10 = " HTTP/1.0\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] AS_HTTP_11 = " HTTP/1.1\r\nConnection: close\r\n".getBytes(StandardCharsets.US_ASCII);

    private final Http1ConnectionSelector http1 = Http1ConnectionSelector.builder()
            .config(c -> c.validateRequestHostHeader(false))
            .build();

    @Override
    public int bytesToIdentifyConnection() {
        return 0; // like HTTP/1.1's selector: it looks for the end of the first line itself
    }

    @Override
    public Support supports(BufferData request) {
        int nl = request.indexOf((byte) '\n');
        if (nl < 0) {
            return Support.UNKNOWN;
        }
        return request.readString(nl).endsWith(" HTTP/1.0\r") ? Support.SUPPORTED : Support.UNSUPPORTED;
    }

    @Override
    public Set<String> supportedApplicationProtocols() {
        return Set.of();
    }

    @Override
    public ServerConnection connection(ConnectionContext ctx) {
        DataReader socket = ctx.dataReader();
        byte[] head = socket.readBytes(socket.available());
        byte[] first = rewrite(head);
        boolean[] sent = {false};
        DataReader reader = DataReader.create(() -> {
            if (!sent[0]) {
                sent[0] = true;
                return first;
            }
            socket.pullData();
            return socket.readBytes(socket.available());
        });
        return http1.connection(new Context(ctx, reader));
    }

    /** rewrite replaces the first " HTTP/1.0\r\n" of head (the end of the request line). */
    static byte[] rewrite(byte[] head) {
        int at = indexOf(head, HTTP_10);
        if (at < 0) {
            return head;
        }
        byte[] out = new byte[head.length - HTTP_10.length + AS_HTTP_11.length];
        System.arraycopy(head, 0, out, 0, at);
        System.arraycopy(AS_HTTP_11, 0, out, at, AS_HTTP_11.length);
        System.arraycopy(head, at + HTTP_10.length, out, at + AS_HTTP_11.length, head.length - at - HTTP_10.length);
        return out;
    }

    private static int indexOf(byte[] a, byte[] b) {
        outer:
        for (int i = 0; i + b.length <= a.length; i++) {
            for (int j = 0; j < b.length; j++) {
                if (a[i + j] != b[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Context is the connection's context with the rewriting reader in place of the socket's. */
    private record Context(ConnectionContext delegate, DataReader reader) implements ConnectionContext {
        @Override public DataReader dataReader() { return reader; }
        @Override public ListenerContext listenerContext() { return delegate.listenerContext(); }
        @Override public ExecutorService executor() { return delegate.executor(); }
        @Override public DataWriter dataWriter() { return delegate.dataWriter(); }
        @Override public Router router() { return delegate.router(); }
        @Override public java.util.Optional<io.helidon.webserver.ProxyProtocolData> proxyProtocolData() { return delegate.proxyProtocolData(); }
        @Override public io.helidon.common.socket.HelidonSocket serverSocket() { return delegate.serverSocket(); }
        @Override public PeerInfo remotePeer() { return delegate.remotePeer(); }
        @Override public PeerInfo localPeer() { return delegate.localPeer(); }
        @Override public boolean isSecure() { return delegate.isSecure(); }
        @Override public String socketId() { return delegate.socketId(); }
        @Override public String childSocketId() { return delegate.childSocketId(); }
    }
}
