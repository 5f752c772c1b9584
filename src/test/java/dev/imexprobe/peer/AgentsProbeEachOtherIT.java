package dev.imexprobe.peer;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import static dev.imexprobe.peer.ProbeJson.STAGES;
import static dev.imexprobe.peer.ProbeJson.firstFailure;
import static dev.imexprobe.peer.ProbeJson.names;
import static dev.imexprobe.peer.ProbeJson.stage;
import static dev.imexprobe.peer.ProbeJson.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two agents as separate processes on loopback, on one fake H200 host (both see its GPU; node names differ, as
 * for two nodes): a probe passes with every stage in both directions, and a fault injected at each stage is
 * reported with that stage, its CUresult and the finding. The agents are started once; faults are switched
 * through each agent's fault file, which the fake re-reads on every call. After every test neither agent
 * holds any driver resource and the fake's state directory is empty.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AgentsProbeEachOtherIT {

    private static final long GRANULARITY = 2L << 20;

    @TempDir
    static Path dir;

    static FakeMachine machine;
    /** Probes (GET /probe is always asked of A): exporter for push, importer for pull. */
    static AgentProcess a;
    /** The target: importer for push, exporter for pull. Sees its own channel folder. */
    static AgentProcess b;
    static Path channelsOfB;

    @BeforeAll
    static void startAgents() {
        machine = FakeMachine.h200(dir.resolve("machine"));
        channelsOfB = machine.channelView("b", 0);
        // Deadline of each driver call: a hang becomes TIMEOUT after 2 s (waited out by each hang case; a call
        // that does return takes < 1 ms on the fake, FaultCyclesIT holds 500 ms).
        Map<String, String> common = Map.of("IMEXPROBE_DRIVER_TIMEOUT", "2s");
        a = AgentProcess.start("a", dir, machine.env(), "node-a", common);
        b = AgentProcess.start("b", dir, machine.env(channelsOfB), "node-b", common);
        AgentProcess.awaitReady(a, b);
    }

    @AfterAll
    static void stopAgents() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    @AfterEach
    void nothingIsLeftBehind() {
        a.clearFaults();
        b.clearFaults();
        // A hung call returns once its fault is cleared and releases then: allow for that.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            assertThat(machine.stateFiles()).as("allocations of the fake host").isEmpty();
            assertThat(a.liveAllocations()).as("imexprobe_allocations_live of A").isZero();
            assertThat(b.liveAllocations()).as("imexprobe_allocations_live of B").isZero();
        });
    }

    private static JsonNode probe(String query) {
        AgentProcess.Reply r = a.get("/probe?target=" + b.hostPort() + query);
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        assertThat(r.contentType()).startsWith("application/json");
        return r.json();
    }

    // ---- everything works ------------------------------------------------------------------------------------

    @Test
    @Order(1)
    void probePassesWithEveryStageInBothDirectionsWithWriteback() {
        double passedBefore = AgentProcess.sample(a.get("/actuator/prometheus").body(), "imexprobe_probes_total",
                "verdict", "pass");
        JsonNode report = probe("");

        assertThat(report.get("verdict").asString()).isEqualTo("pass");
        assertThat(report.get("target").asString()).isEqualTo(b.hostPort());
        assertThat(report.get("targetNode").asString()).isEqualTo("node-b");
        assertThat(report.get("durationSeconds").asDouble()).isPositive();
        JsonNode results = report.get("results");
        assertThat(results).hasSize(2);
        String gpuA = a.get("/v1/node").json().get("gpus").get(0).get("uuid").asString();
        String gpuB = b.get("/v1/node").json().get("gpus").get(0).get("uuid").asString();

        JsonNode push = results.get(0);
        assertThat(push.get("direction").asString()).isEqualTo("push");
        assertThat(push.get("sourceNode").asString()).isEqualTo("node-a");
        assertThat(push.get("targetNode").asString()).isEqualTo("node-b");
        assertThat(push.get("sourceGpu").asString()).isEqualTo(gpuA);
        assertThat(push.get("targetGpu").asString()).isEqualTo(gpuB);
        JsonNode pull = results.get(1);
        assertThat(pull.get("direction").asString()).isEqualTo("pull");
        assertThat(pull.get("sourceNode").asString()).as("source is the exporter: B on pull").isEqualTo("node-b");
        assertThat(pull.get("targetNode").asString()).isEqualTo("node-a");

        for (JsonNode r : results) {
            assertThat(r.get("verdict").asString()).isEqualTo("pass");
            assertThat(r.has("finding")).as("no finding on a pass: %s", r).isFalse();
            assertThat(names(r)).isEqualTo(STAGES);
            for (JsonNode s : r.get("stages")) {
                String name = s.get("name").asString();
                assertThat(s.get("status").asString()).as("%s in %s", name, r).isEqualTo("ok");
                assertThat(s.get("durationSeconds").asDouble()).as(name).isGreaterThanOrEqualTo(0);
                if (name.equals("transfer")) {
                    assertThat(s.has("cuResult")).as("transfer makes no driver call").isFalse();
                    assertThat(s.has("cuResultName")).isFalse();
                } else {
                    assertThat(s.get("cuResult").asInt()).as(name).isZero();
                    assertThat(s.get("cuResultName").asString()).as(name).isEqualTo("CUDA_SUCCESS");
                }
            }
            assertThat(text(stage(r, "verify"), "detail")).matches("read back 2 MiB \\(compared on the GPU by the compare "
                    + "kernel\\), and 64 KiB at byte \\d+ by a copy engine \\(cuMemcpyDtoHAsync, beside the kernel\\): "
                    + "pattern matches");
            assertThat(text(stage(r, "writeback"), "detail"))
                    .isEqualTo("importer wrote; exporter: the exporter sees the importer's write-back pattern");
            assertThat(text(stage(r, "release"), "detail"))
                    .isEqualTo("importer: released 2 driver resources; exporter: released 2 driver resources");
        }
        assertThat(text(stage(push, "transfer"), "detail")).isEqualTo("handle sent to node-b (200)");
        assertThat(text(stage(pull, "transfer"), "detail")).isEqualTo("handle received from node-b (201)");

        double passedAfter = AgentProcess.sample(a.get("/actuator/prometheus").body(), "imexprobe_probes_total",
                "verdict", "pass");
        assertThat(passedAfter - (Double.isNaN(passedBefore) ? 0 : passedBefore)).isEqualTo(2.0);
    }

    @Test
    @Order(1)
    void writebackOffSkipsItAndSaysSo() {
        JsonNode r = probe("&direction=push&writeback=false").get("results").get(0);
        assertThat(r.get("verdict").asString()).isEqualTo("pass");
        JsonNode wb = stage(r, "writeback");
        assertThat(wb.get("status").asString()).isEqualTo("skipped");
        assertThat(text(wb, "detail")).isEqualTo("write-back not requested");
        assertThat(wb.has("cuResult")).isFalse();
        assertThat(stage(r, "verify").get("status").asString()).isEqualTo("ok");
    }

    @Test
    @Order(1)
    void blackboxFormatAndDebugExplainTheSameProbe() {
        // with blackbox_exporter's module, as a Prometheus job copied from its config sends it: accepted, ignored
        AgentProcess.Reply text = a.get("/probe?target=" + b.hostPort() + "&format=prometheus&module=http_2xx");
        assertThat(text.status()).isEqualTo(200);
        assertThat(text.contentType()).startsWith("text/plain");
        String body = text.body();
        assertThat(body).contains("\nprobe_success 1.0\n").contains("# TYPE probe_duration_seconds gauge\n");
        for (String direction : List.of("push", "pull")) {
            for (String s : STAGES) {
                // The client library's writer sorts label names: direction, source_gpu, stage, target_gpu.
                String series = "\\{direction=\"" + direction + "\",source_gpu=\"GPU-[^\"]+\",stage=\"" + s
                        + "\",target_gpu=\"GPU-[^\"]+\"} ";
                assertThat(body).containsPattern("\nprobe_stage_duration_seconds" + series + "[0-9.E-]+\n");
                if (s.equals("transfer")) {
                    assertThat(body).doesNotContainPattern("\nprobe_stage_cu_result" + series);
                } else {
                    assertThat(body).containsPattern("\nprobe_stage_cu_result" + series + "0\\.0\n");
                }
            }
        }

        JsonNode debug = probe("&direction=push&debug=true").get("results").get(0).get("debug");
        assertThat(debug).isNotNull();
        List<String> lines = debug.valueStream().map(JsonNode::asString).toList();
        assertThat(lines.getFirst()).startsWith("exported 2097152 bytes on local GPU 0: ok");
        assertThat(lines.get(1)).startsWith("POST /v1/imports on " + b.hostPort() + ": HTTP 200 in ");
        assertThat(lines).anyMatch(l -> l.startsWith("verify (read back through the imported mapping and compare "
                + "with the exporter's pattern): ok CUDA_SUCCESS, read back 2 MiB (compared on the GPU by the compare kernel), "
                + "and 64 KiB at byte ") && l.endsWith(" by a copy engine (cuMemcpyDtoHAsync, beside the kernel): pattern "
                + "matches"));
        assertThat(probe("&direction=push").get("results").get(0).has("debug")).as("debug only when asked").isFalse();
    }

    // ---- one fault per stage ---------------------------------------------------------------------------------

    enum Side { EXPORTER, IMPORTER }

    /**
     * A fault at one entry point of one side, and what the probe must report: the first failing stage, its
     * status and CUresult (none for a timeout), the finding and whom it blames.
     */
    record FaultCase(String direction, Side side, String fault, String stage, String status, Integer cuResult,
                     String cuResultName, String finding, String blame) {

        AgentProcess agent() {
            boolean exporterIsA = direction.equals("push");
            return (side == Side.EXPORTER) == exporterIsA ? a : b;
        }

        @Override
        public String toString() {
            return direction + ": " + side.name().toLowerCase() + " " + fault + " -> " + stage + " " + finding;
        }
    }

    static Stream<FaultCase> faults() {
        Side ex = Side.EXPORTER;
        Side im = Side.IMPORTER;
        return Stream.of(
                // the exporter's stages
                new FaultCase("push", ex, "cuMemCreate=800", "create", "failed", 800, "CUDA_ERROR_NOT_PERMITTED",
                        "CREATE_NOT_PERMITTED", "source"),
                new FaultCase("push", ex, "cuMemCreate=2", "create", "failed", 2, "CUDA_ERROR_OUT_OF_MEMORY",
                        "DRIVER_ERROR", "source"),
                new FaultCase("push", ex, "cuMemExportToShareableHandle=1", "export", "failed", 1,
                        "CUDA_ERROR_INVALID_VALUE", "DRIVER_ERROR", "source"),
                new FaultCase("push", ex, "cuMemExportToShareableHandle=hang", "export", "timeout", null, null,
                        "TIMEOUT", "source"),
                // the importer's stages
                new FaultCase("push", im, "cuMemImportFromShareableHandle=800", "import", "failed", 800,
                        "CUDA_ERROR_NOT_PERMITTED", "IMPORT_NOT_PERMITTED", "target"),
                new FaultCase("push", im, "cuMemImportFromShareableHandle=801", "import", "failed", 801,
                        "CUDA_ERROR_NOT_SUPPORTED", "HANDLE_REJECTED", "source"),
                new FaultCase("push", im, "cuMemImportFromShareableHandle=400", "import", "failed", 400,
                        "CUDA_ERROR_INVALID_HANDLE", "HANDLE_REJECTED", "source"),
                new FaultCase("push", im, "cuMemImportFromShareableHandle=401", "import", "failed", 401,
                        "CUDA_ERROR_ILLEGAL_STATE", "CONTEXT_POISONED", "target"),
                // 101 between two nodes (node names differ) is not the same-node seed case (SeedModelIT)
                new FaultCase("push", im, "cuMemImportFromShareableHandle=101", "import", "failed", 101,
                        "CUDA_ERROR_INVALID_DEVICE", "INVALID_DEVICE", "target"),
                new FaultCase("push", im, "cuMemAddressReserve=2", "reserve", "failed", 2, "CUDA_ERROR_OUT_OF_MEMORY",
                        "MAP_FAILED", "target"),
                new FaultCase("push", im, "cuMemMap=1", "map", "failed", 1, "CUDA_ERROR_INVALID_VALUE", "MAP_FAILED",
                        "target"),
                new FaultCase("push", im, "cuMemMap=hang", "map", "timeout", null, null, "TIMEOUT", "target"),
                new FaultCase("push", im, "cuMemSetAccess=1", "access", "failed", 1, "CUDA_ERROR_INVALID_VALUE",
                        "ACCESS_DENIED", "target"),
                new FaultCase("push", im, "imexprobe_pattern_compare=401", "verify", "failed", 401, "CUDA_ERROR_ILLEGAL_STATE",
                        "CONTEXT_POISONED", "target"),
                new FaultCase("push", im, "imexprobe_pattern_compare=700", "verify", "failed", 700, "CUDA_ERROR_ILLEGAL_ADDRESS",
                        "DRIVER_ERROR", "target"),
                new FaultCase("push", im, "imexprobe_pattern_fill=999", "writeback", "failed", 999, "CUDA_ERROR_UNKNOWN",
                        "DRIVER_ERROR", "target"),
                // the exporter's half of write-back: its read of what the importer wrote
                new FaultCase("push", ex, "imexprobe_pattern_compare=700", "writeback", "failed", 700, "CUDA_ERROR_ILLEGAL_ADDRESS",
                        "DRIVER_ERROR", "target"),
                // pull: B exports, A imports
                new FaultCase("pull", ex, "cuMemCreate=800", "create", "failed", 800, "CUDA_ERROR_NOT_PERMITTED",
                        "CREATE_NOT_PERMITTED", "source"),
                new FaultCase("pull", im, "cuMemImportFromShareableHandle=800", "import", "failed", 800,
                        "CUDA_ERROR_NOT_PERMITTED", "IMPORT_NOT_PERMITTED", "target"),
                new FaultCase("pull", im, "cuMemSetAccess=1", "access", "failed", 1, "CUDA_ERROR_INVALID_VALUE",
                        "ACCESS_DENIED", "target"),
                new FaultCase("pull", im, "imexprobe_pattern_fill=999", "writeback", "failed", 999, "CUDA_ERROR_UNKNOWN",
                        "DRIVER_ERROR", "target"),
                new FaultCase("pull", ex, "imexprobe_pattern_compare=700", "writeback", "failed", 700, "CUDA_ERROR_ILLEGAL_ADDRESS",
                        "DRIVER_ERROR", "target"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("faults")
    @Order(2)
    void aFaultAtEachStageIsReportedWithThatStageItsResultAndTheFinding(FaultCase c) {
        c.agent().faults(c.fault());
        String metricResult = c.cuResultName() != null ? c.cuResultName() : "none";
        double countedBefore = stageCount(c.stage(), metricResult);

        JsonNode report = probe("&direction=" + c.direction());

        assertThat(report.get("verdict").asString()).isEqualTo("fail");
        JsonNode r = report.get("results").get(0);
        assertThat(r.get("direction").asString()).isEqualTo(c.direction());
        assertThat(r.get("sourceNode").asString()).isEqualTo(c.direction().equals("push") ? "node-a" : "node-b");
        assertThat(r.get("targetNode").asString()).isEqualTo(c.direction().equals("push") ? "node-b" : "node-a");
        assertThat(r.get("verdict").asString()).isEqualTo("fail");
        assertThat(names(r)).isEqualTo(STAGES);

        JsonNode failed = firstFailure(r);
        assertThat(failed).as("a failed stage in %s", r).isNotNull();
        assertThat(text(failed, "name")).as("%s", r).isEqualTo(c.stage());
        assertThat(text(failed, "status")).isEqualTo(c.status());
        if (c.cuResult() == null) {
            assertThat(failed.has("cuResult")).as("a call that never returned has no CUresult: %s", failed).isFalse();
            assertThat(failed.has("cuResultName")).isFalse();
            assertThat(text(failed, "detail")).startsWith("no answer from the driver within 2000 ms");
        } else {
            assertThat(failed.get("cuResult").asInt()).isEqualTo(c.cuResult());
            assertThat(text(failed, "cuResultName")).isEqualTo(c.cuResultName());
        }

        int at = STAGES.indexOf(c.stage());
        for (JsonNode s : r.get("stages")) {
            int i = STAGES.indexOf(text(s, "name"));
            if (i < at) {
                assertThat(text(s, "status")).as("%s before the failure", text(s, "name")).isEqualTo("ok");
            } else if (i > at && i < STAGES.indexOf("release")) {
                assertThat(text(s, "status")).as("%s after the failure", text(s, "name")).isEqualTo("skipped");
                assertThat(s.has("cuResult")).isFalse();
            }
        }

        JsonNode finding = r.get("finding");
        assertThat(finding).as("finding of %s", r).isNotNull();
        assertThat(text(finding, "code")).isEqualTo(c.finding());
        assertThat(text(finding, "severity")).isEqualTo("error");
        assertThat(text(finding, "blame")).isEqualTo(c.blame());
        JsonNode evidence = finding.get("evidence");
        assertThat(text(evidence, "stage")).isEqualTo(c.stage());
        assertThat(evidence.get("sameNode").asBoolean()).isFalse();
        if (c.cuResult() != null) {
            assertThat(evidence.get("driverResultCode").asInt()).isEqualTo(c.cuResult());
            assertThat(text(evidence, "driverResult")).isEqualTo(c.cuResultName());
        }
        assertThat(stageCount(c.stage(), metricResult) - countedBefore)
                .as("imexprobe_stage_results_total{stage=%s,cu_result=%s} on A", c.stage(), metricResult)
                .isEqualTo(1.0);
    }

    private static double stageCount(String stage, String cuResult) {
        double v = a.metric("imexprobe_stage_results_total", "stage", stage, "cu_result", cuResult);
        return Double.isNaN(v) ? 0 : v;
    }

    // ---- what a fault injection cannot show ------------------------------------------------------------------

    @Test
    @Order(3)
    void memoryThatChangedOnTheWayIsAPatternMismatch() throws Exception {
        // B's read-back waits until we let it go; meanwhile one byte of the exported memory is changed in the
        // fake's allocation file (a 64 KiB header, then the data, mapped MAP_SHARED by both agents).
        b.faults("imexprobe_pattern_compare=hang");
        CompletableFuture<AgentProcess.Reply> pending = CompletableFuture.supplyAsync(() ->
                a.get("/probe?target=" + b.hostPort() + "&direction=push"));
        Path file = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
                .until(() -> machine.stateFiles().stream().findFirst().orElse(null), f -> f != null);
        long dataStart = 64 * 1024;
        long corruptAt = dataStart + (1 << 20) + 43; // word at data byte 1048616
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            // The exporter writes its pattern right after cuMemCreate; the last word is written last.
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5)).until(() -> {
                ByteBuffer last = ByteBuffer.allocate(8);
                ch.read(last, dataStart + GRANULARITY - 8);
                return last.getLong(0) != 0;
            });
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, corruptAt);
            one.put(0, (byte) (one.get(0) ^ 0xFF));
            ch.write(one.rewind(), corruptAt);
        }
        b.clearFaults();

        AgentProcess.Reply reply = pending.get();
        assertThat(reply.status()).isEqualTo(200);
        JsonNode r = reply.json().get("results").get(0);
        assertThat(r.get("verdict").asString()).isEqualTo("fail");
        JsonNode verify = stage(r, "verify");
        assertThat(text(verify, "status")).isEqualTo("failed");
        assertThat(verify.get("cuResult").asInt()).as("the read itself succeeded").isZero();
        assertThat(text(verify, "detail")).isEqualTo("pattern mismatch at byte 1048616 of 2 MiB: the mapping does "
                + "not show the exporter's memory");
        assertThat(text(r.get("finding"), "code")).isEqualTo("PATTERN_MISMATCH");
        assertThat(text(r.get("finding"), "blame")).isEqualTo("target");
        assertThat(text(stage(r, "writeback"), "status")).isEqualTo("skipped");
    }

    @Test
    @Order(3)
    void importerWithoutTheExportersChannelGets800() throws IOException {
        // As measured on the H200: exporter {0} -> importer {1} is 800. B's runtime now gives it channel1 only.
        Files.delete(channelsOfB.resolve("channel0"));
        Files.writeString(channelsOfB.resolve("channel1"), "");
        try {
            JsonNode report = probe("&direction=both");
            assertThat(report.get("verdict").asString()).isEqualTo("fail");
            for (JsonNode r : report.get("results")) {
                // push: A's export is bound to channel0, B lacks it; pull: B's is bound to channel1, A lacks it.
                JsonNode failed = firstFailure(r);
                assertThat(text(failed, "name")).as("%s", r).isEqualTo("import");
                assertThat(failed.get("cuResult").asInt()).isEqualTo(800);
                assertThat(text(failed, "cuResultName")).isEqualTo("CUDA_ERROR_NOT_PERMITTED");
                assertThat(text(r.get("finding"), "code")).isEqualTo("IMPORT_NOT_PERMITTED");
                assertThat(text(r.get("finding"), "blame")).isEqualTo("target");
                assertThat(text(stage(r, "create"), "status")).isEqualTo("ok");
            }
        } finally {
            Files.delete(channelsOfB.resolve("channel1"));
            Files.writeString(channelsOfB.resolve("channel0"), "");
        }
        assertThat(probe("&direction=both").get("verdict").asString()).as("channel0 back: passes again")
                .isEqualTo("pass");
    }

    @Test
    @Order(3)
    void aTargetWhereNoAgentListensIsPeerUnreachable() {
        String nobody = "127.0.0.1:" + AgentProcess.freePort();
        AgentProcess.Reply reply = a.get("/probe?target=" + nobody);
        assertThat(reply.status()).isEqualTo(200);
        JsonNode report = reply.json();
        assertThat(report.get("verdict").asString()).isEqualTo("fail");
        assertThat(report.has("targetNode")).as("nobody answered who it is").isFalse();
        JsonNode r = report.get("results").get(0);
        JsonNode transfer = stage(r, "transfer");
        assertThat(text(transfer, "status")).isEqualTo("failed");
        assertThat(text(transfer, "detail")).startsWith("cannot connect to " + nobody);
        assertThat(transfer.has("cuResult")).isFalse();
        assertThat(text(r.get("finding"), "code")).isEqualTo("PEER_UNREACHABLE");
        assertThat(text(r.get("finding").get("evidence"), "peer")).isEqualTo(nobody);
        assertThat(r.get("stages").valueStream().filter(s -> !text(s, "name").equals("transfer"))
                .map(s -> text(s, "status"))).containsOnly("skipped");
    }

    // ---- release ------------------------------------------------------------------------------------------

    @Test
    @Order(4)
    void aFailedReleaseKeepsThePassButIsReportedAsAWarning() {
        b.faults("cuMemRelease=1");
        JsonNode r = probe("&direction=push").get("results").get(0);
        assertThat(r.get("verdict").asString()).as("the exchange itself proved what it should").isEqualTo("pass");
        JsonNode release = stage(r, "release");
        assertThat(text(release, "status")).isEqualTo("failed");
        assertThat(release.get("cuResult").asInt()).isEqualTo(1);
        assertThat(text(release, "cuResultName")).isEqualTo("CUDA_ERROR_INVALID_VALUE");
        assertThat(text(release, "detail")).isEqualTo("importer: cuMemRelease of the imported handle returned "
                + "CUDA_ERROR_INVALID_VALUE; exporter: released 2 driver resources");
        assertThat(text(r.get("finding"), "code")).isEqualTo("RELEASE_FAILED");
        assertThat(text(r.get("finding"), "severity")).isEqualTo("warning");
    }

    /**
     * The importer sends its answer's head once it is done with the memory (write-back written, before its
     * release), and the exporter checks the write-back and releases while the importer releases and writes the
     * body. With each half made slow (the importer's cuMemRelease, the exporter's read-back, each by the same
     * random 300-500 ms), the push takes about one of them, not both.
     */
    @Test
    @Order(4)
    void theExportersCheckRunsWhileTheImporterReleasesAndAnswers() {
        int ms = 300 + new java.util.Random().nextInt(201);
        b.faults("cuMemRelease=delay:" + ms);
        a.faults("imexprobe_pattern_compare=delay:" + ms);
        JsonNode r = probe("&direction=push").get("results").get(0);

        assertThat(r.get("verdict").asString()).isEqualTo("pass");
        JsonNode wb = stage(r, "writeback");
        assertThat(text(wb, "status")).isEqualTo("ok");
        assertThat(text(wb, "detail")).isEqualTo("importer wrote; exporter: the exporter sees the importer's "
                + "write-back pattern");
        JsonNode release = stage(r, "release");
        assertThat(text(release, "status")).isEqualTo("ok");
        // Each stage took its delay: the check inside the write-back, the importer's release inside the release.
        double delay = ms / 1000.0;
        assertThat(wb.get("durationSeconds").asDouble()).as("write-back").isGreaterThanOrEqualTo(delay);
        assertThat(release.get("durationSeconds").asDouble()).as("release").isGreaterThanOrEqualTo(delay);
        // One after the other they would take 2 × delay; side by side, one delay and the rest of the exchange.
        assertThat(r.get("durationSeconds").asDouble()).as("the push, delay %d ms", ms)
                .isGreaterThanOrEqualTo(delay).isLessThan(1.6 * delay);
    }
}
