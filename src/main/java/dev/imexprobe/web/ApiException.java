package dev.imexprobe.web;

import org.springframework.http.HttpStatus;

/**
 * A refusal the caller can act on, rendered as RFC 9457 problem+json with type urn:imexprobe:problem:&lt;code&gt;.
 * Only for the caller's own mistakes or limits: driver and peer failures are results, never exceptions.
 */
public class ApiException extends RuntimeException {

    private final HttpStatus status;
    private final String code;
    private final Long retryAfterSeconds;

    public ApiException(HttpStatus status, String code, String detail) {
        this(status, code, detail, null);
    }

    public ApiException(HttpStatus status, String code, String detail, Long retryAfterSeconds) {
        super(detail);
        this.status = status;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public static ApiException invalid(String detail) {
        return new ApiException(HttpStatus.BAD_REQUEST, "invalid-input", detail);
    }

    /** The agent holds all it may now: 429, to be retried after {@code retryAfterSeconds}. */
    public static ApiException full(String detail, long retryAfterSeconds) {
        return new ApiException(HttpStatus.TOO_MANY_REQUESTS, "over-cap", detail, retryAfterSeconds);
    }

    public static ApiException overCap(String detail) {
        return new ApiException(HttpStatus.CONTENT_TOO_LARGE, "over-cap", detail);
    }

    public static ApiException unknownExport(String id) {
        return new ApiException(HttpStatus.NOT_FOUND, "unknown-export", "no export " + id
                + " on this agent: it was never made here, was deleted, or expired (exports live "
                + "imexprobe.exports.ttl)");
    }

    public HttpStatus status() {
        return status;
    }

    public String code() {
        return code;
    }

    public Long retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
