package dev.imexprobe.peer;

import dev.imexprobe.json.Json;
import dev.imexprobe.kubernetes.KubernetesApi;
import dev.imexprobe.kubernetes.KubernetesApiException;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;

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
 * <p>Calls go through the shared {@link KubernetesApi} (token re-read on every call, CA, timeout, retries). Any failure (API unreachable, 401/403, a non-PodList answer, a timeout)
 * keeps the last known set and is reported in {@link #statuses()}. The list is all-or-nothing: a failure on page
 * three does not publish pages one and two.
 */
public final class KubernetesPeers extends LookedUpPeers implements AutoCloseable {

    public static final String SOURCE = "kubernetes";
    public static final URI IN_CLUSTER_API = KubernetesApi.IN_CLUSTER_API;
    public static final Path SERVICE_ACCOUNT_DIR = KubernetesApi.SERVICE_ACCOUNT_DIR;

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

        /** The API client's part of these settings, with its default retries. */
        public KubernetesApi.Settings api() {
            return new KubernetesApi.Settings(apiServer, tokenFile, caFile, timeout,
                    KubernetesApi.Settings.DEFAULT_RETRIES, KubernetesApi.Settings.DEFAULT_BACKOFF);
        }

        /** These settings with the API server, files and timeout of a shared client's. */
        public Settings withApi(KubernetesApi.Settings a) {
            return new Settings(a.apiServer(), a.tokenFile(), a.caFile(), namespace, labelSelector, agentPort,
                    portName, a.timeout(), pageSize);
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
    private final String podsPath;
    private final KubernetesApi api;
    private final boolean ownsApi;

    /**
     * With a client of its own, built from {@code settings}.
     *
     * @throws IllegalArgumentException when the CA file exists but holds no usable certificate
     */
    public KubernetesPeers(Settings settings, Clock clock) {
        this(settings, new KubernetesApi(settings.api()), true, clock);
    }

    /** With the agent's shared client (not closed here); {@code settings}' API fields are taken from it. */
    public KubernetesPeers(Settings settings, KubernetesApi api, Clock clock) {
        this(settings.withApi(api.settings()), api, false, clock);
    }

    private KubernetesPeers(Settings settings, KubernetesApi api, boolean ownsApi, Clock clock) {
        super(SOURCE, clock);
        this.settings = settings;
        this.api = api;
        this.ownsApi = ownsApi;
        this.podsPath = "/api/v1/namespaces/" + encode(settings.namespace()) + "/pods?labelSelector="
                + encode(settings.labelSelector()) + "&limit=" + settings.pageSize();
    }

    public Settings settings() {
        return settings;
    }

    @Override
    public void close() {
        if (ownsApi) {
            api.close();
        }
    }

    @Override
    Set<PeerAddress> lookUp() throws DiscoveryException {
        Set<PeerAddress> out = new LinkedHashSet<>();
        String continueToken = null;
        for (int page = 0; page < MAX_PAGES; page++) {
            String path = continueToken == null ? podsPath : podsPath + "&continue=" + encode(continueToken);
            JsonNode podList = parse(get(path));
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

    private byte[] get(String path) throws DiscoveryException {
        String what = "listing pods in namespace " + settings.namespace();
        KubernetesApi.Response response;
        try {
            response = api.get(path, what);
        } catch (KubernetesApiException e) {
            throw new DiscoveryException(e.getMessage(), e);
        }
        int status = response.status();
        if (status == 200) {
            return response.body();
        }
        what = what + " at " + settings.apiServer();
        String message = response.apiMessage();
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

    private static String text(JsonNode node) {
        return node != null && node.isString() ? node.stringValue() : null;
    }

    private static String shorten(String s) {
        return KubernetesApi.shorten(s);
    }

    private static String encode(String s) {
        return KubernetesApi.encode(s);
    }
}
