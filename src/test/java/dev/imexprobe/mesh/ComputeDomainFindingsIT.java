package dev.imexprobe.mesh;

import dev.imexprobe.testing.FakeKubernetesApi;
import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A ComputeDomain that says Ready for every node while the mesh's imports between them fail, on real agent
 * processes through the real JNI path, with a fake API server answering as the NVIDIA DRA driver's controller
 * fills the ComputeDomain:
 * <ul>
 *   <li>node-c has no IMEX channel: imports into it fail with 800, the channel is the layer at fault;</li>
 *   <li>node-b's IMEX daemon is in another ensemble (the fake's {@code imex.domain}): imports into it fail with
 *       801, the daemons are the layer at fault;</li>
 *   <li>node-d observes only: its pairs are {@code not_probed} by design and are never held against the
 *       ComputeDomain, its own view has no such finding.</li>
 * </ul>
 * The same API serves the Nodes' {@code nvidia.com/gpu.clique} labels as GPU feature discovery writes them: node-a's
 * agrees with NVML, node-b's names another clique (CLIQUE_LABEL_MISMATCH), node-c has no Node (404, quiet), and
 * node-d runs without NVML, so its GPU's IMEX domain comes from its label. A second ComputeDomain lists node-a in
 * a clique its GPU is not in: DOMAIN_MEMBERS_DISAGREE.
 */
class ComputeDomainFindingsIT {

    static final Duration SETTLE = Duration.ofSeconds(90);
    static final JsonMapper JSON = JsonMapper.builder().build();
    static final List<String> NODES = List.of("node-a", "node-b", "node-c", "node-d");
    @RegisterExtension
    static final FakeKubernetesApi api = FakeKubernetesApi.keptAcrossTests();
    static MeshAgents mesh;
    static final Map<String, Agent> AGENTS = new LinkedHashMap<>();

    @BeforeAll
    static void start() {
        serveComputeDomain();
        serveNodes();
        mesh = MeshAgents.forTest(ComputeDomainFindingsIT.class);
        for (String n : NODES) {
            boolean channel = !n.equals("node-c") && !n.equals("node-d");
            FakeMachine m = (channel ? FakeMachine.h200(mesh.dir().resolve(n))
                    : FakeMachine.h200WithoutChannel(mesh.dir().resolve(n))).host(n)
                    .fabric(0, 3, MeshAgents.CLUSTER, MeshAgents.CLIQUE)
                    .config("imex.domain", n.equals("node-b") ? "B" : "A");
            Map<String, String> env = new LinkedHashMap<>(Map.of("IMEXPROBE_MESH_INTERVAL", "2s",
                    "IMEXPROBE_MESH_MAXBACKOFF", "4s",
                    "IMEXPROBE_CHANNEL_MODE", n.equals("node-d") ? "observer" : "hostPath",
                    "IMEXPROBE_COMPUTEDOMAINS_ENABLED", "true",
                    "IMEXPROBE_COMPUTEDOMAINS_INTERVAL", "1s",
                    "IMEXPROBE_PEERS_KUBERNETES_API", "http://localhost:" + api.port(),
                    "IMEXPROBE_CLIQUELABEL_ENABLED", "true",
                    "IMEXPROBE_CLIQUELABEL_INTERVAL", "1s"));
            if (n.equals("node-d")) {
                env.put("IMEXPROBE_NVML_LIBRARY", mesh.dir().resolve("no-nvml/libnvidia-ml.so.1").toString());
            }
            AGENTS.put(n, mesh.add(n, m, env));
        }
        AGENTS.values().forEach(a -> a.env("IMEXPROBE_PEERS_STATIC", mesh.staticList()));
        mesh.startAll(false);
    }

    @AfterAll
    static void stop() {
        if (mesh != null) {
            mesh.close();
        }
    }

