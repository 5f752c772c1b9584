package dev.imexprobe.security;

import com.github.tomakehurst.wiremock.WireMockServer;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A compromised peer in A's mesh (a WireMock server in A's static peer list) that lies: it claims every import
 * passed, and fills its node name, GPU UUID, stage details and /v1/mesh with markup and exposition-format
 * injections. A's own measurement still fails (the exporter checks the write-back in its own memory, which the
 * liar never wrote), the matrix page escapes everything, and the scrape carries no injected line.
 */
class CompromisedPeerIT {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final String EVIL_NODE = "evil\"><script>alert(1)</script>\n# TYPE injected_metric counter";
    static final String EVIL_GPU = "GPU-<img src=x onerror=alert(2)>";

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static WireMockServer evil;
    static AgentProcess a;

    @BeforeAll
    static void start() {
        machine = FakeMachine.h200(dir.resolve("machine"));
        evil = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
        evil.start();
        a = AgentProcess.start("a", dir, machine.env(), "node-a", Map.of("IMEXPROBE_MESH_INTERVAL", "1s",
                "IMEXPROBE_PEERS_STATIC", "127.0.0.1:" + evil.port())).awaitReady();
        ObjectNode node = (ObjectNode) a.get("/v1/node").json();
        ((ObjectNode) node.get("agent")).put("node", EVIL_NODE).put("id", "0badc0de0badc0de");
        ((ObjectNode) node.get("gpus").get(0)).put("uuid", EVIL_GPU);
        evil.stubFor(get("/v1/node").willReturn(okJson(node.toString())));
        evil.stubFor(post("/v1/imports").willReturn(okJson(lyingImport())));
        evil.stubFor(get(urlPathEqualTo("/v1/mesh")).willReturn(okJson(lyingMesh())));
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(a);
        if (evil != null) {
            evil.stop();
        }
    }

    /** "Everything passed", with markup in every text. */
    static String lyingImport() {
        ObjectNode r = JSON.createObjectNode().put("verdict", "pass").put("durationSeconds", 0.001)
                .put("node", EVIL_NODE).put("agentId", "0badc0de0badc0de").put("gpu", 0).put("gpuUuid", EVIL_GPU);
        ArrayNode stages = r.putArray("stages");
        for (String s : List.of("import", "reserve", "map", "access", "verify", "writeback", "release")) {
            stages.addObject().put("name", s).put("status", "ok").put("cuResult", 0).put("cuResultName", "CUDA_SUCCESS")
                    .put("durationSeconds", 0.0001).put("detail", "<script>alert(3)</script>");
        }
        return r.toString();
    }

    /** A /v1/mesh that reports a pair it never measured, dated in the future, with markup everywhere. */
    static String lyingMesh() {
        ObjectNode m = JSON.createObjectNode();
        m.putObject("agent").put("node", "<script>alert(4)</script>");
        ObjectNode p = m.putArray("pairs").addObject();
        p.put("sourceNode", "<script>alert(5)</script>").put("sourceGpu", EVIL_GPU).put("targetNode", "node-a")
                .put("targetGpu", "GPU-x").put("state", "failed").put("stage", "import").put("cuResult", 800)
                .put("cuResultName", "CUDA_ERROR_NOT_PERMITTED").put("ageSeconds", 0.1)
                .put("lastProbe", "2099-01-01T00:00:00Z").put("consecutiveFailures", 1);
        p.putObject("finding").put("code", "<b>FORGED</b>").put("severity", "error").put("blame", "target")
                .put("cause", "<script>alert(6)</script>").put("remedy", "<iframe src=//x>").putObject("evidence");
        return m.toString();
    }

    @Test
    void aLyingPeerCannotEarnAPassNorInjectMarkupOrMetrics() {
        // A measures the liar every second: the pair fails, whatever the liar said.
        JsonNode pair = await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).until(() -> {
            for (JsonNode p : a.get("/v1/mesh").json().path("pairs")) {
                if (p.path("sourceNode").asString().equals("node-a") && p.path("targetNode").asString().equals(EVIL_NODE)) {
                    return p;
                }
            }
            return null;
        }, p -> p != null && !p.path("state").asString().equals("unknown"));
        assertThat(pair.get("state").asString()).as("%s", pair).isEqualTo("failed");
        assertThat(pair.get("stage").asString()).as("the exporter's own check of the write-back").isEqualTo("writeback");

        // The matrix page merges the liar's /v1/mesh: all of it escaped.
        String page = a.get("/").body();
        assertThat(page).contains("&lt;script&gt;alert(").doesNotContain("<script>alert(").doesNotContain("<img src=x")
                .doesNotContain("<iframe").doesNotContain("<b>FORGED");
        // The scrape: the liar's name is an escaped label value, never a line of its own.
        String scrape = a.get("/actuator/prometheus").body();
        assertThat(scrape.lines()).noneMatch(l -> l.startsWith("# TYPE injected_metric") || l.startsWith("injected_metric"));
        assertThat(scrape).contains("target_node=\"evil\\\"><script>alert(1)</script>\\n# TYPE injected_metric counter\"");
        // Hearsay stays out of this agent's own view and metrics: only the merged domain view shows it.
        assertThat(a.get("/v1/mesh").body()).doesNotContain("alert(5)");
        assertThat(scrape).doesNotContain("alert(5)");
        assertThat(a.get("/v1/mesh?scope=domain").body()).contains("alert(5)");
        System.out.printf("CompromisedPeerIT: the liar's pair: %s at %s; page escaped, scrape clean (%d lines)%n",
                pair.get("state").asString(), pair.get("stage").asString(), scrape.lines().count());
        // Each round's export is released by A itself: the liar is never asked to, and holds nothing of A's.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> a.liveAllocations() == 0.0);
    }
}
