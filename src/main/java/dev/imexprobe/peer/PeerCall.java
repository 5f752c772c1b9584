package dev.imexprobe.peer;

/**
 * One call to a peer agent, as data: the parsed answer, or which way it failed. Unreachable, timed out,
 * refused (a 4xx with the peer's reason), unsigned (a 401 to a request this agent could not sign: it has no token)
 * and garbled (a 5xx or a body that is not what the API promises) lead to different findings.
 */
public record PeerCall<T>(Kind kind, T value, int httpStatus, String detail, long nanos) {

    public enum Kind { OK, UNREACHABLE, TIMEOUT, REJECTED, UNSIGNED, GARBLED }

    public boolean ok() {
        return kind == Kind.OK;
    }

    static <T> PeerCall<T> ok(T value, int status, long nanos) {
        return new PeerCall<>(Kind.OK, value, status, null, nanos);
    }

    static <T> PeerCall<T> failed(Kind kind, int status, String detail, long nanos) {
        return new PeerCall<>(kind, null, status, detail, nanos);
    }
}