    /** As the DRA driver's controller fills it: Ready, every node's daemon Ready. */
    static void serveComputeDomain() {
        List<Map<String, Object>> nodes = new ArrayList<>();
        for (int i = 0; i < NODES.size(); i++) {
            nodes.add(Map.of("name", NODES.get(i), "ipAddress", "10.1.0." + (i + 1), "cliqueID",
                    MeshAgents.CLUSTER + "." + MeshAgents.CLIQUE, "index", i, "status", "Ready"));
        }
        Map<String, Object> cd = Map.of("apiVersion", "resource.nvidia.com/v1beta1", "kind", "ComputeDomain",
                "metadata", Map.of("name", "canary", "namespace", "gpu-jobs"),
                "status", Map.of("status", "Ready", "nodes", nodes));
        // A second one that lists node-a alone, in clique 3 of the cluster: not the clique NVML reports for it.
        Map<String, Object> stale = Map.of("apiVersion", "resource.nvidia.com/v1beta1", "kind", "ComputeDomain",
                "metadata", Map.of("name", "stale", "namespace", "other"),
                "status", Map.of("status", "Ready", "nodes", List.of(Map.of("name", "node-a", "ipAddress", "10.1.0.1",
                        "cliqueID", MeshAgents.CLUSTER + ".3", "index", 0, "status", "Ready"))));
        api.stubFor(get(urlPathEqualTo("/apis/resource.nvidia.com/v1beta1/computedomains"))
                .withQueryParam("limit", equalTo("500"))
                .willReturn(okJson(JSON.writeValueAsString(Map.of("kind", "ComputeDomainList",
                        "metadata", Map.of(), "items", List.of(cd, stale))))));
    }

    /** Each Node as the API server has it, with the clique label GPU feature discovery would write. */
    static void serveNodes() {
        Map<String, String> labels = Map.of("node-a", MeshAgents.CLUSTER + "." + MeshAgents.CLIQUE,
                "node-b", MeshAgents.CLUSTER + ".9", "node-d", MeshAgents.CLUSTER + "." + MeshAgents.CLIQUE);
        labels.forEach((node, clique) -> api.stubFor(get(urlPathEqualTo("/api/v1/nodes/" + node))
                .willReturn(okJson(JSON.writeValueAsString(Map.of("kind", "Node", "apiVersion", "v1",
                        "metadata", Map.of("name", node, "labels", Map.of("kubernetes.io/hostname", node,
                                "nvidia.com/gpu.clique", clique))))))));
        // node-c: no stub, the fake API answers 404 as for a Node it does not know
    }

    static JsonNode finding(JsonNode view, String code) {
        for (JsonNode f : view.path("findings")) {
            if (f.path("code").asString().equals(code)) {
                return f;
            }
        }
        return null;
    }

    @Test
    void aReadyComputeDomainWhoseImportsFailNamesTheChannelOrTheDaemons() {
        Agent a = AGENTS.get("node-a");
        JsonNode view = MeshAgents.eventually(SETTLE, "node-a's view holds both ComputeDomain findings",
                () -> a.mesh(false), v -> finding(v, "COMPUTE_DOMAIN_READY_CHANNEL_FAILS") != null
                        && finding(v, "COMPUTE_DOMAIN_READY_DAEMON_FAILS") != null);

        JsonNode channel = finding(view, "COMPUTE_DOMAIN_READY_CHANNEL_FAILS");
        assertThat(channel.path("severity").asString()).isEqualTo("error");
        assertThat(channel.path("blame").asString()).isEqualTo("target");
        JsonNode e = channel.path("evidence");
        assertThat(e.path("computeDomain").asString()).isEqualTo("gpu-jobs/canary");
        assertThat(e.path("importers").toString()).isEqualTo("[\"node-c\"]");
        assertThat(e.path("pairs").asString()).isEqualTo("node-a → node-c");
        assertThat(e.path("nodes").asString()).isEqualTo("node-a: Ready, node-c: Ready");
        assertThat(e.path("driverResult").asString()).isEqualTo("import CUDA_ERROR_NOT_PERMITTED");
        assertThat(channel.path("cause").asString()).contains("IMEX channel of the importing pod on [node-c]");

        JsonNode daemon = finding(view, "COMPUTE_DOMAIN_READY_DAEMON_FAILS");
        assertThat(daemon.path("blame").asString()).isEqualTo("local");
        assertThat(daemon.path("evidence").path("pairs").asString()).isEqualTo("node-a → node-b");
        assertThat(daemon.path("evidence").path("driverResult").asString())
                .isEqualTo("import CUDA_ERROR_NOT_SUPPORTED");
        assertThat(daemon.path("cause").asString()).contains("IMEX daemons");
        assertThat(view.path("findings").toString()).as("the observer's pairs are not_probed: never counted")
                .doesNotContain("node-d");
    }

