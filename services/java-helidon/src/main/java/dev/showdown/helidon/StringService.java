package dev.showdown.helidon;

import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.util.Locale;

/** StringService serves the string workload: no database, only the stack's HTTP and JSON path. */
public final class StringService {

    /** MAX_CODE_POINTS is unbounded below the 1 MiB body limit. */
    private static final int MAX_CODE_POINTS = Integer.MAX_VALUE;

    /** register adds POST /uppercase and POST /count to routes. */
    public void register(Routes routes) {
        routes.post("/uppercase", this::uppercase).post("/count", this::count);
    }

    /** uppercase answers Unicode's full, locale-independent upper case of s. */
    void uppercase(ServerRequest req, ServerResponse res) {
        String s = JsonBody.read(req, "s").string("s", MAX_CODE_POINTS);
        Routes.send(res, 200, Json.object().put("v", s.toUpperCase(Locale.ROOT)).bytes());
    }

    /** count answers the number of Unicode code points of s. */
    void count(ServerRequest req, ServerResponse res) {
        String s = JsonBody.read(req, "s").string("s", MAX_CODE_POINTS);
        Routes.send(res, 200, Json.object().put("v", s.codePointCount(0, s.length())).bytes());
    }
}
