package dev.imexprobe.peer;

/** A failed lookup; the message names the cause and the next step, and ends up in {@link DiscoveryStatus}. */
final class DiscoveryException extends Exception {

    DiscoveryException(String message) {
        super(message);
    }

    DiscoveryException(String message, Throwable cause) {
        super(message, cause);
    }
}
