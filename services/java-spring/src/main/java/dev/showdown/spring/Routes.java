package dev.showdown.spring;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.server.PathContainer;
import org.springframework.stereotype.Component;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.pattern.PathPattern;

/**
 * Routes finds the route pattern a path matches, whatever the method, for the requests Spring MVC
 * answers without a handler (405) or that are answered before it (413, OPTIONS): their metrics are
 * labelled with the route, not "unmatched", and an OPTIONS answer lists the route's methods.
 */
@Component
public class Routes {

    private final ObjectProvider<RequestMappingHandlerMapping> mappings;
    private volatile List<Route> routes;

    /** Route is one path pattern and the methods mapped on it. */
    record Route(PathPattern pattern, Set<String> methods) {}

    /** Routes reads the patterns of mappings at first use, once MVC is up. */
    public Routes(ObjectProvider<RequestMappingHandlerMapping> mappings) {
        this.mappings = mappings;
    }

    /** match returns the pattern of the first route whose path matches path, or null. */
    public String match(String path) {
        Route r = find(path);
        return r == null ? null : r.pattern().getPatternString();
    }

    /**
     * allow returns the methods of the route path matches, as an Allow header value, or null when no
     * route matches or the route takes any method (/error).
     */
    public String allow(String path) {
        Route r = find(path);
        return r == null || r.methods().isEmpty() ? null : String.join(", ", r.methods());
    }

    private Route find(String path) {
        PathContainer p = PathContainer.parsePath(path);
        for (Route r : routes()) {
            if (r.pattern().matches(p)) {
                return r;
            }
        }
        return null;
    }

    private List<Route> routes() {
        List<Route> r = routes;
        if (r == null) {
            Map<PathPattern, Set<String>> byPattern = new LinkedHashMap<>();
            mappings.getObject().getHandlerMethods().keySet().forEach(info -> {
                if (info.getPathPatternsCondition() == null) {
                    return;
                }
                for (PathPattern pattern : info.getPathPatternsCondition().getPatterns()) {
                    Set<String> methods = byPattern.computeIfAbsent(pattern, k -> new TreeSet<>());
                    info.getMethodsCondition().getMethods().forEach(m -> methods.add(m.name()));
                }
            });
            r = byPattern.entrySet().stream()
                    .map(e -> new Route(e.getKey(), e.getValue()))
                    .sorted((a, b) -> a.pattern().compareTo(b.pattern())) // most specific first
                    .toList();
            routes = r;
        }
        return r;
    }
}
