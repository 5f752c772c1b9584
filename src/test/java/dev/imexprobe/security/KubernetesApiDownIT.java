package dev.imexprobe.security;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Agent A finds its peer B by listing pods through the Kubernetes API (a WireMock server), then the API goes
 * down three ways: it answers 500, it refuses connections, it hangs. Through all of it A keeps probing the last
 * peers it knew (seen in /v1/mesh: the pair's last probe keeps moving), and its metrics and pages stay fast and
 * never turn into calls to the API server: an unauthenticated scrape must not become an API request.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubernetesApiDownIT {

    static final String NAMESPACE = "gpu-ops";
    static final String SELECTOR = "app.kubernetes.io/name=imexprobe";
    static final String PODS = "/api/v1/namespaces/" + NAMESPACE + "/pods";
    static final Duration INTERVAL = Duration.ofSeconds(1);
    /**
     * The API client's timeout: 3 s, not the default 5 s, so that a hung list (two attempts) holds a round for ~6 s,
     * not ~10 s; still above the 2.5 s that a scrape or page must stay under, so one that waited for the API fails.
     */
    static final Duration API_TIMEOUT = Duration.ofSeconds(3);
    static final double PAGE_BOUND_SECONDS = 2.5;
    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static WireMockServer api;
    static int apiPort;
    static AgentProcess a;
    static AgentProcess b;

    @BeforeAll
    static void start() {
        machine = FakeMachine.h200(dir.resolve("machine"));
        b = AgentProcess.start("b", dir, machine.env(), "node-b", Map.of()).awaitReady();
        apiPort = AgentProcess.freePort();
        api = new WireMockServer(options().port(apiPort).bindAddress("127.0.0.1"));
        api.start();
        servePods();
        a = AgentProcess.start("a", dir, machine.env(), "node-a", Map.of(
                "IMEXPROBE_MESH_INTERVAL", INTERVAL.toMillis() + "ms",
                "IMEXPROBE_PEERS_KUBERNETES_SELECTOR", SELECTOR,
                "IMEXPROBE_PEERS_KUBERNETES_NAMESPACE", NAMESPACE,
                "IMEXPROBE_PEERS_KUBERNETES_API", "http://127.0.0.1:" + apiPort,
                "IMEXPROBE_KUBERNETES_TIMEOUT", API_TIMEOUT.toSeconds() + "s")).awaitReady();
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(a, b);
        if (api != null) {
            api.stop();
        }
    }

    /** The pod list: B's pod. */
    static void servePods() {
        List<Map<String, Object>> items = List.of(pod("imexprobe-b", "node-b", b.port()));
        api.resetAll();
        api.stubFor(get(urlPathEqualTo(PODS)).willReturn(okJson(JSON.writeValueAsString(Map.of("kind", "PodList",
                "apiVersion", "v1", "metadata", Map.of("resourceVersion", "1"), "items", items)))));
    }

    static Map<String, Object> pod(String name, String node, int port) {
        return Map.of("metadata", Map.of("name", name, "namespace", NAMESPACE),
                "spec", Map.of("nodeName", node, "containers", List.of(Map.of("name", "agent",
                        "ports", List.of(Map.of("name", "http", "containerPort", port))))),
                "status", Map.of("phase", "Running", "podIP", "127.0.0.1",
                        "conditions", List.of(Map.of("type", "Ready", "status", "True"))));
    }

    /** A's pair towards B in /v1/mesh, or null. */
    static JsonNode pair() {
        for (JsonNode p : a.get("/v1/mesh", Duration.ofSeconds(30)).json().path("pairs")) {
            if (p.path("sourceNode").asString().equals("node-a") && p.path("targetNode").asString().equals("node-b")) {
                return p;
            }
        }
        return null;
    }

    static Instant lastProbe() {
        JsonNode p = pair();
        return p == null || !p.hasNonNull("lastProbe") ? Instant.EPOCH : Instant.parse(p.get("lastProbe").asString());
    }

    /** The pair stays known and ok, and is probed again after {@code since}: the mesh goes on with what it knew. */
    static void keepsProbing(String phase, Instant since, Duration within) {
        await().atMost(within).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            JsonNode p = pair();
            assertThat(p).as("%s: A's pair towards B", phase).isNotNull();
            assertThat(p.get("state").asString()).as(phase).isEqualTo("ok");
            assertThat(lastProbe()).as("%s: probed again since %s", phase, since).isAfter(since);
        });
        assertThat(a.metric("imexprobe_peers")).as("%s: peers known", phase).isEqualTo(1.0);
    }

    @Test
    @Order(1)
    void peersListedByTheApiAreProbed() {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            JsonNode p = pair();
            assertThat(p).isNotNull();
            assertThat(p.get("state").asString()).isEqualTo("ok");
        });
        assertThat(api.findAll(anyRequestedFor(urlPathEqualTo(PODS)))).isNotEmpty();
    }

    @Test
    @Order(2)
    void anApiAnswering500KeepsTheLastKnownPeers() {
        api.resetAll();
        api.stubFor(get(urlPathEqualTo(PODS)).willReturn(aResponse().withStatus(500).withHeader("Content-Type",
                "application/json").withBody("{\"kind\":\"Status\",\"message\":\"etcdserver: request timed out\"}")));
        Instant since = Instant.now().plusSeconds(2);
        keepsProbing("API answering 500", since, Duration.ofSeconds(30));
        int asked = api.findAll(anyRequestedFor(urlPathEqualTo(PODS))).size();
        assertThat(asked).as("A kept asking the API").isGreaterThanOrEqualTo(2);
        await().atMost(Duration.ofSeconds(10)).until(() -> a.logText().contains(
                "peer discovery 'kubernetes' failed, keeping the last known 1 peer(s)"));
        System.out.printf("KubernetesApiDownIT: API answering 500 (%d lists refused): B still probed, last at %s%n",
                asked, lastProbe());
    }

    @Test
    @Order(3)
    void anApiRefusingConnectionsKeepsTheLastKnownPeers() {
        api.stop();
        Instant since = Instant.now().plusSeconds(2);
        keepsProbing("API refusing connections", since, Duration.ofSeconds(30));
        System.out.printf("KubernetesApiDownIT: API down (connection refused): B still probed, last at %s%n",
                lastProbe());
    }

    @Test
    @Order(4)
    void anApiThatHangsStallsNeitherMetricsNorPagesNorTheMesh() {
        api = new WireMockServer(options().port(apiPort).bindAddress("127.0.0.1"));
        api.start();
        api.stubFor(get(urlPathEqualTo(PODS)).willReturn(okJson("{}").withFixedDelay(60_000)));
        Instant since = Instant.now().plusSeconds(1);
        double slowest = 0;
        for (int i = 0; i < 6; i++) {
            for (String path : List.of("/actuator/prometheus", "/v1/mesh?scope=domain", "/")) {
                long start = System.nanoTime();
                assertThat(a.get(path, Duration.ofSeconds(60)).status()).as(path).isEqualTo(200);
                slowest = Math.max(slowest, (System.nanoTime() - start) / 1e9);
            }
        }
        System.out.printf("KubernetesApiDownIT: API hanging: slowest of 18 scrapes and pages %.2f s%n", slowest);
        assertThat(slowest).as("a scrape or page waited for the hung API").isLessThan(PAGE_BOUND_SECONDS);
        // The mesh's own lookup waits for the API's timeout (3 s, twice) each round, then probes the last known peers.
        keepsProbing("API hanging", since, Duration.ofSeconds(40));
    }

    @Test
    @Order(5)
    void scrapesAndPagesNeverBecomeApiCalls() {
        servePods();
        await().atMost(Duration.ofSeconds(30)).until(() -> a.logText().contains("peer discovery 'kubernetes' recovered"));
        api.resetRequests();
        long start = System.nanoTime();
        int asks = 0;
        for (int i = 0; i < 20; i++) {
            a.get("/actuator/prometheus");
            a.get("/v1/mesh?scope=domain");
            a.get("/");
            asks += 3;
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        int lists = api.findAll(anyRequestedFor(urlPathEqualTo(PODS))).size();
        // The mesh lists once a round: a round every 0.8 s at the least (1 s, jitter 0.2).
        long rounds = (long) Math.ceil(seconds / (INTERVAL.toMillis() * 0.8 / 1000)) + 1;
        System.out.printf("KubernetesApiDownIT: %d scrapes and pages in %.1f s caused %d pod lists (mesh rounds in "
                + "that time: at most %d)%n", asks, seconds, lists, rounds);
        assertThat(lists).isLessThanOrEqualTo((int) rounds);

        for (LoggedRequest r : api.findAll(anyRequestedFor(anyUrl()))) {
            assertThat(r.getHeaders().all().toString()).doesNotContain(AgentProcess.TOKEN);
            assertThat(r.getHeader("Authorization")).as("no service-account token outside a pod, and never ours")
                    .isNull();
        }
    }
}
