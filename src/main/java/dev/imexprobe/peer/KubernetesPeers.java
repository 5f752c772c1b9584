package dev.imexprobe.peer;

import dev.imexprobe.json.Json;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

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
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Peers from the Kubernetes API: the pods matching a label selector in one namespace
 * ({@code GET /api/v1/namespaces/{ns}/pods?labelSelector=…}, paged with {@code limit}/{@code continue}).
 *
 * <p>A pod counts as a peer when it is phase {@code Running}, has condition {@code Ready=True}, has a
 * {@code status.podIP}, and is not being deleted ({@code metadata.deletionTimestamp} unset): a pod that is
 * starting, failing its readiness probe or terminating would only produce failed probes that blame the fabric.
 * Its port is the first container port named {@link Settings#portName()} ({@code http}), else
 * {@link Settings#agentPort()}. Pod name and {@code spec.nodeName} go into the {@link PeerAddress} metadata.
 *
 * <p>The service-account token is read again on every call because projected tokens rotate (about hourly);
 * the CA is read once, at construction. Any failure (API unreachable, 401/403, a non-PodList answer, a timeout)
 * keeps the last known set and is reported in {@link #statuses()}. The list is all-or-nothing: a failure on page
 * three does not publish pages one and two.
 */
public final class KubernetesPeers extends LookedUpPeers implements AutoCloseable {

    public static final String SOURCE = "kubernetes";
    public static final URI IN_CLUSTER_API = URI.create("https://kubernetes.default.svc");
    public static final Path SERVICE_ACCOUNT_DIR = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

    // Bounds the paging loop should a server keep handing out continue tokens (500 pods/page → 500k pods).
    private static final int MAX_PAGES = 1000;

    /**
     * Where and what to list.
     *
     * @param apiServer     base URL of the API server (a path prefix is kept, a trailing slash dropped)
     * @param tokenFile     bearer token, re-read each call; when the file does not exist no token is sent
     *                      (e.g. behind {@code kubectl proxy})
     * @param caFile        PEM bundle to trust for TLS; null or absent file: the JVM's default trust store
     * @param namespace     namespace to list pods in
     * @param labelSelector Kubernetes label selector of the agent pods, e.g. {@code app.kubernetes.io/name=imexprobe}
     * @param agentPort     port used when a pod has no container port named {@code portName}
     * @param portName      container port name to prefer ({@code http})
     * @param timeout       limit for each HTTP call to the API server
     * @param pageSize      {@code limit} per page
     */
    public record Settings(URI apiServer, Path tokenFile, Path caFile, String namespace, String labelSelector,
                           int agentPort, String portName, Duration timeout, int pageSize) {

        public static final int DEFAULT_AGENT_PORT = 8080;
        public static final String DEFAULT_PORT_NAME = "http";
        public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
        public static final int DEFAULT_PAGE_SIZE = 500;

        public Settings {
            if (apiServer == null || apiServer.getScheme() == null || apiServer.getHost() == null) {
                throw new IllegalArgumentException("Kubernetes API server URL must be absolute, e.g. "
                        + IN_CLUSTER_API + " (got " + apiServer + ")");
            }
            if (namespace == null || namespace.isBlank()) {
                throw new IllegalArgumentException("imexprobe.peers.kubernetes.namespace is empty and "
                        + SERVICE_ACCOUNT_DIR.resolve("namespace") + " could not be read: set the namespace "
                        + "(outside a pod there is no service account to tell it)");
            }
            if (labelSelector == null || labelSelector.isBlank()) {
                throw new IllegalArgumentException("imexprobe.peers.kubernetes.selector is empty: set the agent "
                        + "pods' label selector, e.g. app.kubernetes.io/name=imexprobe (an empty selector would "
                        + "probe every pod in the namespace)");
            }
            if (agentPort < 1 || agentPort > 65535) {
                throw new IllegalArgumentException("agent port " + agentPort + " is out of range: use 1..65535");
            }
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("Kubernetes API timeout must be positive, got " + timeout);
            }
            if (pageSize < 1) {
                throw new IllegalArgumentException("Kubernetes list page size must be positive, got " + pageSize);
            }
            namespace = namespace.strip();
            labelSelector = labelSelector.strip();
            portName = portName == null || portName.isBlank() ? DEFAULT_PORT_NAME : portName.strip();
        }

        /**
         * In-cluster defaults: the API at {@link #IN_CLUSTER_API}, the mounted service-account token and CA, and
         * (when {@code namespace} is null or blank) the pod's own namespace from the mounted {@code namespace}
         * file.
         */
        public static Settings inCluster(String labelSelector, String namespace) {
            return inCluster(labelSelector, namespace, SERVICE_ACCOUNT_DIR);
        }

        static Settings inCluster(String labelSelector, String namespace, Path serviceAccountDir) {
            String ns = namespace;
            if (ns == null || ns.isBlank()) {
                try {
                    ns = Files.readString(serviceAccountDir.resolve("namespace"));
                } catch (IOException e) {
                    ns = null; // the compact constructor names the property to set
                }
            }
            return new Settings(IN_CLUSTER_API, serviceAccountDir.resolve("token"),
                    serviceAccountDir.resolve("ca.crt"), ns, labelSelector, DEFAULT_AGENT_PORT, DEFAULT_PORT_NAME,
                    DEFAULT_TIMEOUT, DEFAULT_PAGE_SIZE);
        }

        public Settings withApiServer(URI newApiServer) {
            return new Settings(newApiServer, tokenFile, caFile, namespace, labelSelector, agentPort, portName,
                    timeout, pageSize);
        }

        public Settings withAgentPort(int newAgentPort) {
            return new Settings(apiServer, tokenFile, caFile, namespace, labelSelector, newAgentPort, portName,
                    timeout, pageSize);
        }

        public Settings withTimeout(Duration newTimeout) {
            return new Settings(apiServer, tokenFile, caFile, namespace, labelSelector, agentPort, portName,
                    newTimeout, pageSize);
        }

        public Settings withPageSize(int newPageSize) {
            return new Settings(apiServer, tokenFile, caFile, namespace, labelSelector, agentPort, portName,
                    timeout, newPageSize);
        }
    }

    private final Settings settings;
    private final String podsUrl;
    private final HttpClient http;

    /**
     * @throws IllegalArgumentException when the CA file exists but holds no usable certificate
     */
    public KubernetesPeers(Settings settings, Clock clock) {
        super(SOURCE, clock);
        this.settings = settings;
        String base = settings.apiServer().toString().replaceAll("/+$", "");
        this.podsUrl = base + "/api/v1/namespaces/" + encode(settings.namespace()) + "/pods?labelSelector="
                + encode(settings.labelSelector()) + "&limit=" + settings.pageSize();
        HttpClient.Builder builder = HttpClient.newBuilder()
                // One small list per mesh interval: HTTP/1.1 keeps it simple and avoids h2c upgrades on plain HTTP.
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

    @Override
    Set<PeerAddress> lookUp() throws DiscoveryException {
        String token = readToken();
        Set<PeerAddress> out = new LinkedHashSet<>();
        String continueToken = null;
        for (int page = 0; page < MAX_PAGES; page++) {
            String url = continueToken == null ? podsUrl : podsUrl + "&continue=" + encode(continueToken);
            JsonNode podList = parse(get(URI.create(url), token));
            for (JsonNode pod : podList.path("items")) {
                PeerAddress peer = peerOf(pod);
                if (peer != null) {
                    out.add(peer);
                }
            }
            String next = text(podList.path("metadata").path("continue"));
            if (next == null || next.isEmpty()) {
                return out;
            }
            if (next.equals(continueToken)) {
                throw new DiscoveryException("Kubernetes API returned the same continue token twice while listing "
                        + "pods in namespace " + settings.namespace() + ": not paging further; check the API server "
                        + "or any proxy in front of it");
            }
            continueToken = next;
        }
        throw new DiscoveryException("pod list in namespace " + settings.namespace() + " did not end after "
                + MAX_PAGES + " pages of " + settings.pageSize() + ": narrow the label selector");
    }

    private String readToken() throws DiscoveryException {
        if (settings.tokenFile() == null) {
            return null;
        }
        try {
            String token = Files.readString(settings.tokenFile()).strip();
            return token.isEmpty() ? null : token;
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new DiscoveryException("cannot read the service-account token " + settings.tokenFile() + ": " + e
                    + " (check automountServiceAccountToken and the file's permissions)", e);
        }
    }

    private byte[] get(URI uri, String token) throws DiscoveryException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).GET()
                .timeout(settings.timeout())
                .header("Accept", "application/json");
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        String what = "listing pods in namespace " + settings.namespace() + " at " + settings.apiServer();
        CompletableFuture<HttpResponse<byte[]>> call =
                http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        HttpResponse<byte[]> response;
        try {
            // The request timeout covers the headers only; this also bounds a body that trickles in.
            response = call.get(settings.timeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            call.cancel(true);
            throw timedOut(what);
        } catch (InterruptedException e) {
            call.cancel(true);
            Thread.currentThread().interrupt();
            throw new DiscoveryException("interrupted while " + what);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof HttpTimeoutException) {
                throw timedOut(what);
            }
            if (cause instanceof ConnectException) {
                throw new DiscoveryException("cannot connect to the Kubernetes API while " + what + " (" + cause
                        + "): check the API server address and the NetworkPolicy egress to it", cause);
            }
            if (cause instanceof SSLException) {
                throw new DiscoveryException("TLS to the Kubernetes API failed while " + what + " ("
                        + cause.getMessage() + "): check that " + settings.caFile() + " holds the cluster's CA", cause);
            }
            throw new DiscoveryException("request failed while " + what + ": " + cause, cause);
        }
        int status = response.statusCode();
        if (status == 200) {
            return response.body();
        }
        String message = apiMessage(response.body());
        throw switch (status) {
            case 401 -> new DiscoveryException("Kubernetes API refused the credentials (401 Unauthorized) while "
                    + what + message + ": check that " + settings.tokenFile() + " holds a current service-account "
                    + "token (automountServiceAccountToken: true)");
            case 403 -> new DiscoveryException("the agent's service account may not list pods (403 Forbidden) while "
                    + what + message + ": grant list and watch on pods in this namespace through a Role and "
                    + "RoleBinding (see docs/discovery.md)");
            case 410 -> new DiscoveryException("the pod list changed while paging and its continue token expired "
                    + "(410 Gone) while " + what + ": the next call starts again from the first page");
            default -> new DiscoveryException("Kubernetes API answered HTTP " + status + " while " + what + message);
        };
    }

    private DiscoveryException timedOut(String what) {
        return new DiscoveryException("Kubernetes API did not answer within " + settings.timeout().toMillis()
                + " ms while " + what + ": check the API server's health and the network path to it");
    }

    private JsonNode parse(byte[] body) throws DiscoveryException {
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(body);
        } catch (JacksonException e) {
            throw notAPodList("not JSON (" + shorten(e.getOriginalMessage()) + ")");
        }
        if (root == null || !root.isObject()) {
            throw notAPodList("not a JSON object");
        }
        JsonNode items = root.path("items");
        if (items.isArray()) {
            return root;
        }
        // An empty list may come without items ("items": null) but always says what it is.
        if ((items.isMissingNode() || items.isNull()) && "PodList".equals(text(root.path("kind")))) {
            return root;
        }
        throw notAPodList("no items array (kind " + text(root.path("kind")) + ")");
    }

    private DiscoveryException notAPodList(String why) {
        return new DiscoveryException("Kubernetes API answer at " + settings.apiServer() + " is not a PodList: " + why
                + "; check that the API server URL points at the API server and not at a proxy or web page");
    }

    /** The peer a pod stands for, or null when it is not (yet, or any more) a probe target. */
    private PeerAddress peerOf(JsonNode pod) {
        JsonNode metadata = pod.path("metadata");
        JsonNode deletion = metadata.path("deletionTimestamp");
        if (!deletion.isMissingNode() && !deletion.isNull()) {
            return null;
        }
        JsonNode status = pod.path("status");
        if (!"Running".equals(text(status.path("phase"))) || !ready(status)) {
            return null;
        }
        String ip = text(status.path("podIP"));
        if (ip == null || ip.isBlank()) {
            return null;
        }
        try {
            PeerAddress peer = new PeerAddress(ip, portOf(pod.path("spec")), SOURCE, text(metadata.path("name")),
                    text(pod.path("spec").path("nodeName")));
            return peer.isIpLiteral() ? peer : null;
        } catch (IllegalArgumentException e) {
            return null; // a podIP or port the API server should never send; skip that pod, keep the rest
        }
    }

    private static boolean ready(JsonNode status) {
        for (JsonNode condition : status.path("conditions")) {
            if ("Ready".equals(text(condition.path("type")))) {
                return "True".equals(text(condition.path("status")));
            }
        }
        return false;
    }

    private int portOf(JsonNode spec) {
        for (JsonNode container : spec.path("containers")) {
            for (JsonNode port : container.path("ports")) {
                if (settings.portName().equals(text(port.path("name"))) && port.path("containerPort").isInt()) {
                    return port.path("containerPort").intValue();
                }
            }
        }
        return settings.agentPort();
    }

    // A Kubernetes error answer is a Status object whose "message" says what went wrong.
    private static String apiMessage(byte[] body) {
        if (body == null || body.length == 0) {
            return "";
        }
        try {
            String message = text(Json.MAPPER.readTree(body).path("message"));
            if (message != null && !message.isBlank()) {
                return " (" + shorten(message) + ")";
            }
        } catch (JacksonException e) {
            // not a Status object: fall through to the raw text
        }
        return " (" + shorten(new String(body, StandardCharsets.UTF_8)) + ")";
    }

    private static String text(JsonNode node) {
        return node != null && node.isString() ? node.stringValue() : null;
    }

    private static String shorten(String s) {
        if (s == null) {
            return "";
        }
        String oneLine = s.replaceAll("\\s+", " ").strip();
        return oneLine.length() <= 200 ? oneLine : oneLine.substring(0, 200) + "…";
    }

    private static String encode(String s) {
        // URLEncoder writes form encoding; '+' for a space would reach a strict server as a literal plus.
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static SSLContext trusting(Path caFile) {
        try (InputStream in = Files.newInputStream(caFile)) {
            Collection<? extends Certificate> certificates =
                    CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certificates.isEmpty()) {
                throw new IllegalArgumentException("Kubernetes CA file " + caFile + " holds no certificate: mount "
                        + "the service account's ca.crt or point the CA path at a PEM bundle");
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
