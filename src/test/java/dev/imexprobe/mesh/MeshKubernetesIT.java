package dev.imexprobe.mesh;

import dev.imexprobe.testing.FakeKubernetesApi;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import com.github.tomakehurst.wiremock.verification.LoggedRequest;

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

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static dev.imexprobe.mesh.MeshStaticIT.allOk;
import static dev.imexprobe.mesh.MeshStaticIT.failedPairs;
import static dev.imexprobe.mesh.MeshStaticIT.hasFinding;
import static dev.imexprobe.mesh.MeshStaticIT.pairs;
import static dev.imexprobe.mesh.MeshStaticIT.texts;
import static dev.imexprobe.testing.MeshAgents.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Four agents that find each other the way the DaemonSet's do: by listing pods through the Kubernetes API (here a
 * WireMock server), Running and Ready only, each pod's IP and its container port named "http". The pod list also
 * holds a Pending pod, a Running pod that is not Ready and a terminating one, each pointing at a port where
 * nothing listens: probing any of them would show as a failed pair.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MeshKubernetesIT {

    static final String NAMESPACE = "gpu-ops";
    static final String SELECTOR = "app.kubernetes.io/name=imexprobe";
    static final Duration SETTLE = Duration.ofSeconds(60);
    static final List<String> NODES = List.of("gb200-01", "gb200-02", "gb200-03", "gb200-04");
    static final JsonMapper JSON = JsonMapper.builder().build();

    @RegisterExtension
    static final FakeKubernetesApi api = FakeKubernetesApi.keptAcrossTests();
    static MeshAgents mesh;
    static final Map<String, Agent> AGENTS = new LinkedHashMap<>();
    static final List<Map<String, Object>> DECOYS = new ArrayList<>();

    @BeforeAll
    static void startTheDomain() {
        mesh = MeshAgents.forTest(MeshKubernetesIT.class);
        for (String n : NODES) {
            AGENTS.put(n, mesh.add(n, Map.of(
                    // short, so that a departed pod is forgotten within about 2 s (the second round without it)
                    "IMEXPROBE_MESH_INTERVAL", "1s",
                    "IMEXPROBE_MESH_MAXBACKOFF", "2s",
                    "IMEXPROBE_PEERS_KUBERNETES_SELECTOR", SELECTOR,
                    "IMEXPROBE_PEERS_KUBERNETES_NAMESPACE", NAMESPACE,
                    "IMEXPROBE_PEERS_KUBERNETES_API", "http://localhost:" + api.port(),
                    // The pods' "http" container port wins; this is only the fallback.
                    "IMEXPROBE_PEERS_KUBERNETES_PORT", "1")));
        }
        DECOYS.add(pod("imexprobe-pending", "gb200-05", freePort(), "Pending", "False", false));
        DECOYS.add(pod("imexprobe-unready", "gb200-06", freePort(), "Running", "False", false));
        DECOYS.add(pod("imexprobe-leaving", "gb200-07", freePort(), "Running", "True", true));
        servePods(NODES);
        mesh.startAll(true);
    }

    @AfterAll
    static void stopTheDomain() {
        if (mesh != null) {
            mesh.close();
        }
    }

    @Test
    @Order(1)
    void agentsFindEachOtherThroughTheKubernetesApiAndEveryPairPasses() {
        for (Agent a : AGENTS.values()) {
            JsonNode view = eventually(SETTLE, a.node() + " measures its 3 peers", () -> a.mesh(false),
                    v -> pairs(v).size() == 3 && allOk(v));
            assertThat(pairs(view).keySet()).containsExactlyInAnyOrderElementsOf(NODES.stream()
                    .filter(n -> !n.equals(a.node())).map(n -> a.node() + ">" + n).toList());
            assertThat(a.metric("imexprobe_peers")).as("3 Running+Ready pods besides itself").isEqualTo(3.0);
        }
        JsonNode domain = eventually(SETTLE, "all 12 pairs ok", () -> AGENTS.get("gb200-01").mesh(true),
                v -> pairs(v).size() == 12 && allOk(v));
        assertThat(texts(domain.path("agents"))).containsExactlyInAnyOrderElementsOf(NODES);
        assertThat(domain.path("unreachableAgents")).as("no decoy pod was asked").isEmpty();

        List<LoggedRequest> lists = api.findAll(getRequestedFor(urlPathEqualTo(
                "/api/v1/namespaces/" + NAMESPACE + "/pods")).withQueryParam("labelSelector", equalTo(SELECTOR)));
        assertThat(lists).isNotEmpty();
    }

    @Test
    @Order(2)
    void anInjectedFailureShowsAtTheRightPairWithTheRightBlame() {
        Agent bad = AGENTS.get("gb200-03");
        bad.machine().fault("cuMemImportFromShareableHandle=800");
        try {
            JsonNode domain = eventually(SETTLE, "TARGET_FAILING blames gb200-03", () -> AGENTS.get("gb200-01").mesh(true),
                    v -> failedPairs(v).size() == 3 && hasFinding(v, "TARGET_FAILING") && pairs(v).size() == 12);
            assertThat(failedPairs(domain)).containsExactlyInAnyOrder("gb200-01>gb200-03", "gb200-02>gb200-03",
                    "gb200-04>gb200-03");
            assertThat(domain.path("findings")).hasSize(1);
            assertThat(domain.path("findings").get(0).path("evidence").path("targetNode").asString())
                    .isEqualTo("gb200-03");
            assertThat(AGENTS.get("gb200-02").metric("imexprobe_pair_up", "target_node", "gb200-03")).isEqualTo(0.0);
            assertThat(AGENTS.get("gb200-02").metric("imexprobe_pair_last_cu_result", "target_node", "gb200-03"))
                    .isEqualTo(800.0);
            assertThat(AGENTS.get("gb200-02").metric("imexprobe_pair_up", "target_node", "gb200-04")).isEqualTo(1.0);
        } finally {
            bad.machine().clearFaults();
        }
        eventually(SETTLE, "healthy again", () -> AGENTS.get("gb200-01").mesh(true),
                v -> pairs(v).size() == 12 && allOk(v) && v.path("findings").isEmpty());
    }

    @Test
    @Order(3)
    void aPodThatLeavesTheListIsForgottenAndComesBackWhenListedAgain() {
        Agent a = AGENTS.get("gb200-01");
        servePods(List.of("gb200-01", "gb200-02", "gb200-03"));

        // Forgotten at the end of the second round without it, about 2 s (it took 5 intervals plus the maximum
        // backoff, 7 s: a departed peer's failed pairs fired pair alerts before they went).
        JsonNode view = eventually(Duration.ofSeconds(5), "gb200-01 forgets gb200-04", () -> a.mesh(false),
                v -> pairs(v).size() == 2);
        assertThat(pairs(view).keySet()).containsExactlyInAnyOrder("gb200-01>gb200-02", "gb200-01>gb200-03");
        assertThat(a.metric("imexprobe_peers")).isEqualTo(2.0);
        // Its series goes with it, at the end of the same round (a round starts only every second).
        eventually(Duration.ofMillis(500), "the pair's series is gone too",
                () -> a.metric("imexprobe_pair_up", "target_node", "gb200-04"), v -> v == null);

        servePods(NODES);
        eventually(SETTLE, "gb200-04 is probed again", () -> a.mesh(false), v -> pairs(v).size() == 3 && allOk(v));
        assertThat(a.metric("imexprobe_peers")).isEqualTo(3.0);
    }

    // ---- the fake API server ----------------------------------------------------------------------------------

    /** The pod list holds the agents of {@code nodes} plus the decoys. */
    static void servePods(List<String> nodes) {
        List<Map<String, Object>> items = new ArrayList<>();
        for (String n : nodes) {
            Agent a = AGENTS.get(n);
            items.add(pod("imexprobe-" + n, n, a.port(), "Running", "True", false));
        }
        items.addAll(DECOYS);
        Map<String, Object> list = Map.of("kind", "PodList", "apiVersion", "v1",
                "metadata", Map.of("resourceVersion", Long.toString(System.nanoTime())), "items", items);
        api.resetMappings();
        api.stubFor(get(urlPathEqualTo("/api/v1/namespaces/" + NAMESPACE + "/pods"))
                .withQueryParam("labelSelector", equalTo(SELECTOR))
                .willReturn(okJson(JSON.writeValueAsString(list))));
    }

    static Map<String, Object> pod(String name, String node, int port, String phase, String ready, boolean leaving) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("name", name);
        metadata.put("namespace", NAMESPACE);
        metadata.put("labels", Map.of("app.kubernetes.io/name", "imexprobe"));
        if (leaving) {
            metadata.put("deletionTimestamp", "2026-12-01T10:00:00Z");
        }
        Map<String, Object> spec = Map.of("nodeName", node, "containers", List.of(Map.of("name", "agent",
                "image", "imexprobe:it", "ports", List.of(Map.of("name", "http", "containerPort", port,
                        "protocol", "TCP")))));
        Map<String, Object> status = Map.of("phase", phase, "podIP", "127.0.0.1",
                "podIPs", List.of(Map.of("ip", "127.0.0.1")),
                "conditions", List.of(Map.of("type", "Ready", "status", ready)));
        return Map.of("kind", "Pod", "apiVersion", "v1", "metadata", metadata, "spec", spec, "status", status);
    }

    static int freePort() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
