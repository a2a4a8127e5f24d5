package dev.showdown.micronaut;

import java.util.List;

/**
 * RouteTable is the contract's routes, matched on the raw request path before the framework's router
 * sees it: the framework then only gets paths the contract serves. It decides the answers the contract
 * fixes for every stack alike (a literal dot segment or an unknown path 404, a ';' 400, a known path
 * with another method 405 with Allow) and gives every request its metrics label, the route pattern
 * or "unmatched". A pattern segment {name} matches one non-empty raw segment; its value is checked by
 * the handler (JsonBody.pathInteger), so a bad id is 400, not 404.
 */
public final class RouteTable {

    /** UNMATCHED is the route label of a request that matched no route. */
    public static final String UNMATCHED = "unmatched";

    /** Route is one path pattern, its segments and the one method it serves. */
    public record Route(String pattern, String[] segments, String method) {}

    /** ROUTES are every route of the contract, whatever the workloads configured. */
    static final List<Route> ROUTES = List.of(
            route("POST", "/uppercase"),
            route("POST", "/count"),
            route("GET", "/health"),
            route("GET", "/metrics"),
            route("POST", "/client/new/{balance}"),
            route("POST", "/transaction"),
            route("GET", "/client/{id}/balance"),
            route("POST", "/user"),
            route("GET", "/user/{id}"),
            route("GET", "/sku/{sku_id}"));

    private RouteTable() {}

    private static Route route(String method, String pattern) {
        return new Route(pattern, pattern.substring(1).split("/", -1), method);
    }

    /** Decision is what the table says of one request: its route (or null) and an early answer (or 0). */
    public record Decision(Route route, int status, String allow, String error) {

        /** pass reports whether the request goes on to the framework's router. */
        public boolean pass() {
            return status == 0;
        }

        /** label is the request's metrics label. */
        public String label() {
            return route == null ? UNMATCHED : route.pattern();
        }
    }

    /** decide looks up method and rawPath (the path as sent, without the query string). */
    public static Decision decide(String method, String rawPath) {
        if (rawPath == null || rawPath.isEmpty() || rawPath.charAt(0) != '/') {
            return new Decision(null, 404, null, "not found");
        }
        String[] segs = rawPath.substring(1).split("/", -1);
        for (String s : segs) {
            if (s.equals(".") || s.equals("..")) {
                return new Decision(null, 404, null, "not found");
            }
        }
        Route same = null;
        Route other = null;
        for (Route r : ROUTES) {
            if (matches(r.segments(), segs)) {
                if (r.method().equals(method)) {
                    same = r;
                    break;
                }
                if (other == null) {
                    other = r;
                }
            }
        }
        if (same != null) {
            if (rawPath.indexOf(';') >= 0) {
                return new Decision(same, 400, null, "malformed path: ';' is not allowed");
            }
            String bad = badParameter(same.segments(), segs);
            if (bad != null) {
                return new Decision(same, 400, null, bad + " must be an integer of 1 to 16 decimal digits");
            }
            return new Decision(same, 0, null, null);
        }
        if (other != null) {
            return new Decision(other, 405, other.method(), "method " + method + " not allowed; allowed: " + other.method());
        }
        return new Decision(null, 404, null, "not found");
    }

    /**
     * badParameter returns the name of the first path parameter whose raw segment is not 1 to 16
     * ASCII digits, or null: the framework decodes and normalizes paths (%2e%2e would become a dot
     * segment), so the contract's rule is checked on the path as sent.
     */
    private static String badParameter(String[] pattern, String[] segs) {
        for (int i = 0; i < pattern.length; i++) {
            String p = pattern[i];
            if (!p.startsWith("{")) {
                continue;
            }
            String v = segs[i];
            boolean ok = v.length() <= 16;
            for (int j = 0; ok && j < v.length(); j++) {
                ok = v.charAt(j) >= '0' && v.charAt(j) <= '9';
            }
            if (!ok) {
                return p.substring(1, p.length() - 1);
            }
        }
        return null;
    }

    private static boolean matches(String[] pattern, String[] segs) {
        if (pattern.length != segs.length) {
            return false;
        }
        for (int i = 0; i < pattern.length; i++) {
            String p = pattern[i];
            if (p.startsWith("{") ? segs[i].isEmpty() : !p.equals(segs[i])) {
                return false;
            }
        }
        return true;
    }
}
