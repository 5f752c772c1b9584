package dev.imexprobe.mesh;

import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import com.github.tomakehurst.wiremock.WireMockServer;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

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
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
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
    static final List<String> NODES = List.of("node-a", "node-b", NO_CHANNEL);
    static final JsonMapper JSON = JsonMapper.builder().build();

    static WireMockServer api;
    static MeshAgents mesh;
    static ScheduledExecutorService kubelet;
    static final Map<String, Agent> AGENTS = new LinkedHashMap<>();
    /** The Ready condition each pod was last given: the agent's readiness answer (200 UP) when the kubelet asked. */
    static final Map<String, String> READY = new ConcurrentHashMap<>();

    @BeforeAll
    static void startTheDomain() {
        api = new WireMockServer(options().dynamicPort());
        api.start();
        mesh = MeshAgents.forTest(SafeBesideJobsIT.class);
        for (String n : NODES) {
            FakeMachine machine = (n.equals(NO_CHANNEL) ? FakeMachine.h200WithoutChannel(mesh.dir().resolve(n))
                    : FakeMachine.h200(mesh.dir().resolve(n))).host(n).fabric(0, 3, MeshAgents.CLUSTER,
                    MeshAgents.CLIQUE);
            AGENTS.put(n, mesh.add(n, machine, Map.of(
                    "IMEXPROBE_CHANNEL_MODE", "hostPath",
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
        if (api != null) {
            api.stop();
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
            eventually(SETTLE, peer + " discovers both other agents", () -> p.metric("imexprobe_peers"),
                    v -> v != null && v == 2.0);
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
            assertThat(pairs(healthy).keySet()).containsExactlyInAnyOrder(peer + ">" + other, peer + ">" + NO_CHANNEL);

            assertThat(p.metric("imexprobe_pair_up", "target_node", NO_CHANNEL)).isEqualTo(0.0);
            assertThat(p.metric("imexprobe_pair_last_cu_result", "target_node", NO_CHANNEL)).isEqualTo(800.0);
            assertThat(p.metric("imexprobe_pair_up", "target_node", other)).isEqualTo(1.0);
        }

        // Its own exports fail at create, as they must without a channel: blamed on it, the source.
        Agent c = AGENTS.get(NO_CHANNEL);
        JsonNode own = eventually(SETTLE, NO_CHANNEL + "'s own pairs failed at create", () -> c.mesh(false),
                v -> pairs(v).size() == 2 && pairs(v).values().stream()
                        .allMatch(x -> "failed".equals(x.path("state").asString())));
        for (JsonNode x : pairs(own).values()) {
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
    }
}
