package dev.showdown.spring;

import java.io.IOException;
import java.io.Writer;
import jakarta.servlet.ServletException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.catalina.valves.ValveBase;
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

    /**
     * CLOSE_UNANSWERED is the request attribute that asks CloseUnansweredValve to close the connection
     * without writing the answer.
     */
    public static final String CLOSE_UNANSWERED = "dev.showdown.spring.closeUnanswered";

    /** closeUnanswered installs CloseUnansweredValve first in the context's pipeline. */
    @Bean
    public TomcatContextCustomizer closeUnanswered() {
        return context -> context.getPipeline().addValve(new CloseUnansweredValve());
    }

    /**
     * CloseUnansweredValve closes the connection, writing nothing, after a request that set
     * CLOSE_UNANSWERED. The servlet API cannot abort a response; Tomcat's own way is the CLOSE_NOW
     * action (what it does when an answer fails half-way), which also stops any later write, and a
     * response marked committed that nothing flushes. The check costs one attribute lookup per request.
     */
    public static class CloseUnansweredValve extends ValveBase {

        /** CloseUnansweredValve supports async requests (it acts only after the chain returns). */
        public CloseUnansweredValve() {
            super(true);
        }

        @Override
        public void invoke(Request request, Response response) throws IOException, ServletException {
            getNext().invoke(request, response);
            if (request.getAttribute(CLOSE_UNANSWERED) != null) {
                response.getCoyoteResponse().action(ActionCode.CLOSE_NOW, null);
                response.setSuspended(true);
                response.getCoyoteResponse().setCommitted(true);
            }
        }
    }

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
