package dev.imexprobe.kubernetes;

import dev.imexprobe.json.Json;

import tools.jackson.core.JacksonException;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one client of the Kubernetes API, shared by pod discovery ({@code peer/KubernetesPeers}) and the Node
 * condition ({@code condition/NodeConditionWriter}): where the API is, the service-account token (read again on
 * every call because projected tokens rotate, about hourly), the CA (read once), the timeout of each call, and
 * the retries with backoff.
 *
 * <p>{@link #send} answers every HTTP status as a {@link Response}; what it means (403 on pods, 409 on a Lease)
 * is the caller's to say. It throws {@link KubernetesApiException} only when no answer came: connection refused,
 * TLS refused, timed out. Connection failures, timeouts, 429 and 5xx are retried {@link Settings#retries()}
 * times, waiting {@link Settings#backoff()} doubled each time; every request this project sends is idempotent
 * (GET, a patch that sets values, an Event whose name is chosen by the caller, whose repeat answers 409).
 */
public final class KubernetesApi implements AutoCloseable {

    public static final URI IN_CLUSTER_API = URI.create("https://kubernetes.default.svc");
    public static final Path SERVICE_ACCOUNT_DIR = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

    /**
     * @param apiServer base URL of the API server (a path prefix is kept, a trailing slash dropped); {@code http://}
     *                  is allowed (tests, {@code kubectl proxy})
     * @param tokenFile bearer token, re-read each call; when the file does not exist no token is sent
     * @param caFile    PEM bundle to trust for TLS; null or absent file: the JVM's default trust store
     * @param timeout   limit for each HTTP call, body included
     * @param retries   further attempts after a call that got no answer, 429 or 5xx
     * @param backoff   wait before the first retry, doubled for each next one
     */
    public record Settings(URI apiServer, Path tokenFile, Path caFile, Duration timeout, int retries,
                           Duration backoff) {

        public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
        public static final int DEFAULT_RETRIES = 1;
        public static final Duration DEFAULT_BACKOFF = Duration.ofMillis(250);

        public Settings {
            if (apiServer == null || apiServer.getScheme() == null || apiServer.getHost() == null
                    || !apiServer.getScheme().matches("(?i)https?")) {
                throw new IllegalArgumentException("Kubernetes API server URL must be an absolute http or https URL, "
                        + "e.g. " + IN_CLUSTER_API + " (imexprobe.kubernetes.api; got " + apiServer + ")");
            }
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("Kubernetes API timeout must be positive, got " + timeout);
            }
            if (retries < 0 || retries > 10) {
                throw new IllegalArgumentException("Kubernetes API retries must be 0..10, got " + retries);
            }
            if (backoff == null || backoff.isNegative()) {
                throw new IllegalArgumentException("Kubernetes API backoff must not be negative, got " + backoff);
            }
        }

        /** The API at {@link #IN_CLUSTER_API} with the mounted service-account token and CA. */
        public static Settings inCluster() {
            return new Settings(IN_CLUSTER_API, SERVICE_ACCOUNT_DIR.resolve("token"),
                    SERVICE_ACCOUNT_DIR.resolve("ca.crt"), DEFAULT_TIMEOUT, DEFAULT_RETRIES, DEFAULT_BACKOFF);
        }

        public Settings withApiServer(URI newApiServer) {
            return new Settings(newApiServer, tokenFile, caFile, timeout, retries, backoff);
        }

        public Settings withFiles(Path newTokenFile, Path newCaFile) {
            return new Settings(apiServer, newTokenFile, newCaFile, timeout, retries, backoff);
        }

        public Settings withTimeout(Duration newTimeout) {
            return new Settings(apiServer, tokenFile, caFile, newTimeout, retries, backoff);
        }

        public Settings withRetries(int newRetries, Duration newBackoff) {
            return new Settings(apiServer, tokenFile, caFile, timeout, newRetries, newBackoff);
        }
    }

    /** An HTTP answer of the API server. */
    public record Response(int status, byte[] body) {

        public boolean ok() {
            return status >= 200 && status < 300;
        }

        /** A Kubernetes error answer is a Status object whose "message" says what went wrong: " (that)", or "". */
        public String apiMessage() {
            if (body == null || body.length == 0) {
                return "";
            }
            try {
                var message = Json.MAPPER.readTree(body).path("message");
                if (message.isString() && !message.stringValue().isBlank()) {
                    return " (" + shorten(message.stringValue()) + ")";
                }
            } catch (JacksonException e) {
                // not a Status object: fall through to the raw text
            }
            return " (" + shorten(new String(body, StandardCharsets.UTF_8)) + ")";
        }
    }

    private final Settings settings;
    private final String base;
    private final HttpClient http;

    /**
     * @throws IllegalArgumentException when the CA file exists but holds no usable certificate
     */
    public KubernetesApi(Settings settings) {
        this.settings = settings;
        this.base = settings.apiServer().toString().replaceAll("/+$", "");
        HttpClient.Builder builder = HttpClient.newBuilder()
                // A few small calls per mesh interval: HTTP/1.1 keeps it simple and avoids h2c upgrades on plain HTTP.
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(settings.timeout())
                .followRedirects(HttpClient.Redirect.NEVER);
        if (settings.caFile() != null && Files.exists(settings.caFile())) {
            builder.sslContext(trusting(settings.caFile()));
        }
        this.http = builder.build();
    }

    public Settings settings() {
        return settings;
    }

    @Override
    public void close() {
        http.close();
    }

    public Response get(String path, String what) throws KubernetesApiException {
        return send("GET", path, null, null, what);
    }

    /**
     * One request, retried as the class says.
     *
     * @param path        starting with {@code /}, query included, already encoded
     * @param contentType of {@code body}; null without a body
     * @param what        what the call is for, as the error message's "while …" ("listing pods in namespace x")
     */
    public Response send(String method, String path, String contentType, byte[] body, String what)
            throws KubernetesApiException {
        Duration wait = settings.backoff();
        for (int attempt = 0; ; attempt++) {
            boolean last = attempt >= settings.retries();
            try {
                Response r = once(method, path, contentType, body, what);
                if (last || !(r.status() == 429 || r.status() >= 500)) {
                    return r;
                }
            } catch (KubernetesApiException e) {
                if (last || Thread.currentThread().isInterrupted()) {
                    throw e;
                }
            }
            try {
                Thread.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KubernetesApiException("interrupted while " + what);
            }
            wait = wait.multipliedBy(2);
        }
    }

    private Response once(String method, String path, String contentType, byte[] body, String what)
            throws KubernetesApiException {
        String token = readToken();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(settings.timeout())
                .header("Accept", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        String while_ = what + " at " + settings.apiServer();
        CompletableFuture<HttpResponse<byte[]>> call =
                http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        try {
            // The request timeout covers the headers only; this also bounds a body that trickles in.
            HttpResponse<byte[]> response = call.get(settings.timeout().toMillis(), TimeUnit.MILLISECONDS);
            return new Response(response.statusCode(), response.body());
        } catch (TimeoutException e) {
            call.cancel(true);
            throw timedOut(while_);
        } catch (InterruptedException e) {
            call.cancel(true);
            Thread.currentThread().interrupt();
            throw new KubernetesApiException("interrupted while " + while_);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof HttpTimeoutException) {
                throw timedOut(while_);
            }
            if (cause instanceof ConnectException) {
                throw new KubernetesApiException("cannot connect to the Kubernetes API while " + while_ + " (" + cause
                        + "): check the API server address and the NetworkPolicy egress to it", cause);
            }
            if (cause instanceof SSLException) {
                throw new KubernetesApiException("TLS to the Kubernetes API failed while " + while_ + " ("
                        + cause.getMessage() + "): check that " + settings.caFile() + " holds the cluster's CA", cause);
            }
            throw new KubernetesApiException("request failed while " + while_ + ": " + cause, cause);
        }
    }

    private KubernetesApiException timedOut(String what) {
        return new KubernetesApiException("Kubernetes API did not answer within " + settings.timeout().toMillis()
                + " ms while " + what + ": check the API server's health and the network path to it");
    }

    private String readToken() throws KubernetesApiException {
        if (settings.tokenFile() == null) {
            return null;
        }
        try {
            String token = Files.readString(settings.tokenFile()).strip();
            return token.isEmpty() ? null : token;
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new KubernetesApiException("cannot read the service-account token " + settings.tokenFile() + ": " + e
                    + " (check automountServiceAccountToken and the file's permissions)", e);
        }
    }

    /** Percent-encodes one path segment or query value ({@code %20} for a space, never {@code +}). */
    public static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    public static String shorten(String s) {
        if (s == null) {
            return "";
        }
        String oneLine = s.replaceAll("\\s+", " ").strip();
        return oneLine.length() <= 200 ? oneLine : oneLine.substring(0, 200) + "…";
    }

    private static SSLContext trusting(Path caFile) {
        try (InputStream in = Files.newInputStream(caFile)) {
            Collection<? extends Certificate> certificates =
                    CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certificates.isEmpty()) {
                throw new IllegalArgumentException("Kubernetes CA file " + caFile + " holds no certificate: mount "
                        + "the service account's ca.crt or point imexprobe.kubernetes.ca-file at a PEM bundle");
            }
            KeyStore trustStore = KeyStore.getInstance(KeyStore.getDefaultType());
            trustStore.load(null, null);
            int i = 0;
            for (Certificate certificate : certificates) {
                trustStore.setCertificateEntry("kubernetes-ca-" + i++, certificate);
            }
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trustStore);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use Kubernetes CA file " + caFile + " (" + e.getMessage()
                    + "): it must be a PEM bundle such as the service account's ca.crt", e);
        }
    }
}
