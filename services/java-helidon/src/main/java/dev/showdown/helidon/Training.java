package dev.showdown.helidon;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Training drives the service's own no-database paths for the build's AOT training run: with
 * -Dshowdown.train=N the service, once up, sends itself N rounds of requests (the string workload,
 * /health, /metrics, a 404, a 405, a 400) and then shuts down, so the JVM writes its AOT cache with
 * the classes loaded and linked and the method profiles those paths produced.
 */
final class Training {

    private Training() {}

    /** run sends rounds rounds of requests to 127.0.0.1:port; failures are ignored (it only trains). */
    static void run(int port, int rounds) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        String base = "http://127.0.0.1:" + port;
        String[][] posts = {
            {"/uppercase", "{\"s\":\"hello\"}"},
            {"/count", "{\"s\":\"hello\"}"},
            {"/uppercase", "{\"s\":\"stra\u00dfe \u01c6\"}"},
            {"/count", "{\"x\":[1,{\"y\":null}],\"s\":\"a\\u00e9\"}"},
            {"/count", "{\"s\":1}"},
            {"/transaction", "{\"from_client_id\":1,\"to_client_id\":2,\"amount\":1e1}"},
        };
        String[] gets = {"/health", "/metrics", "/no/such/path", "/uppercase", "/client/abc/balance"};
        for (int i = 0; i < rounds; i++) {
            for (String[] p : posts) {
                send(client, HttpRequest.newBuilder(URI.create(base + p[0]))
                        .POST(HttpRequest.BodyPublishers.ofString(p[1])).build());
            }
            if (i % 10 == 0) {
                for (String g : gets) {
                    send(client, HttpRequest.newBuilder(URI.create(base + g)).GET().build());
                }
            }
        }
    }

    private static void send(HttpClient client, HttpRequest req) {
        try {
            client.send(req, HttpResponse.BodyHandlers.discarding());
        } catch (Exception e) {
            // training only: an answer that does not come is not an error of the build
        }
    }
}
