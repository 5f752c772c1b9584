package dev.imexprobe.web;

import jakarta.servlet.http.HttpServletRequest;

import org.apache.tomcat.util.http.InvalidParameterException;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

import java.net.URI;
import java.util.Arrays;
import java.util.Locale;

/**
 * Every error leaves as problem+json with a type in our namespace, including the ones Spring raises itself
 * (unknown route, wrong method, unreadable body), so clients and the fuzz test see one format.
 */
@RestControllerAdvice
public class Problems extends ResponseEntityExceptionHandler {

    public static final String TYPE_PREFIX = "urn:imexprobe:problem:";

    public static ProblemDetail problem(HttpStatusCode status, String code, String detail) {
        ProblemDetail p = ProblemDetail.forStatusAndDetail(status, detail);
        p.setType(URI.create(TYPE_PREFIX + code));
        p.setTitle(HttpStatus.resolve(status.value()) != null
                ? HttpStatus.resolve(status.value()).getReasonPhrase() : "Error");
        return p;
    }

    /** The problem code of a status raised by Spring or the container: invalid-input for 400, else its name. */
    public static String code(HttpStatusCode status) {
        if (status.value() == 400) {
            return "invalid-input";
        }
        HttpStatus known = HttpStatus.resolve(status.value());
        return known != null ? known.name().toLowerCase(Locale.ROOT).replace('_', '-') : "error";
    }

    public static ResponseEntity<ProblemDetail> response(HttpStatusCode status, String code, String detail,
                                                         Long retryAfterSeconds) {
        ResponseEntity.BodyBuilder b = ResponseEntity.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON);
        if (retryAfterSeconds != null) {
            b.header(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds));
        }
        return b.body(problem(status, code, detail));
    }

    @ExceptionHandler(ApiException.class)
    ResponseEntity<ProblemDetail> api(ApiException e) {
        return response(e.status(), e.code(), e.getMessage(), e.retryAfterSeconds());
    }

    /**
     * A query string Tomcat cannot decode (%zz, bytes that are not UTF-8) is thrown at the first parameter read:
     * the caller's mistake, not ours.
     */
    @ExceptionHandler(InvalidParameterException.class)
    ResponseEntity<ProblemDetail> undecodableQuery(InvalidParameterException e) {
        return response(HttpStatus.BAD_REQUEST, "invalid-input", "the query string is not valid percent-encoded "
                + "UTF-8; encode each parameter value (RFC 3986)", null);
    }

    /**
     * Spring Boot 4.1.2's health endpoint asserts instead of answering 404 when an unknown first segment is
     * followed by more (/actuator/health/a/b): that is an unknown path, not our failure.
     */
    @ExceptionHandler(IllegalStateException.class)
    ResponseEntity<ProblemDetail> illegalState(IllegalStateException e, HttpServletRequest request) {
        boolean healthPath = request.getRequestURI().startsWith("/actuator/health/") && e.getStackTrace().length > 0
                && Arrays.stream(e.getStackTrace()).limit(4)
                .anyMatch(f -> f.getClassName().endsWith(".HealthEndpointSupport"));
        if (healthPath) {
            return response(HttpStatus.NOT_FOUND, "not-found", "no health component or group at "
                    + request.getRequestURI(), null);
        }
        return unexpected(e);
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<ProblemDetail> unexpected(Exception e) {
        logger.error("unexpected error answering a request", e);
        return response(HttpStatus.INTERNAL_SERVER_ERROR, "internal",
                "the agent failed unexpectedly (" + e.getClass().getSimpleName() + "); see its log", null);
    }

    /** Spring's own errors: keep their status and message, put them in our namespace. */
    @Override
    protected ResponseEntity<Object> handleExceptionInternal(Exception ex, Object body, HttpHeaders headers,
                                                             HttpStatusCode status, WebRequest request) {
        String code = code(status);
        String detail = body instanceof ProblemDetail pd && pd.getDetail() != null ? pd.getDetail() : ex.getMessage();
        HttpHeaders h = new HttpHeaders();
        h.addAll(headers);
        h.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        return new ResponseEntity<>(problem(status, code, detail), h, status);
    }
}
