package dev.showdown.quarkus;

import java.util.Locale;

/** Text is the string workload's logic, apart from the framework: no database. */
public final class Text {

    /** Upper is the answer to /uppercase. */
    public record Upper(String v) {}

    /** Count is the answer to /count. */
    public record Count(long v) {}

    private Text() {}

    /** uppercase answers Unicode's full, locale-independent upper case of the body's s. */
    public static Upper uppercase(byte[] body) {
        String s = JsonBody.parse(body, "s").string("s", Integer.MAX_VALUE);
        return new Upper(s.toUpperCase(Locale.ROOT));
    }

    /** count answers the number of Unicode code points of the body's s. */
    public static Count count(byte[] body) {
        String s = JsonBody.parse(body, "s").string("s", Integer.MAX_VALUE);
        return new Count(s.codePointCount(0, s.length()));
    }
}
