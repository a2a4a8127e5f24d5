package dev.showdown.spring;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Locale;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** StringController serves the string workload: no database, only the stack's JSON path. */
@RestController
public class StringController {

    /** MAX_CODE_POINTS is unbounded below the 1 MiB body limit. */
    private static final int MAX_CODE_POINTS = Integer.MAX_VALUE;

    /** Value is the answer {"v":...}. */
    public record Value<T>(T v) {}

    private final JsonBody json;

    /** StringController reads bodies with json. */
    public StringController(JsonBody json) {
        this.json = json;
    }

    /** uppercase answers Unicode's full, locale-independent upper case of s. */
    @PostMapping("/uppercase")
    public Value<String> uppercase(HttpServletRequest request) throws IOException {
        String s = JsonBody.string(json.object(request), "s", MAX_CODE_POINTS);
        return new Value<>(s.toUpperCase(Locale.ROOT));
    }

    /** count answers the number of Unicode code points of s. */
    @PostMapping("/count")
    public Value<Integer> count(HttpServletRequest request) throws IOException {
        String s = JsonBody.string(json.object(request), "s", MAX_CODE_POINTS);
        return new Value<>(s.codePointCount(0, s.length()));
    }
}
