package dev.showdown.helidon;

import java.nio.charset.StandardCharsets;

/**
 * Json writes the service's answers: small flat objects of strings and integers, built in a
 * StringBuilder and encoded once as UTF-8. Strings are escaped as RFC 8259 requires (quote,
 * backslash, control characters); everything else is written as is.
 */
public final class Json {

    private final StringBuilder b = new StringBuilder(64).append('{');

    private Json() {}

    /** object starts an object. */
    public static Json object() {
        return new Json();
    }

    /** error is the contract's error body {"error":message}. */
    public static byte[] error(String message) {
        return object().put("error", message).bytes();
    }

    /** put adds a string member; a null value is written as null. */
    public Json put(String key, String value) {
        key(key);
        if (value == null) {
            b.append("null");
        } else {
            quote(b, value);
        }
        return this;
    }

    /** put adds an integer member. */
    public Json put(String key, long value) {
        key(key);
        b.append(value);
        return this;
    }

    /** bytes closes the object and returns it as UTF-8. */
    public byte[] bytes() {
        return b.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    private void key(String key) {
        if (b.length() > 1) {
            b.append(',');
        }
        quote(b, key);
        b.append(':');
    }

    /** quote appends s to b as a JSON string. */
    static void quote(StringBuilder b, String s) {
        b.append('"');
        int n = s.length();
        int from = 0;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c != '"' && c != '\\') {
                continue;
            }
            b.append(s, from, i);
            from = i + 1;
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                default -> b.append(String.format("\\u%04x", (int) c));
            }
        }
        b.append(s, from, n).append('"');
    }
}
