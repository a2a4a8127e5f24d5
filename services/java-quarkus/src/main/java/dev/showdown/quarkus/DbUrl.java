package dev.showdown.quarkus;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * DbUrl is a parsed scheme://user:password@host:port/dbname?params database URL: the contract's
 * DATABASE_URL and MYSQL_URL, which the service turns into JDBC URLs itself.
 */
public record DbUrl(URI uri, String user, String password, String database) {

    public static DbUrl parse(String var, String raw, String... schemes) {
        URI uri;
        try {
            uri = new URI(raw.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(var + ": not a URL (" + e.getMessage()
                    + "); want " + schemes[0] + "://user:password@host:port/dbname");
        }
        boolean known = false;
        for (String s : schemes) {
            known |= s.equalsIgnoreCase(uri.getScheme());
        }
        String db = uri.getRawPath() == null ? "" : uri.getRawPath().replaceFirst("^/", "");
        if (!known || uri.getHost() == null || db.isEmpty()) {
            throw new IllegalArgumentException(var + "=" + redact(raw) + ": want "
                    + schemes[0] + "://user:password@host:port/dbname");
        }
        String user = null;
        String password = null;
        String info = uri.getRawUserInfo();
        if (info != null) {
            int colon = info.indexOf(':');
            user = decode(colon < 0 ? info : info.substring(0, colon));
            password = colon < 0 ? null : decode(info.substring(colon + 1));
        }
        return new DbUrl(uri, user, password, db);
    }

    public String hostPort(int defaultPort) {
        return uri.getHost() + ":" + (uri.getPort() < 0 ? defaultPort : uri.getPort());
    }

    public String param(String name) {
        String q = uri.getRawQuery();
        if (q == null) {
            return null;
        }
        for (String kv : q.split("&")) {
            int eq = kv.indexOf('=');
            if (eq > 0 && decode(kv.substring(0, eq)).equals(name)) {
                return decode(kv.substring(eq + 1));
            }
        }
        return null;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static String redact(String raw) {
        return raw.replaceFirst("://([^:@/]*):[^@/]*@", "://$1:***@");
    }
}
