package dev.imexprobe.agent;

import dev.imexprobe.kubernetes.KubernetesApi;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * How the agent reaches the Kubernetes API, for pod discovery and the Node condition alike
 * (IMEXPROBE_KUBERNETES_API, IMEXPROBE_KUBERNETES_TOKENFILE, IMEXPROBE_KUBERNETES_CAFILE, …). Unset: the in-cluster
 * API with the mounted service-account token and CA.
 *
 * @param api       base URL; {@code http://} is allowed (tests, {@code kubectl proxy}). The older
 *                  {@code imexprobe.peers.kubernetes.api} is still read when this is unset
 * @param tokenFile bearer token file, read again on every call; absent file: no token sent
 * @param caFile    PEM bundle to trust; absent file: the JVM's trust store
 * @param timeout   each call's limit, body included
 * @param retries   further attempts after no answer, 429 or 5xx
 * @param backoff   wait before the first retry, doubled each time
 */
@ConfigurationProperties("imexprobe.kubernetes")
public record KubernetesProperties(String api, String tokenFile, String caFile, @DefaultValue("5s") Duration timeout,
                                   @DefaultValue("1") int retries, @DefaultValue("250ms") Duration backoff) {

    public KubernetesProperties {
        if (api != null && !api.isBlank() && !api.matches("(?i)https?://[^/\\s]+(/\\S*)?")) {
            throw new IllegalArgumentException("imexprobe.kubernetes.api must be an absolute http or https URL such "
                    + "as https://kubernetes.default.svc, got '" + api + "'");
        }
        timeout = timeout == null ? KubernetesApi.Settings.DEFAULT_TIMEOUT : timeout;
        backoff = backoff == null ? KubernetesApi.Settings.DEFAULT_BACKOFF : backoff;
        if (timeout.isNegative() || timeout.isZero() || retries < 0 || retries > 10 || backoff.isNegative()) {
            throw new IllegalArgumentException("imexprobe.kubernetes: timeout must be positive, retries 0..10 and "
                    + "backoff not negative (timeout=" + timeout + ", retries=" + retries + ", backoff=" + backoff + ")");
        }
    }

    /** The client's settings; {@code legacyApi} (imexprobe.peers.kubernetes.api) is used when {@code api} is unset. */
    public KubernetesApi.Settings settings(String legacyApi) {
        KubernetesApi.Settings s = KubernetesApi.Settings.inCluster().withTimeout(timeout).withRetries(retries, backoff);
        String url = api != null && !api.isBlank() ? api : legacyApi;
        if (url != null && !url.isBlank()) {
            s = s.withApiServer(URI.create(url.strip()));
        }
        return s.withFiles(tokenFile != null && !tokenFile.isBlank() ? Path.of(tokenFile) : s.tokenFile(),
                caFile != null && !caFile.isBlank() ? Path.of(caFile) : s.caFile());
    }
}
