package dev.imexprobe.cuda;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Compute modes, MIG and GPUs without FABRIC handles through the real shim, NVML and real processes: on a fake host
 * whose five GPUs are, in a random order, EXCLUSIVE_PROCESS (E), PROHIBITED (P), MIG on (G), DEFAULT (D) and DEFAULT
 * but HANDLE_TYPE_FABRIC_SUPPORTED=0 (F), the agent creates a context on D only (the fake's context log says so),
 * reports one finding per other GPU (info for the modes, error for F: fabric memory cannot work there), and its
 * pairs from them are not_probed, in the mesh and on demand, on both sides; /v1/exports and /v1/imports on them
 * answer with the finding.
 * With imexprobe.driver.probe-exclusive-process=true an agent probes from E; a second such agent is then refused by
 * the driver (46) while the first holds E's one context, which is why the default is to stay off.
 */
class ComputeModeIT {

    @TempDir
    static Path dir;

    static int e;
    static int p;
    static int g;
    static int d;
    static int f;
    static AgentProcess a;      // sees all five GPUs, probes b every second
    static AgentProcess b;      // sees only D
    static AgentProcess optIn;  // all five, opt-in, holds a context long after a probe
    static AgentProcess second; // all five, opt-in

    @BeforeAll
    static void start() {
        List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3, 4));
        Collections.shuffle(order);
        e = order.get(0);
        p = order.get(1);
        g = order.get(2);
        d = order.get(3);
        f = order.get(4);
        FakeMachine machine = FakeMachine.h200(dir.resolve("machine")).gpus(5)
                .config("gpu." + f + ".handle_type_fabric", "0")
                .config("gpu." + e + ".compute_mode", "3")
                .config("gpu." + p + ".compute_mode", "2")
                .config("gpu." + g + ".mig", "1");
        Map<String, String> env = machine.env();
        b = AgentProcess.start("b", dir.resolve("b"), env, "node-b", Map.of("CUDA_VISIBLE_DEVICES",
                Integer.toString(d), "FAKECUDA_CONTEXT_LOG", dir.resolve("b-contexts.log").toString())).awaitReady();
        a = AgentProcess.start("a", dir.resolve("a"), env, "node-a", Map.of("IMEXPROBE_MESH_INTERVAL", "1s",
                "IMEXPROBE_PEERS_STATIC", b.hostPort(),
                "FAKECUDA_CONTEXT_LOG", dir.resolve("a-contexts.log").toString()));
        optIn = AgentProcess.start("opt-in", dir.resolve("opt-in"), env, "node-c", Map.of(
                "IMEXPROBE_DRIVER_PROBEEXCLUSIVEPROCESS", "true", "IMEXPROBE_DRIVER_CONTEXTLINGER", "10m",
                "FAKECUDA_CONTEXT_LOG", dir.resolve("opt-in-contexts.log").toString()));
        second = AgentProcess.start("second", dir.resolve("second"), env, "node-d", Map.of(
                "IMEXPROBE_DRIVER_PROBEEXCLUSIVEPROCESS", "true"));
        AgentProcess.awaitReady(a, optIn, second);
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(a, b, optIn, second);
    }

    /** The GPUs the fake made a context on for {@code agent} ("create N"). */
    private static List<String> created(String agent) {
        return FakeMachine.contextsCreated(dir.resolve(agent + "-contexts.log"));
    }

    private static String uuid(AgentProcess agent, int index) {
        return agent.gpuUuid(index);
    }

    private static JsonNode pair(AgentProcess agent, String sourceGpu, String targetGpu) {
        return agent.meshPair(sourceGpu, targetGpu);
    }

    @Test
    void theNodeReportsEachModeAndTheFindingThatKeepsTheAgentOff() {
        AgentProcess.Reply reply = a.get("/v1/node");
        assertThat(dev.imexprobe.web.DocumentedAnswer.problems("GET", "/v1/node", reply.status(), reply.contentType(),
                reply.body())).isEmpty();
        JsonNode node = reply.json();
        Map<Integer, JsonNode> gpus = new java.util.HashMap<>();
        node.get("gpus").forEach(x -> gpus.put(x.get("index").asInt(), x));
        assertThat(gpus).hasSize(5);
        assertThat(gpus.get(e).get("computeMode").asString()).isEqualTo("EXCLUSIVE_PROCESS");
        assertThat(gpus.get(e).get("notProbed").asString()).isEqualTo("COMPUTE_MODE_EXCLUSIVE_PROCESS");
        assertThat(gpus.get(p).get("computeMode").asString()).isEqualTo("PROHIBITED");
        assertThat(gpus.get(p).get("notProbed").asString()).isEqualTo("COMPUTE_MODE_PROHIBITED");
        assertThat(gpus.get(g).get("migEnabled").asBoolean()).isTrue();
        assertThat(gpus.get(g).get("notProbed").asString()).isEqualTo("MIG_ENABLED");
        assertThat(gpus.get(d).get("computeMode").asString()).isEqualTo("DEFAULT");
        assertThat(gpus.get(d).get("migEnabled").asBoolean()).isFalse();
        assertThat(gpus.get(d).get("notProbed").isNull()).isTrue();
        assertThat(gpus.get(f).get("attributes").get("fabric").asInt()).isZero();
        assertThat(gpus.get(f).get("computeMode").asString()).isEqualTo("DEFAULT");
        assertThat(gpus.get(f).get("notProbed").asString()).isEqualTo("FABRIC_UNSUPPORTED");
        List<String> codes = new ArrayList<>();
        node.get("findings").forEach(f -> {
            if (f.get("code").asString().startsWith("COMPUTE_MODE_") || f.get("code").asString().equals("MIG_ENABLED")) {
                codes.add(f.get("code").asString() + "@" + f.get("evidence").get("gpu").asInt());
                assertThat(f.get("severity").asString()).isEqualTo("info");
            }
        });
        assertThat(codes).containsExactlyInAnyOrder("COMPUTE_MODE_EXCLUSIVE_PROCESS@" + e,
                "COMPUTE_MODE_PROHIBITED@" + p, "MIG_ENABLED@" + g);
        // F cannot make fabric memory at all: an error of the node, reported once, and no alarm by design
        List<JsonNode> noFabric = new ArrayList<>();
        node.get("findings").forEach(x -> {
            if (x.get("code").asString().endsWith("_UNSUPPORTED")) {
                noFabric.add(x);
            }
        });
        assertThat(noFabric).as(node.get("findings").toString()).hasSize(1);
        assertThat(noFabric.getFirst().get("code").asString()).isEqualTo("FABRIC_UNSUPPORTED");
        assertThat(noFabric.getFirst().get("severity").asString()).isEqualTo("error");
        assertThat(noFabric.getFirst().get("evidence").get("gpu").asInt()).isEqualTo(f);
        assertThat(noFabric.getFirst().get("evidence").get("uuid").asString()).isEqualTo(uuid(a, f));
        assertThat(a.metric("imexprobe_gpus_visible")).isEqualTo(5.0);
        assertThat(a.metric("imexprobe_gpus_fabric_capable")).isEqualTo(4.0);
        assertThat(b.metric("imexprobe_gpus_fabric_capable")).isEqualTo(1.0);
        // the opt-in agent probes E, so it reports no finding for it
        assertThat(optIn.get("/v1/node").json().get("findings").toString())
                .doesNotContain("COMPUTE_MODE_EXCLUSIVE_PROCESS").contains("COMPUTE_MODE_PROHIBITED")
                .contains("FABRIC_UNSUPPORTED");
        assertThat(a.get("/actuator/health/readiness").status()).isEqualTo(200);
    }

    @Test
    void theMeshProbesOnlyTheDefaultGpuAndCreatesNoContextElsewhere() {
        String bD = uuid(b, 0);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonNode ok = pair(a, uuid(a, d), bD);
            assertThat(ok).isNotNull();
            assertThat(ok.path("state").asString()).as(ok.toString()).isEqualTo("ok");
        });
        Map<Integer, String> want = Map.of(e, "COMPUTE_MODE_EXCLUSIVE_PROCESS", p, "COMPUTE_MODE_PROHIBITED",
                g, "MIG_ENABLED", f, "FABRIC_UNSUPPORTED");
        for (Map.Entry<Integer, String> w : want.entrySet()) {
            JsonNode pair = pair(a, uuid(a, w.getKey()), bD);
            assertThat(pair).as("pair from GPU " + w.getKey()).isNotNull();
            assertThat(pair.path("state").asString()).as(pair.toString()).isEqualTo("not_probed");
            assertThat(pair.path("finding").path("code").asString()).isEqualTo(w.getValue());
            // the mesh's round and an on-demand probe name the same side: the refusing GPU is the exporter
            assertThat(pair.path("finding").path("blame").asString()).as(pair.toString()).isEqualTo("source");
        }
        // on demand, a's refused GPU is the exporter of a push: the pair's finding blames the source
        JsonNode push = a.get("/probe?target=" + b.hostPort() + "&gpu=" + f + "&direction=push").json();
        assertThat(push.at("/results/0/finding/blame").asString()).as(push.toString()).isEqualTo("source");
        // the fake made contexts on D only: never on E, P, G or F
        List<String> created = created("a");
        assertThat(created).containsExactly("create " + d);
        assertThat(a.metric("imexprobe_cuda_context_held", "gpu", Integer.toString(e))).isEqualTo(0.0);
    }

    @Test
    void onDemandTheTargetsGpuIsNotProbedEither() {
        for (Map.Entry<Integer, String> target : Map.of(e, "COMPUTE_MODE_EXCLUSIVE_PROCESS", f, "FABRIC_UNSUPPORTED")
                .entrySet()) {
            int gpu = target.getKey();
            JsonNode report = b.get("/probe?target=" + a.hostPort() + "&peerGpu=" + gpu + "&direction=both").json();
            assertThat(report.get("verdict").asString()).as(report.toString()).isEqualTo("not_probed");
            assertThat(report.get("results")).hasSize(2);
            for (JsonNode r : report.get("results")) {
                assertThat(r.get("verdict").asString()).isEqualTo("not_probed");
                assertThat(r.get("finding").get("code").asString()).isEqualTo(target.getValue());
                // a's GPU refused: the target of b's push, the source of its pull (a preflight blames that side)
                assertThat(r.get("finding").get("blame").asString()).as(r.toString())
                        .isEqualTo(r.get("direction").asString().equals("push") ? "target" : "source");
            }
            JsonNode pair = pair(b, uuid(b, 0), uuid(a, gpu));
            assertThat(pair.path("state").asString()).as(String.valueOf(pair)).isEqualTo("not_probed");
        }
        assertThat(created("a"))
                .doesNotContain("create " + e, "create " + f);
    }

    @Test
    void aSizeForEveryGpuIsCheckedOnlyWhereTheAgentProbes() {
        // F has no FABRIC granularity to check a size against: the probe answers with its finding, not a 400
        AgentProcess.Reply reply = a.get("/probe?target=" + b.hostPort() + "&direction=push&sizeBytes=" + (4L << 20));
        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
        Map<String, String> verdicts = new java.util.HashMap<>();
        Map<String, String> codes = new java.util.HashMap<>();
        for (JsonNode r : reply.json().get("results")) {
            verdicts.put(r.get("sourceGpu").asString(), r.get("verdict").asString());
            codes.put(r.get("sourceGpu").asString(), r.path("finding").path("code").asString(""));
        }
        assertThat(verdicts).as(reply.body()).containsEntry(uuid(a, d), "pass")
                .containsEntry(uuid(a, f), "not_probed").hasSize(5);
        assertThat(codes).containsEntry(uuid(a, f), "FABRIC_UNSUPPORTED");
        // a size that is no multiple of D's granularity is still the caller's mistake
        assertThat(a.get("/probe?target=" + b.hostPort() + "&sizeBytes=" + (3L << 20)).status()).isEqualTo(400);
    }

    @Test
    void exportAndImportOnARefusedGpuAnswerWithTheFinding() {
        AgentProcess.Reply export = a.post("/v1/exports", Map.of("gpu", p, "sizeBytes", 2L << 20));
        assertThat(export.status()).as(export.body()).isEqualTo(200);
        assertThat(export.json().get("verdict").asString()).isEqualTo("not_probed");
        assertThat(export.json().get("finding").get("code").asString()).isEqualTo("COMPUTE_MODE_PROHIBITED");
        assertThat(export.json().has("handle")).isFalse();
        AgentProcess.Reply fromD = a.post("/v1/exports", Map.of("gpu", d, "sizeBytes", 2L << 20));
        assertThat(fromD.status()).as(fromD.body()).isEqualTo(201);
        AgentProcess.Reply imp = a.post("/v1/imports", Map.of("gpu", g, "sizeBytes", 2L << 20, "handleType", "FABRIC",
                "handle", fromD.json().get("handle").asString()));
        assertThat(imp.status()).as(imp.body()).isEqualTo(200);
        assertThat(imp.json().get("verdict").asString()).isEqualTo("not_probed");
        assertThat(imp.json().get("finding").get("code").asString()).isEqualTo("MIG_ENABLED");
        AgentProcess.Reply intoF = a.post("/v1/imports", Map.of("gpu", f, "sizeBytes", 2L << 20, "handleType",
                "FABRIC", "handle", fromD.json().get("handle").asString()));
        assertThat(intoF.status()).as(intoF.body()).isEqualTo(200);
        assertThat(intoF.json().get("verdict").asString()).isEqualTo("not_probed");
        assertThat(intoF.json().get("finding").get("code").asString()).isEqualTo("FABRIC_UNSUPPORTED");
        AgentProcess.Reply fromF = a.post("/v1/exports", Map.of("gpu", f, "sizeBytes", 2L << 20));
        assertThat(fromF.status()).as(fromF.body()).isEqualTo(200);
        assertThat(fromF.json().get("finding").get("code").asString()).isEqualTo("FABRIC_UNSUPPORTED");
        a.delete("/v1/exports/" + fromD.json().get("id").asString());
        assertThat(created("a"))
                .containsOnly("create " + d);
    }

    @Test
    void withTheOptInExclusiveProcessIsProbedAndASecondProcessIsRefusedByTheDriver() {
        JsonNode first = optIn.get("/probe?target=" + b.hostPort() + "&gpu=" + e + "&direction=push").json();
        assertThat(first.get("verdict").asString()).as(first.toString()).isEqualTo("pass");
        assertThat(created("opt-in")).contains("create " + e);
        // optIn lingers on E's one context: the driver refuses another process's (CUDA_ERROR_DEVICE_UNAVAILABLE)
        assertThat(optIn.metric("imexprobe_cuda_context_held", "gpu", Integer.toString(e))).isEqualTo(1.0);
        JsonNode refused = second.get("/probe?target=" + b.hostPort() + "&gpu=" + e + "&direction=push").json();
        assertThat(refused.get("verdict").asString()).as(refused.toString()).isEqualTo("fail");
        JsonNode create = refused.get("results").get(0).get("stages").get(0);
        assertThat(create.get("name").asString()).isEqualTo("create");
        assertThat(create.get("cuResult").asInt()).as(create.toString()).isEqualTo(46);
        assertThat(create.get("cuResultName").asString()).isEqualTo("CUDA_ERROR_DEVICE_UNAVAILABLE");
    }
}
