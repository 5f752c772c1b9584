package dev.imexprobe.web;

import dev.imexprobe.api.InvalidRequest;
import dev.imexprobe.api.Wire;

import jakarta.servlet.http.HttpServletRequest;

import org.apache.tomcat.util.http.InvalidParameterException;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.validation.FieldError;
import org.springframework.validation.ObjectError;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;


/**
 * Every error MVC handles leaves as problem+json with a type in our namespace ({@link ProblemJson}), including
 * the ones Spring raises itself (unknown route, wrong method, unreadable body), so clients and the fuzz test see
 * one format.
 */
@RestControllerAdvice
public class Problems extends ResponseEntityExceptionHandler {

    public static ResponseEntity<ProblemDetail> response(HttpStatusCode status, String code, String detail,
                                                         Long retryAfterSeconds) {
        ResponseEntity.BodyBuilder b = ResponseEntity.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON);
        if (retryAfterSeconds != null) {
            b.header(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds));
        }
        return b.body(ProblemJson.problem(status, code, detail));
    }

    /**
     * The answer the {@code @ExceptionHandler}s below give for {@code e}, for a route served outside MVC's dispatch
     * ({@link DirectRoutes}): the same choice Spring makes, in one place.
     */
    ResponseEntity<ProblemDetail> answer(RuntimeException e, HttpServletRequest request) {
        return switch (e) {
            case ApiException api -> api(api);
            case InvalidRequest invalid -> invalidRequest(invalid);
            case InvalidParameterException undecodable -> undecodableQuery(undecodable);
            case IllegalStateException state -> illegalState(state, request);
            default -> unexpected(e);
        };
    }

    @ExceptionHandler(ApiException.class)
    ResponseEntity<ProblemDetail> api(ApiException e) {
        return response(e.status(), e.code(), e.getMessage(), e.retryAfterSeconds());
    }

    /** A request body that breaks the contract, read outside MVC's converters ({@code Wire.read}). */
    @ExceptionHandler(InvalidRequest.class)
    ResponseEntity<ProblemDetail> invalidRequest(InvalidRequest e) {
        return response(HttpStatus.BAD_REQUEST, "invalid-input", e.getMessage(), null);
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
     * followed by more (/actuator/health/a/b): that is an unknown path, not our failure. Nothing else under
     * /actuator/health/ throws it (a failing health indicator is reported DOWN, not thrown).
     */
    @ExceptionHandler(IllegalStateException.class)
    ResponseEntity<ProblemDetail> illegalState(IllegalStateException e, HttpServletRequest request) {
        if (request.getRequestURI().startsWith("/actuator/health/")) {
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

    /** A request body the contract's reader refused: its message; Spring's own for any other unreadable body. */
    @Override
    protected ResponseEntity<Object> handleHttpMessageNotReadable(HttpMessageNotReadableException ex,
                                                                  HttpHeaders headers, HttpStatusCode status,
                                                                  WebRequest request) {
        if (ex.getCause() instanceof InvalidRequest invalid) {
            return new ResponseEntity<>(ProblemJson.problem(HttpStatus.BAD_REQUEST, "invalid-input", invalid.getMessage()),
                    problemHeaders(headers), HttpStatus.BAD_REQUEST);
        }
        return super.handleHttpMessageNotReadable(ex, headers, status, request);
    }

    /** A broken constraint of a request record: the message on the constraint the caller should fix first. */
    @Override
    protected ResponseEntity<Object> handleMethodArgumentNotValid(MethodArgumentNotValidException ex,
                                                                  HttpHeaders headers, HttpStatusCode status,
                                                                  WebRequest request) {
        Class<?> type = ex.getParameter().getParameterType();
        ObjectError first = null;
        for (ObjectError e : ex.getBindingResult().getAllErrors()) {
            if (first == null || rank(type, e) < rank(type, first)) {
                first = e;
            }
        }
        String detail = first != null ? first.getDefaultMessage() : "the request body breaks the API's contract";
        return new ResponseEntity<>(ProblemJson.problem(HttpStatus.BAD_REQUEST, "invalid-input", detail), problemHeaders(headers),
                HttpStatus.BAD_REQUEST);
    }

    private static int rank(Class<?> type, ObjectError e) {
        return e instanceof FieldError f ? Wire.rank(type, f.getField()) : Integer.MAX_VALUE;
    }

    private static HttpHeaders problemHeaders(HttpHeaders headers) {
        HttpHeaders h = new HttpHeaders();
        h.addAll(headers);
        h.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        return h;
    }

    /** Spring's own errors: keep their status and message, put them in our namespace. */
    @Override
    protected ResponseEntity<Object> handleExceptionInternal(Exception ex, Object body, HttpHeaders headers,
                                                             HttpStatusCode status, WebRequest request) {
        String code = ProblemJson.code(status);
        String detail = body instanceof ProblemDetail pd && pd.getDetail() != null ? pd.getDetail() : ex.getMessage();
        return new ResponseEntity<>(ProblemJson.problem(status, code, detail), problemHeaders(headers), status);
    }
}
