package dev.imexprobe.cuda;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A GPU a job has filled to less than the probe's 2 MiB, with the memory headroom turned off
 * (IMEXPROBE_DRIVER_MINFREEMEMORY=0), or filled between the node report's reading and the probe: the exporter's
 * cuMemCreate returns 2 (as on an H100 beside such a job; the context is still retained). That pair is not probed
 * (GPU_OUT_OF_MEMORY, info, blamed on the full GPU's side), never failed, and the next allocation is not leaked.
 * Agent x has GPU 0 (empty); agent f has GPU 1, where a job left 0 or 1 MiB (drawn).
 */
class FullGpuIT {

    @TempDir
    static Path dir;

    static AgentProcess x;
    static AgentProcess f;

    @BeforeAll
    static void start() {
        long left = ThreadLocalRandom.current().nextInt(2);
        FakeMachine machine = FakeMachine.h200(dir.resolve("machine")).gpus(2)
                .config("gpu.1.memory_used_mib", Long.toString(143771 - left));
        Map<String, String> env = machine.env();
        env.put("IMEXPROBE_MESH_INTERVAL", "1h");
        x = AgentProcess.start("x", dir.resolve("x"), env, "node-x", Map.of("CUDA_VISIBLE_DEVICES", "0"));
        f = AgentProcess.start("f", dir.resolve("f"), env, "node-f", Map.of("CUDA_VISIBLE_DEVICES", "1",
                "IMEXPROBE_DRIVER_MINFREEMEMORY", "0"));
        AgentProcess.awaitReady(x, f);
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(x, f);
    }

    @Test
    void anExportOnAFullGpuIsNotProbedNeverFailed() {
        // pull from x: f exports on its full GPU, its answer is not_probed; push from f: the same, locally
        for (JsonNode report : new JsonNode[] {
                x.get("/probe?target=" + f.hostPort() + "&direction=pull").json(),
                f.get("/probe?target=" + x.hostPort() + "&direction=push").json()}) {
            assertThat(report.path("verdict").asString()).as(report.toString()).isEqualTo("not_probed");
            JsonNode r = report.path("results").get(0);
            assertThat(r.path("verdict").asString()).isEqualTo("not_probed");
            assertThat(r.path("sourceGpu").asString()).isEqualTo(f.gpuUuid(0));
            JsonNode finding = r.path("finding");
            assertThat(finding.path("code").asString()).as(r.toString()).isEqualTo("GPU_OUT_OF_MEMORY");
            assertThat(finding.path("severity").asString()).isEqualTo("info");
            assertThat(finding.path("blame").asString()).isEqualTo("source");
            assertThat(finding.path("evidence").path("stage").asString()).isEqualTo("create");
            assertThat(finding.path("evidence").path("driverResult").asString()).isEqualTo("CUDA_ERROR_OUT_OF_MEMORY");
            // both directions name the pair's nodes: a pull's exporter is not told who imports, the importer is
            assertThat(finding.path("evidence").path("sourceNode").asString()).isEqualTo("node-f");
            assertThat(finding.path("evidence").path("targetNode").asString()).as(r.toString()).isEqualTo("node-x");
            assertThat(finding.path("evidence").path("sameNode").asBoolean()).isFalse();
        }
        assertThat(x.metric("imexprobe_pair_up", "source_gpu", f.gpuUuid(0), "target_gpu", x.gpuUuid(0)))
                .as("never a failed pair").isNaN();
        // the importer needs no memory of its own: a push into the full GPU is probed
        JsonNode into = x.get("/probe?target=" + f.hostPort() + "&direction=push").json();
        assertThat(into.path("verdict").asString()).as(into.toString()).isEqualTo("pass");
        for (AgentProcess a : new AgentProcess[] {x, f}) {
            assertThat(a.metric("imexprobe_allocations_live", "kind", "created")).as(a.toString()).isZero();
        }
    }

    /** A 2 from cuMemCreate where NVML finds the GPU empty is the driver's: a failed pair, never hidden as busy. */
    @Test
    void outOfMemoryOnAnEmptyGpuStillFails() {
        x.faults("cuMemCreate=2");
        try {
            JsonNode report = x.get("/probe?target=" + f.hostPort() + "&direction=push").json();
            JsonNode r = report.path("results").get(0);
            assertThat(r.path("verdict").asString()).as(r.toString()).isEqualTo("fail");
            assertThat(r.path("finding").path("code").asString()).isEqualTo("DRIVER_ERROR");
            assertThat(r.path("finding").path("severity").asString()).isEqualTo("error");
            assertThat(r.path("stages").get(0).path("detail").asString()).endsWith(
                    "returned CUDA_ERROR_OUT_OF_MEMORY; NVML reports 143771 MiB free: not a full GPU");
        } finally {
            x.clearFaults();
        }
    }
}
