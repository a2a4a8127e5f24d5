package dev.showdown.quarkus;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.InputStream;

/**
 * JsonBody reads a request body as one JSON object and its fields by the contract's rules: at most
 * 1 MiB, nothing after the object, integers as I-JSON (a number read as an IEEE-754 double that must
 * be integral and in range, so 10, 10.0 and 1e1 agree and 10.5, "10", true and null do not), strings
 * without U+0000 counted in code points; unknown fields are skipped, and of duplicate keys the last
 * one wins. It uses Jackson's streaming parser: only the named fields are kept, nothing is bound.
 */
public final class JsonBody {

    /** MAX_BYTES is the largest body the contract accepts; a larger one is 413. */
    public static final int MAX_BYTES = 1 << 20;

    /** MAX_ID is the largest id, 2^53-1, the largest integer a double holds exactly. */
    public static final long MAX_ID = (1L << 53) - 1;

    /** Jackson's default stream constraints bound nesting (1000) and number length: deeper is 400. */
    private static final JsonFactory FACTORY = new JsonFactory();

    private final String[] names;
    private final Object[] values; // String, Double, or the JsonToken of a value of another type

    private JsonBody(String[] names) {
        this.names = names;
        this.values = new Object[names.length];
    }

    /**
     * read reads a request body of declared length (-1: unknown, chunked) from in, at most MAX_BYTES,
     * else throws a 413 ApiException; a body the client did not finish is 400. A declared length is
     * read in one exact buffer, a chunked body up to one byte over the limit.
     */
    public static byte[] read(InputStream in, long declared) {
        if (declared > MAX_BYTES) {
            throw new ApiException(413, "request body over 1 MiB");
        }
        if (in == null) {
            return new byte[0];
        }
        byte[] body;
        try (in) {
            body = declared >= 0 ? in.readNBytes((int) declared) : in.readNBytes(MAX_BYTES + 1);
        } catch (IOException | RuntimeException e) {
            throw ApiException.badRequest("request body could not be read");
        }
        if (body.length > MAX_BYTES) {
            throw new ApiException(413, "request body over 1 MiB");
        }
        return body;
    }

    /** errorJson is the contract's error body {"error":message}, message escaped as JSON. */
    public static String errorJson(String message) {
        StringBuilder b = new StringBuilder(message.length() + 16).append("{\"error\":\"");
        for (int i = 0; i < message.length(); i++) {
            char c = message.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append("\"}").toString();
    }

    /**
     * parse reads body as a JSON object, keeping the members named names, else throws a 400
     * ApiException.
     */
    public static JsonBody parse(byte[] body, String... names) {
        JsonBody obj = new JsonBody(names);
        try (JsonParser p = FACTORY.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw ApiException.badRequest("request body must be a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                int i = obj.index(p.currentName());
                JsonToken t = p.nextToken();
                if (i < 0) {
                    p.skipChildren();
                    continue;
                }
                obj.values[i] = switch (t) {
                    case VALUE_STRING -> p.getText();
                    case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> p.getDoubleValue();
                    default -> {
                        p.skipChildren();
                        yield t;
                    }
                };
            }
            if (p.nextToken() != null) {
                throw ApiException.badRequest("malformed JSON: data after the object");
            }
        } catch (IOException e) {
            // JsonParseException, StreamConstraintsException (too deep, number too long) and
            // malformed UTF-8 are all IOExceptions here.
            throw ApiException.badRequest("malformed JSON");
        }
        return obj;
    }

    private int index(String name) {
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name)) {
                return i;
            }
        }
        return -1;
    }

    private Object value(String field) {
        int i = index(field);
        Object v = i < 0 ? null : values[i];
        if (v == null) {
            throw ApiException.badRequest(field + " is missing");
        }
        return v;
    }

    /** integer returns field as an integer in min..max. */
    public long integer(String field, long min, long max) {
        if (value(field) instanceof Double d && Double.isFinite(d) && d == Math.rint(d) && d >= min && d <= max) {
            return d.longValue();
        }
        throw ApiException.badRequest(field + " must be an integer in " + min + ".." + max);
    }

    /** string returns field as a string of 1..maxCodePoints code points without U+0000. */
    public String string(String field, int maxCodePoints) {
        if (!(value(field) instanceof String s)) {
            throw ApiException.badRequest(field + " must be a string");
        }
        if (s.isEmpty()) {
            throw ApiException.badRequest(field + " must not be empty");
        }
        if (s.indexOf('\0') >= 0) {
            throw ApiException.badRequest(field + " must not contain U+0000");
        }
        if (s.length() > maxCodePoints && s.codePointCount(0, s.length()) > maxCodePoints) {
            throw ApiException.badRequest(field + " is longer than " + maxCodePoints + " characters");
        }
        return s;
    }

    /**
     * pathInteger parses a path parameter: decimal digits only, at most 16 of them, in min..max;
     * anything else (-1, 1.5, abc, ..) is 400.
     */
    public static long pathInteger(String raw, String name, long min, long max) {
        int n = raw.length();
        boolean digits = n >= 1 && n <= 16;
        for (int i = 0; digits && i < n; i++) {
            char c = raw.charAt(i);
            digits = c >= '0' && c <= '9';
        }
        if (digits) {
            long v = Long.parseLong(raw);
            if (v >= min && v <= max) {
                return v;
            }
        }
        throw ApiException.badRequest(name + " must be an integer in " + min + ".." + max);
    }
}
