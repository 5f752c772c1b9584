package dev.imexprobe.peer;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.MappingBuilder;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.delete;
import static com.github.tomakehurst.wiremock.client.WireMock.deleteRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static dev.imexprobe.peer.ProbeJson.STAGES;
import static dev.imexprobe.peer.ProbeJson.names;
import static dev.imexprobe.peer.ProbeJson.stage;
import static dev.imexprobe.peer.ProbeJson.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A real agent probing a peer that misbehaves, played by WireMock: too slow, garbage, 5xx, refusals, a /v1/node
 * of something that is not an agent, answers without the stages. /probe answers 200 with verdict fail and the
 * finding every time (never a 5xx), and the agent releases what it exported for the peer.
 */
class MisbehavingPeerIT {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** The agent's deadline for each call to a peer. */
    private static final Duration PEER_TIMEOUT = Duration.ofSeconds(2);
    private static final String SLOW_MS = "5000";

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess agent;
    static WireMockServer peer;
    /** A /v1/node document of a real agent, renamed: what the stand-in says about itself. */
    static String peerNode;
    static String peerGpu;

    @BeforeAll
    static void start() {
        machine = FakeMachine.h200(dir.resolve("machine"));
        agent = AgentProcess.start("agent", dir, machine.env(), "node-a", Map.of(
                "IMEXPROBE_PROBE_TIMEOUT", PEER_TIMEOUT.toSeconds() + "s",
                "IMEXPROBE_PROBE_CONCURRENCY", "1",
                "IMEXPROBE_PROBE_RETRYAFTER", "7"));
        peer = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
        peer.start();
        agent.awaitReady();
        ObjectNode node = (ObjectNode) agent.get("/v1/node").json();
        ((ObjectNode) node.get("agent")).put("node", "node-wiremock").put("id", "feedfacefeedface");
        peerNode = node.toString();
        peerGpu = node.get("gpus").get(0).get("uuid").asString();
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(agent);
        if (peer != null) {
            peer.stop();
        }
    }

