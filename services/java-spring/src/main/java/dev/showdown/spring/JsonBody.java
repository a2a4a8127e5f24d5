package dev.showdown.spring;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;

/**
 * JsonBody reads a request body as one JSON object and its fields by the contract's rules: at most
 * 1 MiB, nothing after the object, integers as I-JSON (a number read as an IEEE-754 double that must
 * be integral and in range, so 10, 10.0 and 1e1 agree and 10.5, "10", true and null do not), strings
 * without U+0000 counted in code points. Jackson's own coercions (a float into a long, a string into
 * a number) are never used: fields are read from the tree and checked here.
 */
@Component
public class JsonBody {

    /** MAX_BYTES is the largest body the contract accepts; a larger one is 413. */
    public static final int MAX_BYTES = 1 << 20;

    /** MAX_ID is the largest id, 2^53-1, the largest integer a double holds exactly. */
    public static final long MAX_ID = (1L << 53) - 1;

    private final ObjectReader reader;

    /** JsonBody reads with Spring's JsonMapper, failing on trailing tokens. */
    public JsonBody(JsonMapper mapper) {
        this.reader = mapper.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    /**
     * object reads the request's body (at most MAX_BYTES) as a JSON object, else throws a 400 or 413
     * ApiException. A declared Content-Length is read in one exact buffer; a chunked body in chunks.
     */
    public JsonNode object(HttpServletRequest request) throws IOException {
        long declared = request.getContentLengthLong();
        if (declared > MAX_BYTES) {
            throw new ApiException(413, "request body over 1 MiB");
        }
        byte[] body;
        try {
            InputStream in = request.getInputStream();
            body = declared >= 0 ? in.readNBytes((int) declared) : in.readNBytes(MAX_BYTES + 1);
        } catch (IOException e) {
            // The client closed before sending its whole body, or sent broken chunked encoding
            // (Tomcat's ClientAbortException, BadRequestException): its fault, not a bug here.
            throw ApiException.badRequest("request body could not be read");
        }
        if (body.length > MAX_BYTES) {
            throw new ApiException(413, "request body over 1 MiB");
        }
        JsonNode node;
        try {
            node = reader.readTree(body);
        } catch (JacksonException e) {
            throw ApiException.badRequest("malformed JSON");
        }
        if (node == null || !node.isObject()) {
            throw ApiException.badRequest("request body must be a JSON object");
        }
        return node;
    }

    /** integer reads field of obj as an integer in min..max. */
    public static long integer(JsonNode obj, String field, long min, long max) {
        JsonNode v = obj.get(field);
        if (v == null) {
            throw ApiException.badRequest(field + " is missing");
        }
        if (v.isNumber()) {
            double d = v.numberValue().doubleValue();
            if (Double.isFinite(d) && d == Math.rint(d) && d >= min && d <= max) {
                return (long) d;
            }
        }
        throw ApiException.badRequest(field + " must be an integer in " + min + ".." + max);
    }

    /** string reads field of obj as a string of 1..maxCodePoints code points without U+0000. */
    public static String string(JsonNode obj, String field, int maxCodePoints) {
        JsonNode v = obj.get(field);
        if (v == null) {
            throw ApiException.badRequest(field + " is missing");
        }
        if (!v.isString()) {
            throw ApiException.badRequest(field + " must be a string");
        }
        String s = v.stringValue();
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
     * pathInteger parses a path parameter: decimal digits only, at most 16 of them, in min..max; anything
     * else (-1, 1.5, abc, ..) is 400.
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
