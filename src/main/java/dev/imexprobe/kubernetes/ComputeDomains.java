package dev.imexprobe.kubernetes;

import dev.imexprobe.json.Json;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import tools.jackson.databind.JsonNode;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;

/**
 * This node's ComputeDomains, from {@code GET /apis/resource.nvidia.com/v1beta1/computedomains} (all namespaces;
 * the chart grants get/list on them only when this is enabled). The NVIDIA DRA driver's controller fills
 * {@code status.status} (Ready/NotReady) and {@code status.nodes[]} ({@code name}, {@code ipAddress},
 * {@code cliqueID}, {@code index}, {@code status}): docs/deploy.md says from which source.
 *
 * <p>Asked at most once per {@code interval} (every agent of a cluster lists them: keep the API server's load
 * flat); in between the last answer is served. A cluster without the CRD answers 404: that is {@code absent}, said
 * once at INFO and never again while it lasts; a refusal (401/403) or an error is said once per change of cause.
 */
public final class ComputeDomains implements Supplier<ComputeDomainStatus> {

    public static final String PATH = "/apis/resource.nvidia.com/v1beta1/computedomains";
    private static final Logger log = LoggerFactory.getLogger(ComputeDomains.class);
    private static final int PAGE = 500;
    private static final int MAX_PAGES = 100;

    private final KubernetesApi api;
    private final String node;
    private final Duration interval;
    private final Clock clock;
    private ComputeDomainStatus last;
    private String lastSaid;

    public ComputeDomains(KubernetesApi api, String node, Duration interval, Clock clock) {
        this.api = api;
        this.node = node;
        this.interval = interval;
        this.clock = clock;
    }

    /** The last answer, asked again when it is older than the interval. */
    @Override
    public synchronized ComputeDomainStatus get() {
        Instant now = clock.instant();
        if (last == null || !now.isBefore(last.readAt().plus(interval))) {
            last = read(now);
            say(last);
        }
        return last;
    }

    private ComputeDomainStatus read(Instant now) {
        List<ComputeDomainStatus.Entry> mine = new ArrayList<>();
        String cont = null;
        for (int page = 0; page < MAX_PAGES; page++) {
            String path = PATH + "?limit=" + PAGE + (cont != null ? "&continue=" + KubernetesApi.encode(cont) : "");
            KubernetesApi.Response r;
            try {
                r = api.get(path, "listing ComputeDomains");
            } catch (KubernetesApiException e) {
                return new ComputeDomainStatus(ComputeDomainStatus.ERROR, e.getMessage(), List.of(), now);
            }
            if (r.status() == 404) {
                return new ComputeDomainStatus(ComputeDomainStatus.ABSENT, "the API has no computedomains."
                        + "resource.nvidia.com/v1beta1 (404): the NVIDIA DRA driver is not installed", List.of(), now);
            }
            if (r.status() == 401 || r.status() == 403) {
                return new ComputeDomainStatus(ComputeDomainStatus.FORBIDDEN, "HTTP " + r.status() + r.apiMessage()
                        + ": grant get/list on computedomains.resource.nvidia.com (the chart does with "
                        + "computeDomainStatus.enabled=true)", List.of(), now);
            }
            if (!r.ok()) {
                return new ComputeDomainStatus(ComputeDomainStatus.ERROR, "HTTP " + r.status() + r.apiMessage()
                        + " listing ComputeDomains", List.of(), now);
            }
            JsonNode root;
            try {
                root = Json.MAPPER.readTree(r.body());
            } catch (RuntimeException e) {
                return new ComputeDomainStatus(ComputeDomainStatus.ERROR, "the ComputeDomain list is not JSON: "
                        + KubernetesApi.shorten(String.valueOf(e.getMessage())), List.of(), now);
            }
            for (JsonNode cd : root.path("items")) {
                List<ComputeDomainStatus.Member> members = new ArrayList<>();
                for (JsonNode n : cd.path("status").path("nodes")) {
                    String name = n.path("name").asString(null);
                    if (name != null) {
                        members.add(new ComputeDomainStatus.Member(name, n.path("status").asString(null)));
                    }
                }
                members.sort(Comparator.comparing(ComputeDomainStatus.Member::name));
                for (JsonNode n : cd.path("status").path("nodes")) {
                    if (node.equals(n.path("name").asString(null))) {
                        mine.add(new ComputeDomainStatus.Entry(cd.path("metadata").path("namespace").asString(null),
                                cd.path("metadata").path("name").asString(null),
                                cd.path("status").path("status").asString(null), n.path("status").asString(null),
                                n.path("ipAddress").asString(null), n.path("cliqueID").asString(null),
                                n.hasNonNull("index") ? n.get("index").asInt() : null, members));
                    }
                }
            }
            cont = root.path("metadata").path("continue").asString(null);
            if (cont == null || cont.isEmpty()) {
                break;
            }
        }
        mine.sort(Comparator.comparing((ComputeDomainStatus.Entry e) -> String.valueOf(e.namespace()))
                .thenComparing(e -> String.valueOf(e.name())));
        return new ComputeDomainStatus(ComputeDomainStatus.OK, null, mine, now);
    }

    /** Once per change of state and cause: a cluster without the DRA driver is not an error to repeat. */
    private void say(ComputeDomainStatus s) {
        String key = s.state() + ":" + s.detail();
        if (key.equals(lastSaid)) {
            return;
        }
        lastSaid = key;
        switch (s.state()) {
            case ComputeDomainStatus.OK -> log.info("ComputeDomains listing node {}: {}", node, s.computeDomains().size());
            case ComputeDomainStatus.ABSENT -> log.info("no ComputeDomain API on this cluster ({}); /v1/node shows "
                    + "computeDomains.state=absent", s.detail());
            default -> log.warn("cannot list ComputeDomains: {}", s.detail());
        }
    }
}
