package dev.imexprobe.mesh;

import dev.imexprobe.testing.FakeKubernetesApi;
import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static dev.imexprobe.mesh.MeshStaticIT.findingCodes;
import static dev.imexprobe.mesh.MeshStaticIT.pairs;
import static dev.imexprobe.testing.MeshAgents.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node whose agent has no IMEX channel (hostPath mode, the channel device absent) stays visible: its agent is
 * Ready, so it stays in discovery, its peers keep probing it and report the real failure (800 NOT_PERMITTED at
 * import, IMPORT_NOT_PERMITTED) for every pair into it, and its own report says it has no channel.
 *
 * <p>Discovery is the DaemonSet's: the pod list of a fake API server, where — as the kubelet does — each pod's
 * Ready condition is what that agent's own readiness probe answers right now. An agent that turned itself unready
 * would leave the list and its pairs would be forgotten; this test shows that the channel-less one never does.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SafeBesideJobsIT {

    static final String NAMESPACE = "gpu-ops";
    static final String SELECTOR = "app.kubernetes.io/name=imexprobe";
    static final Duration SETTLE = Duration.ofSeconds(90);
    static final String NO_CHANNEL = "node-c";
    static final String OBSERVER = "node-d";
    static final List<String> NODES = List.of("node-a", "node-b", NO_CHANNEL, OBSERVER);
    static final JsonMapper JSON = JsonMapper.builder().build();

    @RegisterExtension
    static final FakeKubernetesApi api = FakeKubernetesApi.keptAcrossTests();
    static MeshAgents mesh;
    static ScheduledExecutorService kubelet;
    static final Map<String, Agent> AGENTS = new LinkedHashMap<>();
    /** The Ready condition each pod was last given: the agent's readiness answer (200 UP) when the kubelet asked. */
    static final Map<String, String> READY = new ConcurrentHashMap<>();

    @BeforeAll
    static void startTheDomain() {
        mesh = MeshAgents.forTest(SafeBesideJobsIT.class);
        for (String n : NODES) {
            boolean channel = !n.equals(NO_CHANNEL) && !n.equals(OBSERVER);
            FakeMachine machine = (channel ? FakeMachine.h200(mesh.dir().resolve(n))
                    : FakeMachine.h200WithoutChannel(mesh.dir().resolve(n))).host(n).fabric(0, 3, MeshAgents.CLUSTER,
                    MeshAgents.CLIQUE);
            AGENTS.put(n, mesh.add(n, machine, Map.of(
                    // the observer and node-b ask for their ComputeDomains: the fake API serves them for node-d only
                    "IMEXPROBE_COMPUTEDOMAINS_ENABLED", Boolean.toString(n.equals(OBSERVER) || n.equals("node-b")),
                    "IMEXPROBE_COMPUTEDOMAINS_INTERVAL", "1s",
                    "IMEXPROBE_CHANNEL_MODE", n.equals(OBSERVER) ? "observer" : "hostPath",
                    "FAKECUDA_CONTEXT_LOG", mesh.dir().resolve(n + "-contexts.log").toString(),
                    "IMEXPROBE_MESH_INTERVAL", "2s",
                    "IMEXPROBE_MESH_MAXBACKOFF", "4s",
                    "IMEXPROBE_PEERS_KUBERNETES_SELECTOR", SELECTOR,
                    "IMEXPROBE_PEERS_KUBERNETES_NAMESPACE", NAMESPACE,
                    "IMEXPROBE_PEERS_KUBERNETES_API", "http://localhost:" + api.port())));
            READY.put(n, "False");
        }
        servePods();
        kubelet = Executors.newSingleThreadScheduledExecutor();
        kubelet.scheduleWithFixedDelay(SafeBesideJobsIT::probeReadiness, 0, 500, TimeUnit.MILLISECONDS);
        mesh.startAll(false);
    }

    @AfterAll
    static void stopTheDomain() {
        if (kubelet != null) {
            kubelet.shutdownNow();
        }
        if (mesh != null) {
            mesh.close();
        }
    }

    @Test
    @Order(1)
    void theAgentWithoutAChannelIsReadyAndStaysInDiscovery() {
        Agent c = AGENTS.get(NO_CHANNEL);
        eventually(SETTLE, "the kubelet sees every agent Ready", () -> Map.copyOf(READY),
                r -> r.values().stream().allMatch("True"::equals));
        MeshAgents.Reply readiness = c.get("/actuator/health/readiness");
        assertThat(readiness.status()).isEqualTo(200);
        assertThat(readiness.json().path("status").asString()).isEqualTo("UP");

        JsonNode node = c.json("/v1/node");
        assertThat(node.path("usableChannels").asLong()).isZero();
        assertThat(findingCodes(node)).as("the node-level finding says: no channel").contains("NO_IMEX_CHANNEL")
                .doesNotContain("OBSERVER_MODE");
        JsonNode noChannel = finding(node, "NO_IMEX_CHANNEL");
        assertThat(noChannel.path("severity").asString()).isEqualTo("error");
        assertThat(noChannel.path("blame").asString()).isEqualTo("local");
        assertThat(c.metric("imexprobe_imex_channels")).as("Prometheus still scrapes it").isEqualTo(0.0);

        for (String peer : List.of("node-a", "node-b")) {
            Agent p = AGENTS.get(peer);
            eventually(SETTLE, peer + " discovers the three other agents", () -> p.metric("imexprobe_peers"),
                    v -> v != null && v == 3.0);
        }
    }

    @Test
    @Order(2)
    void itsPeersReport800ImportNotPermittedForEveryPairIntoIt() {
        for (String peer : List.of("node-a", "node-b")) {
            Agent p = AGENTS.get(peer);
            JsonNode view = eventually(SETTLE, peer + "'s pair into " + NO_CHANNEL + " failed at import",
                    () -> p.mesh(false), v -> "failed".equals(pairs(v).getOrDefault(peer + ">" + NO_CHANNEL,
                            JSON.createObjectNode()).path("state").asString()));
            JsonNode into = pairs(view).get(peer + ">" + NO_CHANNEL);
            assertThat(into.path("stage").asString()).isEqualTo("import");
            assertThat(into.path("cuResult").asInt()).isEqualTo(800);
            assertThat(into.path("cuResultName").asString()).isEqualTo("CUDA_ERROR_NOT_PERMITTED");
            assertThat(into.path("finding").path("code").asString()).isEqualTo("IMPORT_NOT_PERMITTED");
            assertThat(into.path("finding").path("blame").asString()).isEqualTo("target");
            String other = peer.equals("node-a") ? "node-b" : "node-a";
            JsonNode healthy = eventually(SETTLE, peer + "'s pair into " + other + " passes", () -> p.mesh(false),
                    v -> "ok".equals(pairs(v).getOrDefault(peer + ">" + other, JSON.createObjectNode())
                            .path("state").asString()));
            assertThat(pairs(healthy).keySet()).contains(peer + ">" + other, peer + ">" + NO_CHANNEL);

            assertThat(p.metric("imexprobe_pair_up", "target_node", NO_CHANNEL)).isEqualTo(0.0);
            assertThat(p.metric("imexprobe_pair_last_cu_result", "target_node", NO_CHANNEL)).isEqualTo(800.0);
            assertThat(p.metric("imexprobe_pair_up", "target_node", other)).isEqualTo(1.0);
        }

        // Its own exports fail at create, as they must without a channel: blamed on it, the source.
        Agent c = AGENTS.get(NO_CHANNEL);
        JsonNode own = eventually(SETTLE, NO_CHANNEL + "'s own pairs failed at create", () -> c.mesh(false),
                v -> pairs(v).keySet().containsAll(List.of(NO_CHANNEL + ">node-a", NO_CHANNEL + ">node-b"))
                        && List.of("node-a", "node-b").stream().allMatch(t -> "failed".equals(pairs(v)
                        .get(NO_CHANNEL + ">" + t).path("state").asString())));
        for (String t : List.of("node-a", "node-b")) {
            JsonNode x = pairs(own).get(NO_CHANNEL + ">" + t);
            assertThat(x.path("stage").asString()).isEqualTo("create");
            assertThat(x.path("cuResult").asInt()).isEqualTo(800);
            assertThat(x.path("finding").path("code").asString()).isEqualTo("CREATE_NOT_PERMITTED");
        }

        // The domain's judgement names the node, and it stays Ready and listed the whole time.
        JsonNode domain = eventually(SETTLE, "the domain blames " + NO_CHANNEL, () -> AGENTS.get("node-a").mesh(true),
                v -> findingCodes(v).contains("TARGET_FAILING"));
        JsonNode targetFailing = finding(domain, "TARGET_FAILING");
        assertThat(targetFailing.path("evidence").path("targetNode").asString()).isEqualTo(NO_CHANNEL);
        assertThat(READY.get(NO_CHANNEL)).isEqualTo("True");
        assertThat(c.get("/actuator/health/readiness").status()).isEqualTo(200);
    }

    /**
     * The observer (no channel by configuration) and the broken node (hostPath, no channel) are both Ready and
     * both without a channel; every surface tells them apart: /v1/node, the peers' pairs, the matrix page, metrics.
     */
    @Test
    @Order(3)
    void theObserverAndTheBrokenNodeLookDifferentOnEverySurface() {
        Agent a = AGENTS.get("node-a");
        Agent c = AGENTS.get(NO_CHANNEL);
        Agent d = AGENTS.get(OBSERVER);
        assertThat(READY.get(OBSERVER)).as("the observer is Ready and listed too").isEqualTo("True");

        // /v1/node: the mode, and an info finding against an error finding.
        JsonNode observerNode = d.json("/v1/node");
        JsonNode brokenNode = c.json("/v1/node");
        assertThat(observerNode.path("channelMode").asString()).isEqualTo("observer");
        assertThat(brokenNode.path("channelMode").asString()).isEqualTo("hostPath");
        assertThat(observerNode.path("usableChannels").asLong()).isZero();
        assertThat(brokenNode.path("usableChannels").asLong()).isZero();
        assertThat(findingCodes(observerNode)).contains("OBSERVER_MODE").doesNotContain("NO_IMEX_CHANNEL");
        assertThat(finding(observerNode, "OBSERVER_MODE").path("severity").asString()).isEqualTo("info");
        assertThat(finding(brokenNode, "NO_IMEX_CHANNEL").path("severity").asString()).isEqualTo("error");

        // The peers' pairs: into the broken node failed (800), into the observer not probed, never failed.
        JsonNode view = eventually(SETTLE, "node-a's pairs into both settled", () -> a.mesh(false),
                v -> "not_probed".equals(pairs(v).getOrDefault("node-a>" + OBSERVER, JSON.createObjectNode())
                        .path("state").asString()) && "failed".equals(pairs(v).getOrDefault("node-a>" + NO_CHANNEL,
                        JSON.createObjectNode()).path("state").asString()));
        JsonNode intoObserver = pairs(view).get("node-a>" + OBSERVER);
        assertThat(intoObserver.path("finding").path("code").asString()).isEqualTo("OBSERVER_TARGET");
        assertThat(intoObserver.path("finding").path("severity").asString()).isEqualTo("info");
        assertThat(intoObserver.has("cuResult")).isFalse();
        assertThat(pairs(view).get("node-a>" + NO_CHANNEL).path("cuResult").asInt()).isEqualTo(800);
        // The observer's own pairs: all not probed, by its own mode.
        JsonNode own = eventually(SETTLE, "the observer knows its 3 peers' pairs", () -> d.mesh(false),
                v -> pairs(v).size() == 3);
        assertThat(pairs(own).values()).allSatisfy(p -> {
            assertThat(p.path("state").asString()).isEqualTo("not_probed");
            assertThat(p.path("finding").path("code").asString()).isEqualTo("OBSERVER_MODE");
        });

        // Metrics: counts by state and reason, the mode, and no pair series (nothing to alert on) for the observer.
        String scrape = a.scrape();
        assertThat(MeshAgents.metric(scrape, "imexprobe_pairs", "state", "failed", "reason", "IMPORT_NOT_PERMITTED"))
                .isEqualTo(1.0);
        assertThat(MeshAgents.metric(scrape, "imexprobe_pairs", "state", "not_probed", "reason", "OBSERVER_TARGET"))
                .isEqualTo(1.0);
        assertThat(MeshAgents.metric(scrape, "imexprobe_pair_up", "target_node", OBSERVER)).isNull();
        assertThat(MeshAgents.metric(scrape, "imexprobe_pair_up", "target_node", NO_CHANNEL)).isEqualTo(0.0);
        assertThat(MeshAgents.metric(scrape, "imexprobe_channel_mode", "mode", "hostPath")).isEqualTo(1.0);
        String observerScrape = d.scrape();
        assertThat(MeshAgents.metric(observerScrape, "imexprobe_channel_mode", "mode", "observer")).isEqualTo(1.0);
        assertThat(MeshAgents.metric(observerScrape, "imexprobe_pairs", "state", "not_probed", "reason",
                "OBSERVER_MODE")).isEqualTo(3.0);
        assertThat(MeshAgents.metric(observerScrape, "imexprobe_pairs", "state", "failed", "reason", "none"))
                .isEqualTo(0.0);
        assertThat(MeshAgents.metric(observerScrape, "imexprobe_pair_up")).isNull();
        assertThat(MeshAgents.metric(c.scrape(), "imexprobe_channel_mode", "mode", "hostPath")).isEqualTo(1.0);

        // The matrix page: grey "not probed" cells into the observer, red ones into the broken node; each agent's
        // own page says which kind it is.
        String html = a.get("/").body();
        assertThat(html).contains("<td class=\"not_probed\" data-source=\"node-a / ", "data-target=\"" + OBSERVER
                + " / ", "<td class=\"failed\" data-source=\"node-a / ", "<h2>Not probed (by design, never alerting)",
                "<b>OBSERVER_TARGET</b>");
        assertThat(d.get("/").body()).contains("id=\"channel-mode\" data-mode=\"observer\"", "observer: no IMEX channel "
                + "by configuration");
        assertThat(c.get("/").body()).contains("id=\"channel-mode\" data-mode=\"hostPath\"",
                "<span class=\"f-error\">no usable IMEX channel although this mode expects one");

        // And the observer took nothing from jobs: no context, no allocation, although peers asked who it is.
        assertThat(d.metric("imexprobe_cuda_context_held")).isEqualTo(0.0);
        assertThat(d.metric("imexprobe_allocations_live", "kind", "created")).isEqualTo(0.0);
        assertThat(d.metric("imexprobe_allocations_live", "kind", "imported")).isEqualTo(0.0);
        java.nio.file.Path log = mesh.dir().resolve(OBSERVER + "-contexts.log");
        assertThat(java.nio.file.Files.exists(log) ? readLines(log) : List.<String>of()).as("contexts made").isEmpty();
    }

    /** With API access the observer shows its node's ComputeDomain entries; a cluster without them is quiet. */
    @Test
    @Order(4)
    void theObserverShowsItsNodesComputeDomainFromTheApi() {
        Agent d = AGENTS.get(OBSERVER);
        JsonNode cds = eventually(SETTLE, "the observer's report lists its ComputeDomain",
                () -> d.json("/v1/node?refresh=true").path("computeDomains"),
                v -> "ok".equals(v.path("state").asString()) && v.path("computeDomains").size() == 1);
        JsonNode entry = cds.path("computeDomains").get(0);
        assertThat(entry.path("namespace").asString()).isEqualTo("gpu-jobs");
        assertThat(entry.path("name").asString()).isEqualTo("canary");
        assertThat(entry.path("status").asString()).isEqualTo("Ready");
        assertThat(entry.path("nodeStatus").asString()).isEqualTo("Ready");
        assertThat(entry.path("ipAddress").asString()).isEqualTo("10.1.0.4");
        assertThat(entry.path("cliqueId").asString()).isEqualTo(MeshAgents.CLUSTER + "." + MeshAgents.CLIQUE);
        assertThat(entry.path("index").asInt()).isEqualTo(3);

        // node-b asks too: the API lists no entry of node-b; node-c does not ask at all (null).
        JsonNode b = eventually(SETTLE, "node-b's report says ok, none", () -> AGENTS.get("node-b")
                .json("/v1/node?refresh=true").path("computeDomains"), v -> "ok".equals(v.path("state").asString()));
        assertThat(b.path("computeDomains")).isEmpty();
        assertThat(AGENTS.get(NO_CHANNEL).json("/v1/node").path("computeDomains").isNull()).isTrue();
    }

    static List<String> readLines(java.nio.file.Path p) {
        try {
            return java.nio.file.Files.readAllLines(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static JsonNode finding(JsonNode doc, String code) {
        for (JsonNode f : doc.path("findings")) {
            if (code.equals(f.path("code").asString())) {
                return f;
            }
        }
        throw new AssertionError("no finding " + code + " in " + doc.path("findings"));
    }

    // ---- the fake kubelet and API server ---------------------------------------------------------------------

    /** As the kubelet's readiness probe: GET /actuator/health/readiness, Ready=True on 200 only. */
    static void probeReadiness() {
        boolean changed = false;
        for (Agent a : AGENTS.values()) {
            String ready;
            try {
                ready = a.alive() && a.get("/actuator/health/readiness").status() == 200 ? "True" : "False";
            } catch (RuntimeException e) {
                ready = "False";
            }
            changed |= !ready.equals(READY.put(a.node(), ready));
        }
        if (changed) {
            servePods();
        }
    }

    static synchronized void servePods() {
        List<Map<String, Object>> items = new ArrayList<>();
        for (Agent a : AGENTS.values()) {
            items.add(MeshKubernetesIT.pod("imexprobe-" + a.node(), a.node(), a.port(), "Running",
                    READY.getOrDefault(a.node(), "False"), false));
        }
        Map<String, Object> list = Map.of("kind", "PodList", "apiVersion", "v1",
                "metadata", Map.of("resourceVersion", Long.toString(System.nanoTime())), "items", items);
        api.resetMappings();
        api.stubFor(get(urlPathEqualTo("/api/v1/namespaces/" + NAMESPACE + "/pods"))
                .withQueryParam("labelSelector", equalTo(SELECTOR))
                .willReturn(okJson(JSON.writeValueAsString(list))));
        // As the NVIDIA DRA driver's controller fills it: the global status and one entry per node.
        Map<String, Object> cd = Map.of("apiVersion", "resource.nvidia.com/v1beta1", "kind", "ComputeDomain",
                "metadata", Map.of("name", "canary", "namespace", "gpu-jobs"),
                "status", Map.of("status", "Ready", "nodes", List.of(
                        Map.of("name", OBSERVER, "ipAddress", "10.1.0.4", "cliqueID", MeshAgents.CLUSTER + "."
                                + MeshAgents.CLIQUE, "index", 3, "status", "Ready"),
                        Map.of("name", "gb200-99", "ipAddress", "10.1.0.99", "cliqueID", "x.1", "index", 0,
                                "status", "NotReady"))));
        api.stubFor(get(urlPathEqualTo("/apis/resource.nvidia.com/v1beta1/computedomains"))
                .withQueryParam("limit", equalTo("500"))
                .willReturn(okJson(JSON.writeValueAsString(Map.of("kind", "ComputeDomainList",
                        "metadata", Map.of(), "items", List.of(cd))))));
    }
}