    @AfterEach
    void releasedWhatItExported() {
        peer.resetAll();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            assertThat(machine.stateFiles()).as("allocations of the fake host").isEmpty();
            assertThat(agent.liveAllocations()).as("imexprobe_allocations_live").isZero();
        });
    }

    private static String target() {
        return "127.0.0.1:" + peer.port();
    }

    private static void stub(MappingBuilder request, ResponseDefinitionBuilder response) {
        peer.stubFor(request.willReturn(response));
    }

    private static void aRealNode() {
        stub(get("/v1/node"), okJson(peerNode));
    }

    // ---- the cases ---------------------------------------------------------------------------------------------

    /**
     * How the peer misbehaves, which direction is probed, and what the probe must say: the transfer stage's
     * status, the start of its detail, and the finding.
     */
    record Misbehaviour(String name, String direction, Consumer<WireMockServer> setUp, String transferStatus,
                        String detailStart, String finding) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Misbehaviour> misbehaviours() {
        String imports = "/v1/imports";
        String exports = "/v1/exports";
        return Stream.of(
                new Misbehaviour("/v1/node slower than the peer deadline", "push",
                        p -> stub(get("/v1/node"), okJson(peerNode).withFixedDelay(Integer.parseInt(SLOW_MS))),
                        "timeout", "GET /v1/node on " + target() + " got no answer within 2000 ms", "TIMEOUT"),
                new Misbehaviour("import answer slower than the peer deadline", "push", p -> {
                    aRealNode();
                    stub(post(imports), okJson("{}").withFixedDelay(Integer.parseInt(SLOW_MS)));
                }, "timeout", "POST /v1/imports on " + target() + " got no answer within 2000 ms", "TIMEOUT"),
                new Misbehaviour("import answer whose body trickles in past the deadline", "push", p -> {
                    aRealNode();
                    stub(post(imports), okJson(importReply(true)).withChunkedDribbleDelay(20, 6000));
                }, "timeout", "POST /v1/imports on " + target() + " got no answer within 2000 ms", "TIMEOUT"),
                new Misbehaviour("/v1/node answers garbage", "push",
                        p -> stub(get("/v1/node"), okJson("{\"agent\": [1, 2")),
                        "failed", "answer is not a valid JsonNode", "PEER_ERROR"),
                new Misbehaviour("/v1/node of something that is not an agent", "push",
                        p -> stub(get("/v1/node"), okJson("{\"status\":\"UP\",\"version\":\"2.1\"}")),
                        "failed", "its /v1/node does not describe an imexprobe agent", "PEER_ERROR"),
                new Misbehaviour("/v1/node is an HTML page", "push",
                        p -> stub(get("/v1/node"), aResponse().withStatus(200).withHeader("Content-Type", "text/html")
                                .withBody("<html><body>It works!</body></html>")),
                        "failed", "answer is not a valid JsonNode", "PEER_ERROR"),
                new Misbehaviour("/v1/node answers 500", "push",
                        p -> stub(get("/v1/node"), aResponse().withStatus(500).withBody("Internal Server Error")),
                        "failed", "HTTP 500 Internal Server Error", "PEER_ERROR"),
                new Misbehaviour("import answers garbage JSON", "push", p -> {
                    aRealNode();
                    stub(post(imports), okJson("{\"verdict\":\"pass\",\"stages\":[{\"name\":"));
                }, "failed", "answer is not a valid ImportReply", "PEER_ERROR"),
                new Misbehaviour("import answers 500", "push", p -> {
                    aRealNode();
                    stub(post(imports), aResponse().withStatus(500).withHeader("Content-Type",
                            "application/problem+json").withBody("{\"detail\":\"boom\"}"));
                }, "failed", "HTTP 500 boom", "PEER_ERROR"),
                new Misbehaviour("import answers 503 with an empty body", "push", p -> {
                    aRealNode();
                    stub(post(imports), aResponse().withStatus(503));
                }, "failed", "HTTP 503 (empty body)", "PEER_ERROR"),
                new Misbehaviour("import refused with 401", "push", p -> {
                    aRealNode();
                    stub(post(imports), aResponse().withStatus(401).withHeader("Content-Type",
                            "application/problem+json").withBody("{\"type\":\"urn:imexprobe:problem:unauthorized\","
                            + "\"status\":401,\"detail\":\"signature does not match\"}"));
                }, "failed", "401 signature does not match", "PEER_REJECTED"),
                new Misbehaviour("import answer without stages", "push", p -> {
                    aRealNode();
                    stub(post(imports), okJson(importReplyWith(null)));
                }, "failed", "the peer's answer has no stages", "PEER_ERROR"),
                new Misbehaviour("import answer that skips the importer's stages but says pass", "push", p -> {
                    aRealNode();
                    stub(post(imports), okJson(importReplyWith("[" + okStage("import") + "]")));
                }, "failed", "the peer's answer lacks stages: reserve, map, access, verify, writeback, release",
                        "PEER_ERROR"),
                new Misbehaviour("import answer with a stage without name or status", "push", p -> {
                    aRealNode();
                    stub(post(imports), okJson(importReplyWith("[{\"durationSeconds\":0.1,\"detail\":\"?\"}]")));
                }, "failed", "the peer's answer has a stage without name or status", "PEER_ERROR"),
                new Misbehaviour("import answer larger than an agent ever sends", "push", p -> {
                    aRealNode();
                    stub(post(imports), okJson("{\"detail\":\"" + "x".repeat(2 << 20) + "\"}"));
                }, "failed", "answer larger than 1048576 bytes", "PEER_ERROR"),
                new Misbehaviour("export answers 500", "pull", p -> {
                    aRealNode();
                    stub(post(exports), aResponse().withStatus(500).withBody("oops"));
                }, "failed", "HTTP 500 oops", "PEER_ERROR"),
                new Misbehaviour("export answer with an unusable handle", "pull", p -> {
                    aRealNode();
                    stub(post(exports), aResponse().withStatus(201).withHeader("Content-Type", "application/json")
                            .withBody(exportReply("AAAA")));
                    stub(delete(urlPathMatching("/v1/exports/.*")), aResponse().withStatus(404));
                }, "failed", "the exporter sent an unusable handle: a FABRIC handle is exactly 64 bytes, got 3",
                        "PEER_ERROR"),
                new Misbehaviour("export answer that says pass without its stages", "pull", p -> {
                    aRealNode();
                    stub(post(exports), aResponse().withStatus(201).withHeader("Content-Type", "application/json")
                            .withBody(exportReplyWithStages(validHandle(), "[]")));
                    stub(delete(urlPathMatching("/v1/exports/.*")), aResponse().withStatus(404));
                }, "failed", "the peer's answer lacks stages: create, export", "PEER_ERROR"),
                new Misbehaviour("export answer that says pass without a handle", "pull", p -> {
                    aRealNode();
                    stub(post(exports), aResponse().withStatus(201).withHeader("Content-Type", "application/json")
                            .withBody(exportReply(validHandle()).replace("\"handle\":\"" + validHandle() + "\",", "")));
                }, "failed", "the exporter's answer has neither a handle, nor a failed stage, nor why its GPU was not probed", "PEER_ERROR"),
                new Misbehaviour("export slower than the peer deadline", "pull", p -> {
                    aRealNode();
                    stub(post(exports), okJson(exportReply(validHandle())).withFixedDelay(Integer.parseInt(SLOW_MS)));
                }, "timeout", "POST /v1/exports on " + target() + " got no answer within 2000 ms", "TIMEOUT"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("misbehaviours")
    void aMisbehavingPeerIsAFailedProbeNeverAServerError(Misbehaviour m) {
        m.setUp().accept(peer);
        AgentProcess.Reply reply = agent.get("/probe?target=" + target() + "&direction=" + m.direction());

        assertThat(reply.status()).as("%s", reply).isEqualTo(200);
        JsonNode report = reply.json();
        assertThat(report.get("verdict").asString()).isEqualTo("fail");
        assertThat(report.get("results")).hasSize(1);
        JsonNode r = report.get("results").get(0);
        assertThat(r.get("verdict").asString()).isEqualTo("fail");
        assertThat(names(r)).isEqualTo(STAGES);
        JsonNode transfer = stage(r, "transfer");
        assertThat(text(transfer, "status")).as("%s", r).isEqualTo(m.transferStatus());
        assertThat(text(transfer, "detail")).as("%s", r).startsWith(m.detailStart());
        assertThat(transfer.has("cuResult")).isFalse();
        JsonNode finding = r.get("finding");
        assertThat(text(finding, "code")).as("%s", r).isEqualTo(m.finding());
        // the peer's side of the pair: the importer when this agent pushed, the exporter when it pulled
        assertThat(text(finding, "blame")).isEqualTo(m.direction().equals("pull") ? "source" : "target");
        assertThat(text(finding.get("evidence"), "peer")).isEqualTo(target());
        assertThat(text(finding.get("evidence"), "stage")).isEqualTo("transfer");
        if (m.transferStatus().equals("timeout")) {
            assertThat(transfer.get("durationSeconds").asDouble()).as("waited for the deadline, and no longer")
                    .isBetween(PEER_TIMEOUT.toMillis() / 1000.0 * 0.95, PEER_TIMEOUT.toMillis() / 1000.0 + 1.0);
        }
        for (String later : List.of("import", "reserve", "map", "access", "verify", "writeback")) {
            assertThat(text(stage(r, later), "status")).as(later).isEqualTo("skipped");
        }
    }

    @Test
    void whatTheAgentSendsAPeerIsSignedAndNeverCarriesTheToken() {
        aRealNode();
        stub(post("/v1/imports"), okJson("{}"));
        stub(post("/v1/exports"), aResponse().withStatus(500));
        agent.get("/probe?target=" + target() + "&direction=both");

        List<LoggedRequest> requests = peer.findAll(anyRequestedFor(anyUrl()));
        assertThat(requests).extracting(LoggedRequest::getUrl).contains("/v1/node", "/v1/imports", "/v1/exports");
        for (LoggedRequest req : requests) {
            String all = req.getHeaders().all().toString() + req.getBodyAsString() + req.getUrl();
            assertThat(all).as("the shared token never leaves the agent").doesNotContain(AgentProcess.TOKEN);
            if (req.getMethod().getName().equals("POST")) {
                assertThat(req.getHeader("Authorization")).matches("IMEXPROBE-HMAC ts=\\d+,sig=[A-Za-z0-9_-]{43}");
                JsonNode body = JSON.readTree(req.getBodyAsString());
                assertThat(body.get("handleType").asString()).isEqualTo("FABRIC");
            } else {
                assertThat(req.getHeader("Authorization")).as("GET /v1/node is not signed").isNull();
            }
        }
        LoggedRequest imp = requests.stream().filter(r -> r.getUrl().equals("/v1/imports")).findFirst().orElseThrow();
        JsonNode body = JSON.readTree(imp.getBodyAsString());
        assertThat(body.get("gpu").asString()).as("the peer's GPU, by UUID").isEqualTo(peerGpu);
        assertThat(body.get("exporterNode").asString()).isEqualTo("node-a");
        assertThat(body.get("sizeBytes").asLong()).isEqualTo(2L << 20);
        assertThat(java.util.Base64.getDecoder().decode(body.get("handle").asString())).hasSize(64);
    }

    @Test
    void aPullWithAnUnusableHandleAsksTheExporterToReleaseIt() {
        aRealNode();
        stub(post("/v1/exports"), aResponse().withStatus(201).withHeader("Content-Type", "application/json")
                .withBody(exportReply("AAAA")));
        stub(delete(urlPathMatching("/v1/exports/.*")), okJson("{\"stage\":" + okStage("release") + "}"));
        JsonNode r = agent.get("/probe?target=" + target() + "&direction=pull").json().get("results").get(0);
        assertThat(text(stage(r, "release"), "status")).isEqualTo("ok");
        peer.verify(1, deleteRequestedFor(urlPathEqualTo("/v1/exports/peer-export-1")));
    }

    /**
     * A pull whose exporter exports and releases (the stand-in passes those to this very agent, so the handle is
     * real and filled with the pull's seed) but does not answer the write-back check: the finding is the peer call's,
     * blamed on the exporter, never a DRIVER_ERROR of the importer (as a write-back stage without a CUresult was).
     */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
            "the write-back check slower than the peer deadline|timeout|TIMEOUT|got no answer within 2000 ms",
            "the write-back check refused: the export is gone|failed|PEER_REJECTED|404 no such export"})
    void aPullWhoseExporterDoesNotCheckTheWriteBackBlamesTheExporter(String name, String status, String code,
                                                                    String detailEnd) {
        aRealNode();
        peer.stubFor(any(urlPathMatching("/v1/exports.*")).atPriority(5)
                .willReturn(aResponse().proxiedFrom(agent.baseUrl())));
        peer.stubFor(post(urlPathMatching("/v1/exports/.+/verify")).atPriority(1).willReturn(status.equals("timeout")
                ? okJson("{}").withFixedDelay(Integer.parseInt(SLOW_MS))
                : aResponse().withStatus(404).withHeader("Content-Type", "application/problem+json")
                        .withBody("{\"status\":404,\"detail\":\"no such export\"}")));

        JsonNode r = agent.get("/probe?target=" + target() + "&direction=pull").json().get("results").get(0);

        assertThat(r.get("verdict").asString()).as("%s", r).isEqualTo("fail");
        for (String ran : List.of("create", "export", "transfer", "import", "reserve", "map", "access", "verify")) {
            assertThat(text(stage(r, ran), "status")).as("%s: %s", ran, r).isEqualTo("ok");
        }
        JsonNode writeback = stage(r, "writeback");
        assertThat(text(writeback, "status")).as("%s", r).isEqualTo(status);
        assertThat(text(writeback, "detail"))
                .startsWith("importer wrote; exporter: the exporter could not be asked to check the write-back: ")
                .endsWith(detailEnd);
        JsonNode finding = r.get("finding");
        assertThat(text(finding, "code")).as("%s", r).isEqualTo(code);
        assertThat(text(finding, "blame")).as("the exporter's side").isEqualTo("source");
        assertThat(text(finding.get("evidence"), "stage")).isEqualTo("writeback");
        assertThat(text(finding.get("evidence"), "peer")).isEqualTo(target());
        assertThat(text(stage(r, "release"), "status")).as("released through the stand-in").isEqualTo("ok");
    }

    @Test
    void aProbeBeyondTheConcurrencyLimitIs429WithRetryAfter() throws Exception {
        // The one slot (IMEXPROBE_PROBE_CONCURRENCY=1) is held by a probe waiting on a slow peer.
        stub(get("/v1/node"), okJson(peerNode).withFixedDelay(Integer.parseInt(SLOW_MS)));
        CompletableFuture<AgentProcess.Reply> first = CompletableFuture.supplyAsync(() ->
                agent.get("/probe?target=" + target()));
        await().atMost(Duration.ofSeconds(30)).until(() -> !peer.findAll(getRequestedFor(urlPathEqualTo("/v1/node")))
                .isEmpty());
        AgentProcess.Reply second = agent.get("/probe?target=" + target());
        assertThat(second.status()).isEqualTo(429);
        assertThat(second.header("Retry-After")).contains("7");
        assertThat(second.contentType()).startsWith("application/problem+json");
        JsonNode problem = second.json();
        assertThat(text(problem, "type")).isEqualTo("urn:imexprobe:problem:busy");
        assertThat(text(problem, "detail")).isEqualTo("this agent is already running its maximum of concurrent "
                + "probes (imexprobe.probe.concurrency); retry after 7 s");
        assertThat(first.get().status()).isEqualTo(200);
        assertThat(agent.get("/probe?target=" + target()).status()).as("the slot is free again").isEqualTo(200);
    }

    // ---- documents a peer might send ---------------------------------------------------------------------------

    private static String okStage(String name) {
        return "{\"name\":\"" + name + "\",\"status\":\"ok\",\"cuResult\":0,\"cuResultName\":\"CUDA_SUCCESS\","
                + "\"durationSeconds\":0.0001,\"detail\":\"ok\"}";
    }

    private static String importReply(boolean pass) {
        StringBuilder stages = new StringBuilder();
        for (String s : List.of("import", "reserve", "map", "access", "verify", "writeback", "release")) {
            stages.append(stages.isEmpty() ? "" : ",").append(okStage(s));
        }
        return importReplyWith("[" + stages + "]").replace("\"verdict\":\"pass\"",
                "\"verdict\":\"" + (pass ? "pass" : "fail") + "\"");
    }

    /** A complete import answer but for its stages (null: none at all). */
    private static String importReplyWith(String stages) {
        return "{\"verdict\":\"pass\",\"durationSeconds\":0.01,\"node\":\"node-wiremock\","
                + "\"agentId\":\"feedfacefeedface\",\"gpu\":0,\"gpuUuid\":\"" + peerGpu + "\""
                + (stages != null ? ",\"stages\":" + stages : "") + "}";
    }

    private static String validHandle() {
        return java.util.Base64.getEncoder().encodeToString(new byte[64]);
    }

    private static String exportReply(String handle) {
        return exportReplyWithStages(handle, "[" + okStage("create") + "," + okStage("export") + "]");
    }

    private static String exportReplyWithStages(String handle, String stages) {
        return "{\"id\":\"peer-export-1\",\"handle\":\"" + handle + "\",\"handleType\":\"FABRIC\",\"sizeBytes\":2097152,"
                + "\"exporter\":{\"node\":\"node-wiremock\",\"agentId\":\"feedfacefeedface\",\"gpuUuid\":\"" + peerGpu
                + "\",\"gpuIndex\":0,\"cliqueId\":null,\"clusterUuid\":null},\"expiresAt\":\"2030-01-01T00:00:00Z\","
                + "\"verdict\":\"pass\",\"stages\":" + stages + "}";
    }
}
