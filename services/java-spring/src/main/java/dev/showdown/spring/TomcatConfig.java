package dev.showdown.spring;

import java.io.IOException;
import java.io.Writer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.ActionCode;
import org.springframework.boot.tomcat.TomcatContextCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;

/**
 * TomcatConfig makes Tomcat's own error answers JSON too. Requests that Tomcat rejects before any
 * servlet runs (an encoded slash or NUL in the path, a path above the root) get their body from the
 * host's error report valve, which renders HTML unless replaced. A path above the root is 404, as
 * any other path that matches no route.
 */
@Configuration(proxyBeanMethods = false)
public class TomcatConfig {

    /** jsonErrorReports installs JsonErrorReportValve as the host's error report valve. */
    @Bean
    public TomcatContextCustomizer jsonErrorReports() {
        return context -> {
            if (context.getParent() instanceof StandardHost host) {
                host.setErrorReportValveClass(JsonErrorReportValve.class.getName());
            }
        };
    }

    /** JsonErrorReportValve writes {"error":"..."} where Tomcat would write an HTML error page. */
    public static class JsonErrorReportValve extends ErrorReportValve {

        @Override
        protected void report(Request request, Response response, Throwable throwable) {
            int status = response.getStatus();
            if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
                return;
            }
            AtomicBoolean ioAllowed = new AtomicBoolean(true);
            response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
            if (!ioAllowed.get()) {
                return;
            }
            if (status == 400 && RequestFilter.hasDotSegment(request.getCoyoteRequest().requestURI().toString())) {
                // Tomcat refuses a path whose dot segments climb above the root (/a/../../b) as 400;
                // to the contract it is a path that matches no route.
                status = 404;
                response.setStatus(status);
            }
            HttpStatus s = HttpStatus.resolve(status);
            String message = s == null ? "error " + status : s.getReasonPhrase().toLowerCase();
            try {
                response.setContentType("application/json");
                response.setCharacterEncoding("UTF-8");
                Writer writer = response.getReporter();
                if (writer != null) {
                    writer.write("{\"error\":\"" + message + "\"}");
                    response.finishResponse();
                }
            } catch (IOException | IllegalStateException e) {
                // the client is gone or the response was committed meanwhile: nothing more to say
            }
        }
    }
}
