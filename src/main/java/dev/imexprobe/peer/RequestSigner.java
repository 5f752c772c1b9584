package dev.imexprobe.peer;

/** Produces the Authorization header for a request to a peer (HMAC over method, path, time and body). */
@FunctionalInterface
public interface RequestSigner {

    /** Null means: send no Authorization header. */
    String authorization(String method, String pathAndQuery, byte[] body);
}
