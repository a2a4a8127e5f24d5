package dev.showdown.spring;

import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.server.PathContainer;
import org.springframework.stereotype.Component;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.pattern.PathPattern;

/**
 * Routes finds the route pattern a path matches, whatever the method, for the requests Spring MVC
 * answers without a handler (405) or that are answered before it (413): their metrics are labelled
 * with the route, not "unmatched".
 */
@Component
public class Routes {

    private final ObjectProvider<RequestMappingHandlerMapping> mappings;
    private volatile List<PathPattern> patterns;

    /** Routes reads the patterns of mappings at first use, once MVC is up. */
    public Routes(ObjectProvider<RequestMappingHandlerMapping> mappings) {
        this.mappings = mappings;
    }

    /** match returns the pattern of the first route whose path matches path, or null. */
    public String match(String path) {
        PathContainer p = PathContainer.parsePath(path);
        for (PathPattern pattern : patterns()) {
            if (pattern.matches(p)) {
                return pattern.getPatternString();
            }
        }
        return null;
    }

    private List<PathPattern> patterns() {
        List<PathPattern> r = patterns;
        if (r == null) {
            r = mappings.getObject().getHandlerMethods().keySet().stream()
                    .filter(info -> info.getPathPatternsCondition() != null)
                    .flatMap(info -> info.getPathPatternsCondition().getPatterns().stream())
                    .sorted()
                    .toList();
            patterns = r;
        }
        return r;
    }
}
