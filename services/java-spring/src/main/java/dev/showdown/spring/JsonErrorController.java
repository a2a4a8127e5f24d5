package dev.showdown.spring;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * JsonErrorController replaces Spring Boot's error page: errors that Tomcat itself raises before or
 * outside Spring MVC (a malformed request line, a rejected encoded path) still answer JSON.
 */
@RestController
public class JsonErrorController implements ErrorController {

    /** error answers the error Tomcat forwarded here; a direct request to /error is 404. */
    @RequestMapping("/error")
    public ResponseEntity<ErrorAdvice.ErrorBody> error(HttpServletRequest request) {
        Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        int status = code instanceof Integer i && i >= 400 ? i : 404;
        return ResponseEntity.status(status).body(new ErrorAdvice.ErrorBody(ErrorAdvice.message(HttpStatusCode.valueOf(status))));
    }
}