    @Test
    void theObserverInTheSameReadyComputeDomainHasNoSuchFinding() {
        Agent d = AGENTS.get("node-d");
        JsonNode view = MeshAgents.eventually(SETTLE, "node-d lists its pairs, all not_probed, and its ComputeDomain",
                () -> d.mesh(false), v -> v.path("pairs").size() >= 3 && d.json("/v1/node").path("computeDomains")
                        .path("computeDomains").size() == 1);
        for (JsonNode p : view.path("pairs")) {
            assertThat(p.path("state").asString()).as(p.toString()).isEqualTo("not_probed");
        }
        assertThat(finding(view, "COMPUTE_DOMAIN_READY_CHANNEL_FAILS")).isNull();
        assertThat(finding(view, "COMPUTE_DOMAIN_READY_DAEMON_FAILS")).isNull();
        JsonNode entry = d.json("/v1/node").path("computeDomains").path("computeDomains").get(0);
        assertThat(entry.path("members").size()).isEqualTo(4);
        assertThat(entry.path("members").get(3).path("name").asString()).isEqualTo("node-d");
        assertThat(entry.path("members").get(3).path("status").asString()).isEqualTo("Ready");
    }

    @Test
    void theCliqueLabelIsCheckedAgainstNvmlAndFillsInWhereNvmlIsMissing() {
        JsonNode b = MeshAgents.eventually(SETTLE, "node-b's report finds its label disagreeing",
                () -> AGENTS.get("node-b").json("/v1/node?refresh=true"),
                v -> finding(v, "CLIQUE_LABEL_MISMATCH") != null);
        JsonNode mismatch = finding(b, "CLIQUE_LABEL_MISMATCH");
        assertThat(mismatch.path("severity").asString()).isEqualTo("warning");
        assertThat(mismatch.path("evidence").path("label").asString()).isEqualTo(MeshAgents.CLUSTER + ".9");
        assertThat(mismatch.path("evidence").path("nvml").asString())
                .isEqualTo("GPU 0: fabric:" + MeshAgents.CLUSTER + "/" + MeshAgents.CLIQUE);
        assertThat(b.path("gpus").get(0).path("imexDomain").asString()).as("NVML goes first")
                .isEqualTo("fabric:" + MeshAgents.CLUSTER + "/" + MeshAgents.CLIQUE);

        JsonNode a = MeshAgents.eventually(SETTLE, "node-a read its label", () -> AGENTS.get("node-a")
                .json("/v1/node?refresh=true"), v -> "ok".equals(v.path("cliqueLabel").path("state").asString()));
        assertThat(finding(a, "CLIQUE_LABEL_MISMATCH")).as("a label that agrees").isNull();
        JsonNode disagree = finding(a, "DOMAIN_MEMBERS_DISAGREE");
        assertThat(disagree).as("the stale ComputeDomain's cliqueID against NVML").isNotNull();
        assertThat(disagree.path("evidence").path("computeDomain").asString()).isEqualTo("other/stale");
        assertThat(disagree.path("evidence").path("cliqueId").asString()).isEqualTo(MeshAgents.CLUSTER + ".3");
        assertThat(finding(b, "DOMAIN_MEMBERS_DISAGREE")).as("canary's cliqueID agrees with NVML").isNull();
        assertThat(a.path("cliqueLabel").path("usedFor")).isEmpty();

        JsonNode c = MeshAgents.eventually(SETTLE, "node-c's Node is unknown to the API", () -> AGENTS.get("node-c")
                .json("/v1/node?refresh=true"), v -> "absent".equals(v.path("cliqueLabel").path("state").asString()));
        assertThat(c.path("cliqueLabel").path("detail").asString()).contains("IMEXPROBE_NODE_NAME");
        assertThat(finding(c, "CLIQUE_LABEL_MISMATCH")).isNull();

        JsonNode d = MeshAgents.eventually(SETTLE, "node-d's GPU takes its domain from the label",
                () -> AGENTS.get("node-d").json("/v1/node?refresh=true"),
                v -> v.path("cliqueLabel").path("usedFor").size() == 1);
        assertThat(d.path("driver").path("nvmlLoaded").asBoolean()).as("no NVML for node-d").isFalse();
        assertThat(d.path("gpus").get(0).path("fabric").isNull()).isTrue();
        assertThat(d.path("gpus").get(0).path("imexDomain").asString())
                .isEqualTo("fabric:" + MeshAgents.CLUSTER + "/" + MeshAgents.CLIQUE);
        assertThat(finding(d, "CLIQUE_LABEL_MISMATCH")).isNull();
    }
}
