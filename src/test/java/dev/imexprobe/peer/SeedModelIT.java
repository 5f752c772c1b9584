package dev.imexprobe.peer;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static dev.imexprobe.peer.ProbeJson.firstFailure;
import static dev.imexprobe.peer.ProbeJson.stage;
import static dev.imexprobe.peer.ProbeJson.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The seed's failure, as the fake models it: two containers on one node, each limited to a different GPU of
 * that node, one IMEX channel. Both agents carry the node's name (as two pods on one Kubernetes node, the chart
 * sets it from spec.nodeName), so the finding can tell it is the same-node case.
 */
class SeedModelIT {

    private static final String NODE = "gpu-node-7";

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess gpu0;
    static AgentProcess gpu1;

    @BeforeAll
    static void start() {
        machine = FakeMachine.twoGpuSeedModel(dir.resolve("machine"));
        gpu0 = AgentProcess.start("gpu0", dir, withVisible(machine.env(), "0"), NODE, Map.of());
        gpu1 = AgentProcess.start("gpu1", dir, withVisible(machine.env(), "1"), NODE, Map.of());
        AgentProcess.awaitReady(gpu0, gpu1);
    }

    private static Map<String, String> withVisible(Map<String, String> env, String devices) {
        Map<String, String> e = new HashMap<>(env);
        e.put("CUDA_VISIBLE_DEVICES", devices);
        return e;
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(gpu0, gpu1);
    }

    @Test
    void eachAgentSeesOneDifferentGpuOfTheSameNode() {
        JsonNode n0 = gpu0.get("/v1/node").json();
        JsonNode n1 = gpu1.get("/v1/node").json();
        assertThat(n0.get("gpus")).hasSize(1);
        assertThat(n1.get("gpus")).hasSize(1);
        assertThat(n0.get("gpus").get(0).get("index").asInt()).as("ordinals renumber the visible GPUs").isZero();
        assertThat(n1.get("gpus").get(0).get("index").asInt()).isZero();
        assertThat(n0.get("gpus").get(0).get("uuid").asString()).isNotEqualTo(n1.get("gpus").get(0).get("uuid").asString());
        assertThat(n0.get("agent").get("node").asString()).isEqualTo(NODE);
        assertThat(n1.get("agent").get("node").asString()).isEqualTo(NODE);
    }

    @Test
    void importingTheOtherContainersGpuIs101AndTheSameNodeFinding() {
        String uuid0 = gpu0.get("/v1/node").json().get("gpus").get(0).get("uuid").asString();
        String uuid1 = gpu1.get("/v1/node").json().get("gpus").get(0).get("uuid").asString();
        AgentProcess.Reply reply = gpu0.get("/probe?target=" + gpu1.hostPort());
        assertThat(reply.status()).isEqualTo(200);
        JsonNode report = reply.json();
        assertThat(report.get("verdict").asString()).isEqualTo("fail");
        assertThat(report.get("results")).hasSize(2);
        for (JsonNode r : report.get("results")) {
            boolean push = text(r, "direction").equals("push");
            assertThat(text(r, "sourceGpu")).isEqualTo(push ? uuid0 : uuid1);
            assertThat(text(r, "targetGpu")).isEqualTo(push ? uuid1 : uuid0);
            assertThat(text(r, "sourceNode")).isEqualTo(NODE);
            assertThat(text(r, "targetNode")).isEqualTo(NODE);

            JsonNode failed = firstFailure(r);
            assertThat(text(failed, "name")).as("%s", r).isEqualTo("import");
            assertThat(failed.get("cuResult").asInt()).isEqualTo(101);
            assertThat(text(failed, "cuResultName")).isEqualTo("CUDA_ERROR_INVALID_DEVICE");
            assertThat(text(stage(r, "create"), "status")).isEqualTo("ok");
            assertThat(text(stage(r, "export"), "status")).isEqualTo("ok");
            assertThat(text(stage(r, "transfer"), "status")).isEqualTo("ok");

            JsonNode finding = r.get("finding");
            assertThat(text(finding, "code")).isEqualTo("SAME_NODE_INVALID_DEVICE");
            assertThat(text(finding, "severity")).isEqualTo("error");
            assertThat(text(finding, "blame")).isEqualTo("target");
            assertThat(text(finding, "cause")).contains("with the exporter on the same node (" + NODE + ")");
            assertThat(text(finding, "remedy")).contains("run exporter and importer in one pod")
                    .contains("imexprobe ladder");
            assertThat(finding.get("evidence").get("sameNode").asBoolean()).isTrue();
            assertThat(finding.get("evidence").get("driverResultCode").asInt()).isEqualTo(101);
        }
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(machine.stateFiles()).isEmpty();
            assertThat(gpu0.liveAllocations()).isZero();
            assertThat(gpu1.liveAllocations()).isZero();
        });
    }

    @Test
    void eachAgentCanImportWhatItExportsItself() {
        // The control: the channel and the GPUs work; only crossing between the two containers fails.
        for (AgentProcess agent : new AgentProcess[] {gpu0, gpu1}) {
            AgentProcess.Reply reply = agent.get("/probe?target=" + agent.hostPort() + "&direction=push");
            assertThat(reply.status()).isEqualTo(200);
            assertThat(reply.json().get("verdict").asString()).as("%s", reply).isEqualTo("pass");
        }
    }
}
