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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.imexprobe.peer.ProbeJson.firstFailure;
import static dev.imexprobe.peer.ProbeJson.stage;
import static dev.imexprobe.peer.ProbeJson.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The seed's failure, as the fake models it after two H200s (driver 580.159.04): two containers on one node, each
 * given only its own GPU's device node as a container runtime does, one IMEX channel; importing the other's memory
 * fails with 801. Both agents carry the node's name (as two pods on one Kubernetes node, the chart sets it from
 * spec.nodeName), so the finding can tell it is the same-node case. A third agent is limited to GPU 1 by
 * CUDA_VISIBLE_DEVICES alone, which on the H200s did not stop imports.
 */
class SeedModelIT {

    private static final String NODE = "gpu-node-7";

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess gpu0;
    static AgentProcess gpu1;
    static AgentProcess visibleOnly;
    /** Limited by CUDA_VISIBLE_DEVICES as visibleOnly, without NVML: it cannot tell which limit hides GPU 0. */
    static AgentProcess visibleNoNvml;

    @BeforeAll
    static void start() {
        machine = FakeMachine.twoGpus(dir.resolve("machine"));
        gpu0 = AgentProcess.start("gpu0", dir, machine.containerEnv(0), NODE, Map.of());
        gpu1 = AgentProcess.start("gpu1", dir, machine.containerEnv(1), NODE, Map.of());
        Map<String, String> env = machine.env();
        env.put("CUDA_VISIBLE_DEVICES", "1");
        visibleOnly = AgentProcess.start("visible1", dir, env, NODE, Map.of());
        Map<String, String> noNvml = machine.env();
        noNvml.put("CUDA_VISIBLE_DEVICES", "1");
        noNvml.put("IMEXPROBE_NVML_LIBRARY", dir.resolve("no-nvml/libnvidia-ml.so.1").toString());
        visibleNoNvml = AgentProcess.start("visible1-no-nvml", dir, noNvml, NODE, Map.of());
        AgentProcess.awaitReady(gpu0, gpu1, visibleOnly, visibleNoNvml);
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(gpu0, gpu1, visibleOnly, visibleNoNvml);
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
    void importingFromTheOtherContainersGpuIs801AndTheSameNodeFindingBlamesTheImporter() {
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
            assertThat(failed.get("cuResult").asInt()).as("as on two H200s").isEqualTo(801);
            assertThat(text(failed, "cuResultName")).isEqualTo("CUDA_ERROR_NOT_SUPPORTED");
            assertThat(text(stage(r, "create"), "status")).isEqualTo("ok");
            assertThat(text(stage(r, "export"), "status")).isEqualTo("ok");
            assertThat(text(stage(r, "transfer"), "status")).isEqualTo("ok");

            JsonNode finding = r.get("finding");
            assertThat(text(finding, "code")).isEqualTo("SAME_NODE_EXPORTER_GPU_HIDDEN");
            assertThat(text(finding, "severity")).isEqualTo("error");
            assertThat(text(finding, "blame")).as("not the exporter, though 801 alone reads as a bad handle")
                    .isEqualTo("target");
            String exporterGpu = push ? uuid0 : uuid1;
            assertThat(text(finding, "cause")).contains("with the exporter on the same node (" + NODE + ")")
                    .contains("its GPU (" + exporterGpu + ")");
            assertThat(text(finding, "remedy")).contains("exporter GPU's /dev/nvidiaN").contains("imexprobe ladder");
            assertThat(finding.get("evidence").get("sameNode").asBoolean()).isTrue();
            assertThat(finding.get("evidence").get("exporterGpuSeen").asBoolean()).isFalse();
            assertThat(text(finding.get("evidence"), "exporterGpu")).isEqualTo(exporterGpu);
            assertThat(finding.get("evidence").get("driverResultCode").asInt()).isEqualTo(801);
        }
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(machine.stateFiles()).isEmpty();
            assertThat(gpu0.liveAllocations()).isZero();
            assertThat(gpu1.liveAllocations()).isZero();
        });
    }

    @Test
    void cudaVisibleDevicesAloneDoesNotStopTheImportButTheHiddenDeviceNodeStillDoes() {
        String uuid1 = gpu1.get("/v1/node").json().get("gpus").get(0).get("uuid").asString();
        assertThat(visibleOnly.get("/v1/node").json().get("gpus").get(0).get("uuid").asString()).isEqualTo(uuid1);
        // gpu0 exports, the agent limited by CUDA_VISIBLE_DEVICES alone imports on GPU 1: works.
        JsonNode push = gpu0.get("/probe?target=" + visibleOnly.hostPort() + "&direction=push").json();
        assertThat(push.get("verdict").asString()).as("%s", push).isEqualTo("pass");
        // The other way, gpu0's container lacks GPU 1's device node: the seed failure, and only that.
        JsonNode pull = gpu0.get("/probe?target=" + visibleOnly.hostPort() + "&direction=pull").json();
        JsonNode r = pull.get("results").get(0);
        assertThat(text(r, "direction")).isEqualTo("pull");
        assertThat(text(r.get("finding"), "code")).as("%s", r).isEqualTo("SAME_NODE_EXPORTER_GPU_HIDDEN");
        assertThat(text(r.get("finding").get("evidence"), "exporterGpu")).isEqualTo(uuid1);
    }

    @Test
    void nvmlReachesAGpuThatCudaVisibleDevicesHidesButNotOneWhoseDeviceNodeIsHidden() {
        String uuid0 = gpu0.get("/v1/node").json().get("gpus").get(0).get("uuid").asString();
        String uuid1 = gpu1.get("/v1/node").json().get("gpus").get(0).get("uuid").asString();
        assertThat(nvmlGpus(visibleOnly)).as("NVML ignores CUDA_VISIBLE_DEVICES").containsExactly(uuid0, uuid1);
        assertThat(nvmlGpus(gpu1)).as("but not a hidden device node").containsExactly(uuid1);
        assertThat(nvmlGpus(gpu0)).containsExactly(uuid0);
    }

    @Test
    void an801IntoAnAgentThatHasTheExportersDeviceNodeIsNotBlamedOnAHiddenGpu() {
        // CUDA_VISIBLE_DEVICES hides GPU 0 from visibleOnly's CUDA, but its device node is there (NVML reaches
        // it): an 801 at import has another cause, so the finding must not send the user to the device nodes.
        JsonNode evidence = injected801Into(visibleOnly);
        assertThat(evidence.get("exporterGpuSeen").asBoolean()).as("%s", evidence).isTrue();
    }

    @Test
    void withoutNvmlAnAgentLimitedByCudaVisibleDevicesCannotTellAndIts801IsNotBlamedOnAHiddenGpu() {
        JsonNode driver = visibleNoNvml.get("/v1/node").json().get("driver");
        assertThat(driver.get("nvmlLoaded").asBoolean()).as("%s", driver).isFalse();
        assertThat(driver.path("nvmlGpus").isNull() || driver.path("nvmlGpus").isMissingNode()).as("%s", driver)
                .isTrue();
        // Its CUDA lacks GPU 0, but CUDA_VISIBLE_DEVICES could be what hides it, and without NVML nothing says
        // whether the device node is there: an 801 keeps its ordinary finding, and the evidence says nothing.
        JsonNode evidence = injected801Into(visibleNoNvml);
        assertThat(evidence.has("exporterGpuSeen")).as("%s", evidence).isFalse();
    }

    /**
     * gpu0 pushes into {@code importer} with an 801 injected at its import: the ordinary HANDLE_REJECTED of a same-node
     * pair, never the seed finding; once cleared the push passes (the device node is there, as on the H200s).
     * The finding's evidence.
     */
    private static JsonNode injected801Into(AgentProcess importer) {
        JsonNode evidence;
        importer.faults("cuMemImportFromShareableHandle=801");
        try {
            JsonNode r = gpu0.get("/probe?target=" + importer.hostPort() + "&direction=push").json()
                    .get("results").get(0);
            assertThat(firstFailure(r).get("cuResult").asInt()).as("%s", r).isEqualTo(801);
            JsonNode finding = r.get("finding");
            assertThat(text(finding, "code")).as("%s", r).isEqualTo("HANDLE_REJECTED");
            evidence = finding.get("evidence");
            assertThat(evidence.get("sameNode").asBoolean()).isTrue();
        } finally {
            importer.clearFaults();
        }
        assertThat(gpu0.get("/probe?target=" + importer.hostPort() + "&direction=push").json().get("verdict")
                .asString()).as("the fault cleared").isEqualTo("pass");
        return evidence;
    }

    private static List<String> nvmlGpus(AgentProcess agent) {
        List<String> uuids = new ArrayList<>();
        agent.get("/v1/node").json().get("driver").get("nvmlGpus").forEach(u -> uuids.add(u.asString()));
        return uuids;
    }

    @Test
    void eachAgentCanImportWhatItExportsItself() {
        // The control: the channel and the GPUs work; only crossing between the two containers fails. By hand,
        // since /probe refuses a target that is the agent itself: that pass is what this control shows, and it says
        // nothing about the pair between the containers.
        for (AgentProcess agent : new AgentProcess[] {gpu0, gpu1}) {
            AgentProcess.Reply imported = agent.exchangeInItself(new java.util.Random().nextLong());
            assertThat(imported.json().get("verdict").asString()).as("%s", imported).isEqualTo("pass");
            assertThat(stage(imported.json(), "verify").get("status").asString()).isEqualTo("ok");
            AgentProcess.Reply self = agent.get("/probe?target=" + agent.hostPort() + "&direction=push");
            assertThat(self.status()).as("%s", self).isEqualTo(400);
            assertThat(self.json().get("detail").asString()).contains("is this agent itself");
        }
    }
}
