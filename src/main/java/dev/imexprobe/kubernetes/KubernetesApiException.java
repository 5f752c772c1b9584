package dev.imexprobe.kubernetes;

/** A call to the Kubernetes API that got no usable answer: not reachable, TLS refused, timed out, interrupted. */
public final class KubernetesApiException extends Exception {

    public KubernetesApiException(String message) {
        super(message);
    }

    public KubernetesApiException(String message, Throwable cause) {
        super(message, cause);
    }
}
