package dev.imexprobe.condition;

import dev.imexprobe.testing.FakeKubernetesApi;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import com.github.tomakehurst.wiremock.client.MappingBuilder;
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

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.and;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.matching;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.patch;
import static com.github.tomakehurst.wiremock.client.WireMock.patchRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static dev.imexprobe.testing.MeshAgents.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two agents on the fake driver find each other through a fake Kubernetes API (WireMock) and node-a writes its
 * {@code ImexFabricImport} condition there, through the same client and settings as its discovery.
 *
 * <p>The fake API server validates what it is sent as the real one would, and answers 422 (Invalid) otherwise: a
 * node-status patch must be a strategic merge patch whose one condition has the type, a status of
 * True/False/Unknown, a CamelCase reason, RFC 3339 times; an Event must be a complete events.k8s.io/v1 Event
 * (eventTime as MicroTime, reportingController, reportingInstance, action, reason, type Normal/Warning, regarding
 * the Node). WireMock is already this project's fake API server for discovery; the Kubernetes Java client's mock
 * server would add a dependency tree for the same few stubs.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NodeConditionIT {

    static final String NAMESPACE = "gpu-ops";
    static final String SELECTOR = "app.kubernetes.io/name=imexprobe";
    static final String STATUS_PATH = "/api/v1/nodes/node-a/status";
    static final String EVENTS_PATH = "/apis/events.k8s.io/v1/namespaces/default/events";
    static final Duration SETTLE = Duration.ofSeconds(90);
    static final JsonMapper JSON = JsonMapper.builder().build();

    @RegisterExtension
    static final FakeKubernetesApi api = FakeKubernetesApi.keptAcrossTests();
    static MeshAgents mesh;
    static Agent a;
    static Agent b;

    @BeforeAll
    static void start() {
        mesh = MeshAgents.forTest(NodeConditionIT.class);
        Map<String, String> common = new LinkedHashMap<>();
        common.put("IMEXPROBE_MESH_INTERVAL", "1s");
        common.put("IMEXPROBE_MESH_MAXBACKOFF", "2s");
        common.put("IMEXPROBE_PEERS_KUBERNETES_SELECTOR", SELECTOR);
        common.put("IMEXPROBE_PEERS_KUBERNETES_NAMESPACE", NAMESPACE);
        common.put("IMEXPROBE_KUBERNETES_API", "http://localhost:" + api.port());
        common.put("IMEXPROBE_KUBERNETES_TOKENFILE", "/nonexistent/token");
        common.put("IMEXPROBE_KUBERNETES_TIMEOUT", "1s");
        a = mesh.add("node-a", withCondition(common));
        b = mesh.add("node-b", common);
        stubApi(List.of(a, b));
        mesh.startAll(true);
    }

    static Map<String, String> withCondition(Map<String, String> common) {
        Map<String, String> env = new LinkedHashMap<>(common);
        env.put("IMEXPROBE_NODECONDITION_ENABLED", "true");
        env.put("IMEXPROBE_NODECONDITION_ROUNDS", "2");
        env.put("IMEXPROBE_NODECONDITION_HEARTBEAT", "1h");
        env.put("HOSTNAME", "imexprobe-node-a");
        // Six transitions in about a minute: above the default burst of 5 (the limit itself: NodeConditionWriterTest).
        env.put("IMEXPROBE_NODECONDITION_EVENTBURST", "10");
        return env;
    }

    @AfterAll
    static void stop() {
        if (mesh != null) {
            mesh.close();
        }
    }

    // ---- the conditions, one after another ----------------------------------------------------------------

    @Test
    @Order(1)
    void trueAfterHealthyRoundsWithOneEventAndNoPatchWhileNothingChanges() {
        JsonNode c = eventually(SETTLE, "a True condition on node-a", NodeConditionIT::lastCondition,
                v -> v != null && v.path("status").asString().equals("True"));
        assertThat(c.path("reason").asString()).isEqualTo("ImportsPass");
        assertThat(c.path("message").asString()).contains("(1 pair(s) probed)");
        assertThat(patches().stream().map(p -> p.path("status").asString() + "/" + p.path("reason").asString()))
                .as("nothing before True: not-yet-judged is never written").containsExactly("True/ImportsPass");
        assertThat(eventReasons(1)).containsExactly("ImportsPass");
        assertThat(events().getFirst().path("type").asString()).isEqualTo("Normal");
        assertThat(events().getFirst().path("reportingInstance").asString()).isEqualTo("imexprobe-node-a");

        int patches = patches().size();
        double probes = a.metric("imexprobe_probes_total", "verdict", "pass");
        eventually(Duration.ofSeconds(30), "four more passing rounds",
                () -> a.metric("imexprobe_probes_total", "verdict", "pass"), v -> v >= probes + 4);
        assertThat(patches()).as("no patch while nothing changes (heartbeat 1h)").hasSize(patches);
        assertThat(a.metric("imexprobe_node_condition_writes_total", "result", "ok")).isEqualTo(patches);
    }

    @Test
    @Order(2)
    void falseWithTheFindingsReasonWhenTheChannelIsRemovedAndTrueAgainWhenItReturns() throws IOException {
        Path channel = a.machine().channelDir().resolve("channel0");
        Files.delete(channel);
        long removed = System.nanoTime();
        long restored;
        try {
            removedChannel();
        } finally {
            Files.writeString(channel, "");
            restored = System.nanoTime();
        }
        double toFalse = (falseSeen - removed) / 1e9;
        JsonNode back = eventually(SETTLE, "True again", NodeConditionIT::lastCondition,
                v -> v.path("status").asString().equals("True"));
        System.out.printf("node-condition IT: channel removed → False patched after %.2f s (interval 1s, rounds 2); "
                + "restored → True after %.2f s%n", toFalse, (System.nanoTime() - restored) / 1e9);
        assertThat(back.path("lastTransitionTime").asString()).isGreaterThan(falseSince);
        assertThat(eventReasons(3)).containsExactly("ImportsPass", "CreateNotPermitted", "ImportsPass");
        assertThat(transitions()).as("one Event per transition").isEqualTo(events().size());
    }

    static String falseSince;
    static long falseSeen;

    static void removedChannel() {
        JsonNode c = eventually(SETTLE, "False on node-a", NodeConditionIT::lastCondition,
                v -> v.path("status").asString().equals("False"));
        falseSeen = System.nanoTime();
        assertThat(c.path("reason").asString()).isEqualTo("CreateNotPermitted");
        assertThat(c.path("message").asString()).contains("node-a/", "→ node-b/", "create 800", "Remedy:");
        assertThat(eventReasons(2)).containsExactly("ImportsPass", "CreateNotPermitted");
        JsonNode warning = events().getLast();
        assertThat(warning.path("reason").asString()).isEqualTo("CreateNotPermitted");
        assertThat(warning.path("type").asString()).isEqualTo("Warning");
        falseSince = c.path("lastTransitionTime").asString();
    }

    @Test
    @Order(3)
    void unknownWhenNothingIsProbedAndTrueWhenThePeerReturns() {
        // Observer mode is not in this build: "nothing probed" is node-b leaving the pod list.
        stubApi(List.of(a));
        JsonNode c = eventually(SETTLE, "Unknown on node-a", NodeConditionIT::lastCondition,
                v -> v.path("status").asString().equals("Unknown"));
        assertThat(c.path("reason").asString()).isEqualTo("NothingProbed");
        stubApi(List.of(a, b));
        eventually(SETTLE, "True again", NodeConditionIT::lastCondition,
                v -> v.path("status").asString().equals("True"));
        assertThat(eventReasons(5))
                .containsExactly("ImportsPass", "CreateNotPermitted", "ImportsPass", "NothingProbed", "ImportsPass");
        assertThat(transitions()).isEqualTo(events().size());
        assertThat(api.findAll(postRequestedFor(urlPathEqualTo(EVENTS_PATH)))).as("no Event refused (422)")
                .allSatisfy(r -> assertThat(r.getBodyAsString()).contains("\"regarding\""));
    }

    @Test
    @Order(4)
    void anApiThatRefusesOrHangsStopsNeitherProbingNorMetricsAndTheWriteIsRetried() throws IOException {
        Path channel = a.machine().channelDir().resolve("channel0");
        Files.deleteIfExists(channel); // a change to write while the API refuses
        int before = allPatches().size();
        for (int status : new int[]{500, 403, 409, 0}) {
            String result = switch (status) {
                case 500 -> "error";
                case 403 -> "forbidden";
                case 409 -> "conflict";
                default -> "unreachable";
            };
            api.stubFor(failing(status));
            double failed = metricOr0(result);
            // absent until this pair's first failure since it came back (its counters went with it in order 3)
            double probes = java.util.Objects.requireNonNullElse(a.metric("imexprobe_probes_total", "verdict", "fail"),
                    0.0);
            eventually(Duration.ofSeconds(30), "node-a retries its patch while the API answers " + result,
                    () -> metricOr0(result), v -> v >= failed + 2);
            assertThat(a.metric("imexprobe_probes_total", "verdict", "fail")).as("probing goes on")
                    .isGreaterThan(probes);
            assertThat(a.get("/actuator/health/liveness").status()).isEqualTo(200);
        }
        api.resetMappings();
        stubApi(List.of(a, b));
        JsonNode c = eventually(SETTLE, "the False patch lands once the API answers", NodeConditionIT::lastCondition,
                v -> v.path("status").asString().equals("False"));
        assertThat(c.path("reason").asString()).isEqualTo("CreateNotPermitted");
        assertThat(allPatches().size()).as("every failed round sent the patch again").isGreaterThan(before + 8);
        Files.writeString(channel, "");
        eventually(SETTLE, "True at the end", NodeConditionIT::lastCondition,
                v -> v.path("status").asString().equals("True"));
        eventually(Duration.ofSeconds(10), "one Event per transition, also while the patches failed",
                () -> List.of(transitions(), events().size()), v -> v.get(0).equals(v.get(1)));
        eventually(Duration.ofSeconds(5), "every accepted patch counted ok, no other",
                () -> List.of(metricOr0("ok"), (double) patches().size()), v -> v.get(0).equals(v.get(1)));
        System.out.printf("node-condition IT: %d patches, %d events, results ok=%.0f error=%.0f forbidden=%.0f "
                        + "conflict=%.0f unreachable=%.0f%n", patches().size(), events().size(), metricOr0("ok"),
                metricOr0("error"), metricOr0("forbidden"), metricOr0("conflict"), metricOr0("unreachable"));
    }

    // ---- the fake API server ----------------------------------------------------------------------------------

    /** Pods of {@code agents}; node reads; patches and Events validated, anything else 422 as the API server would. */
    static void stubApi(List<Agent> agents) {
        List<Map<String, Object>> items = new ArrayList<>();
        for (Agent x : agents) {
            items.add(pod(x));
        }
        api.resetMappings();
        api.stubFor(get(urlPathEqualTo("/api/v1/namespaces/" + NAMESPACE + "/pods"))
                .withQueryParam("labelSelector", equalTo(SELECTOR))
                .willReturn(okJson(JSON.writeValueAsString(Map.of("kind", "PodList", "apiVersion", "v1",
                        "metadata", Map.of("resourceVersion", "1"), "items", items)))));
        api.stubFor(get(urlPathEqualTo("/api/v1/nodes/node-a"))
                .willReturn(okJson("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-a\"},"
                        + "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}")));
        api.stubFor(patch(urlPathMatching("/api/v1/nodes/.*")).atPriority(10)
                .willReturn(invalid("the patch is not a valid strategic merge patch of one condition")));
        api.stubFor(patch(urlPathEqualTo(STATUS_PATH)).atPriority(5)
                .withHeader("Content-Type", matching("application/strategic-merge-patch\\+json.*"))
                .withRequestBody(and(
                        matchingJsonPath("$.status.conditions.length()", equalTo("1")),
                        matchingJsonPath("$.status.conditions[0].type", equalTo("ImexFabricImport")),
                        matchingJsonPath("$.status.conditions[0].status", matching("True|False|Unknown")),
                        // The API server's rule for a condition's reason.
                        matchingJsonPath("$.status.conditions[0].reason",
                                matching("[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")),
                        matchingJsonPath("$.status.conditions[0].message", matching("(?s).+")),
                        matchingJsonPath("$.status.conditions[0].lastTransitionTime",
                                matching("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ")),
                        matchingJsonPath("$.status.conditions[0].lastHeartbeatTime",
                                matching("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ"))))
                .willReturn(okJson("{\"kind\":\"Node\",\"apiVersion\":\"v1\"}")));
        api.stubFor(post(urlPathMatching("/apis/events.k8s.io/.*")).atPriority(10)
                .willReturn(invalid("the Event is incomplete")));
        api.stubFor(post(urlPathEqualTo(EVENTS_PATH)).atPriority(5)
                .withHeader("Content-Type", matching("application/json.*"))
                .withRequestBody(and(
                        matchingJsonPath("$.apiVersion", equalTo("events.k8s.io/v1")),
                        matchingJsonPath("$.kind", equalTo("Event")),
                        matchingJsonPath("$.metadata.name", matching("[a-z0-9]([-a-z0-9.]*[a-z0-9])?")),
                        matchingJsonPath("$.eventTime", matching("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z")),
                        matchingJsonPath("$.reportingController", matching(".+")),
                        matchingJsonPath("$.reportingInstance", matching(".+")),
                        matchingJsonPath("$.action", matching(".+")),
                        matchingJsonPath("$.reason", matching("[A-Za-z]+")),
                        matchingJsonPath("$.type", matching("Normal|Warning")),
                        matchingJsonPath("$.regarding.kind", equalTo("Node")),
                        matchingJsonPath("$.regarding.name", equalTo("node-a"))))
                .willReturn(aResponse().withStatus(201).withHeader("Content-Type", "application/json")
                        .withBody("{\"kind\":\"Event\"}")));
    }

    static MappingBuilder failing(int status) {
        MappingBuilder m = patch(urlPathEqualTo(STATUS_PATH)).atPriority(1);
        if (status == 0) {
            // Past the 1 s timeout: the agent has given up before this 200 is sent, so patches() leaves it out.
            return m.willReturn(okJson("{}").withHeader("X-Test-Too-Late", "true").withFixedDelay(3000));
        }
        return m.willReturn(aResponse().withStatus(status).withHeader("Content-Type", "application/json")
                .withBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"refused by "
                        + "the test\",\"code\":" + status + "}"));
    }

    static com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder invalid(String why) {
        return aResponse().withStatus(422).withHeader("Content-Type", "application/json")
                .withBody("{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Invalid\",\"message\":\"" + why
                        + "\",\"code\":422}");
    }

    static Map<String, Object> pod(Agent x) {
        return Map.of("kind", "Pod", "apiVersion", "v1",
                "metadata", Map.of("name", "imexprobe-" + x.node(), "namespace", NAMESPACE,
                        "uid", UUID.nameUUIDFromBytes(x.node().getBytes()).toString()),
                "spec", Map.of("nodeName", x.node(), "containers", List.of(Map.of("name", "agent",
                        "ports", List.of(Map.of("name", "http", "containerPort", x.port()))))),
                "status", Map.of("phase", "Running", "podIP", "127.0.0.1",
                        "conditions", List.of(Map.of("type", "Ready", "status", "True"))));
    }

    // ---- what the fake API server received ---------------------------------------------------------------

    /** Patches the fake API server accepted (it answered 200), in order. */
    static List<JsonNode> patches() {
        return api.getAllServeEvents().stream()
                .filter(e -> e.getRequest().getMethod().getName().equals("PATCH")
                        && e.getRequest().getUrl().equals(STATUS_PATH) && e.getResponse().getStatus() == 200
                        && !e.getResponse().getHeaders().getHeader("X-Test-Too-Late").isPresent())
                .sorted((x, y) -> x.getRequest().getLoggedDate().compareTo(y.getRequest().getLoggedDate()))
                .map(e -> JSON.readTree(e.getRequest().getBodyAsString())
                        .path("status").path("conditions").get(0))
                .toList();
    }

    static JsonNode lastCondition() {
        List<JsonNode> p = patches();
        return p.isEmpty() ? null : p.getLast();
    }

    /** Changes of status or reason among the accepted patches. */
    static int transitions() {
        int n = 0;
        String last = null;
        for (JsonNode c : patches()) {
            String now = c.path("status").asString() + "/" + c.path("reason").asString();
            if (!now.equals(last)) {
                n++;
            }
            last = now;
        }
        return n;
    }

    /** Events the fake API server accepted (201), in order. */
    static List<JsonNode> events() {
        return api.getAllServeEvents().stream()
                .filter(e -> e.getRequest().getMethod().getName().equals("POST")
                        && e.getRequest().getUrl().equals(EVENTS_PATH) && e.getResponse().getStatus() == 201)
                .sorted((x, y) -> x.getRequest().getLoggedDate().compareTo(y.getRequest().getLoggedDate()))
                .map(e -> JSON.readTree(e.getRequest().getBodyAsString()))
                .toList();
    }

    /** The reasons of the accepted Events once there are {@code n} (the Event follows its patch by a moment). */
    static List<String> eventReasons(int n) {
        eventually(Duration.ofSeconds(10), n + " Events", () -> events().size(), v -> v >= n);
        return events().stream().map(e -> e.path("reason").asString()).toList();
    }

    static double metricOr0(String result) {
        Double v = a.metric("imexprobe_node_condition_writes_total", "result", result);
        return v == null ? 0 : v;
    }

    static List<LoggedRequest> allPatches() {
        return api.findAll(patchRequestedFor(urlPathEqualTo(STATUS_PATH)));
    }
}
