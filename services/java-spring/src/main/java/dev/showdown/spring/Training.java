package dev.showdown.spring;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Training drives the service's own paths for the build's AOT training run: with
 * -Dshowdown.train=N the service, once ready, sends itself N rounds of requests and then exits, so the
 * JVM writes its AOT cache with the classes loaded and linked and the method profiles those requests
 * produced. The build has no databases, so the database routes answer 503 (database not configured)
 * or 400: the filter, routing, JSON, metrics and error paths are trained, the JDBC drivers are not.
 */
final class Training {

    private Training() {}

    /** run sends rounds rounds of requests to 127.0.0.1:port; failures are ignored (it only trains). */
    static void run(int port, int rounds) {
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2))
                .build();
        String base = "http://127.0.0.1:" + port;
        String[][] posts = {
            {"/uppercase", "{\"s\":\"hello\"}"},
            {"/count", "{\"s\":\"hello\"}"},
            {"/uppercase", "{\"s\":\"stra\u00dfe \u01c6\"}"},
            {"/count", "{\"x\":[1,{\"y\":null}],\"s\":\"a\\u00e9\"}"},
        };
        String[][] rare = {
            {"POST", "/count", "{\"s\":1}"},
            {"POST", "/client/new/400", ""},
            {"POST", "/transaction", "{\"from_client_id\":1,\"to_client_id\":2,\"amount\":10}"},
            {"POST", "/transaction", "{\"from_client_id\":1,\"to_client_id\":2,\"amount\":1e1}"},
            {"GET", "/client/1/balance", null},
            {"GET", "/client/abc/balance", null},
            {"POST", "/user", "{\"email\":\"a@example.com\",\"password\":\"secret\"}"},
            {"GET", "/user/1", null},
            {"GET", "/sku/100001", null},
            {"GET", "/health", null},
            {"GET", "/metrics", null},
            {"GET", "/no/such/path", null},
            {"GET", "/uppercase", null},
        };
        for (int i = 0; i < rounds; i++) {
            for (String[] p : posts) {
                send(client, HttpRequest.newBuilder(URI.create(base + p[0]))
                        .POST(HttpRequest.BodyPublishers.ofString(p[1])).build());
            }
            if (i % 10 == 0) {
                for (String[] r : rare) {
                    HttpRequest.BodyPublisher body = r[2] == null
                            ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofString(r[2]);
                    send(client, HttpRequest.newBuilder(URI.create(base + r[1])).method(r[0], body).build());
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
