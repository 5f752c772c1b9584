package dev.imexprobe.web;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;

import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;


import java.io.IOException;
import java.io.Writer;

/**
 * Errors that never reach a controller answer as problem+json too, like every other error of the agent.
 * Two places raise them: Tomcat's error page dispatch to /error (a method the connector refuses itself, such as
 * TRACE; a filter that threw), answered by this controller in place of Spring Boot's BasicErrorController; and
 * Tomcat itself for requests it will not even map (a request target with invalid percent-encoding, %00 or an
 * encoded slash; headers over the size limit), answered by {@link Valve} in place of its HTML error report.
 */
@RestController
public class ContainerErrors implements ErrorController {

    /** /error after a container error; asked for directly, it is the unknown path it is to clients. */
    @RequestMapping("${server.error.path:${error.path:/error}}")
    public ResponseEntity<ProblemDetail> error(HttpServletRequest request) {
        if (!(request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE) instanceof Integer status)) {
            return Problems.response(HttpStatus.NOT_FOUND, "not-found", "no such path: " + request.getRequestURI(),
                    null);
        }
        HttpStatusCode code = HttpStatusCode.valueOf(status);
        Object message = request.getAttribute(RequestDispatcher.ERROR_MESSAGE);
        String detail = message instanceof String m && !m.isBlank() ? m : ProblemJson.reason(status);
        return Problems.response(code, ProblemJson.code(code), detail, null);
    }

    /**
     * Tomcat's last word on a request it answered itself: problem+json instead of its HTML report. Named as the
     * host's error report valve class, so it also answers requests the connector refused before mapping them.
     */
    public static class Valve extends ErrorReportValve {

        @Override
        protected void report(Request request, Response response, Throwable throwable) {
            int status = response.getStatus();
            // As the base class: only errors, only when nothing was written, and only once.
            if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
                return;
            }
            HttpStatusCode code = HttpStatusCode.valueOf(status);
            String detail = ProblemJson.reason(status) + ": the request was refused by the web server before the agent "
                    + "saw it (malformed request line, path or headers, or headers over the size limit)";
            try {
                response.setContentType("application/problem+json");
                response.setCharacterEncoding("UTF-8");
                Writer writer = response.getReporter();
                if (writer != null) {
                    writer.write(ProblemJson.text(ProblemJson.problem(code, ProblemJson.code(code), detail)));
                    response.finishResponse();
                }
            } catch (IOException | IllegalStateException e) {
                // The client is gone or the response is committed: nothing more can be said.
            }
        }
    }
}
