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
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A job holding nearly all of a GPU's memory: real agents on the fake driver, whose NVML reports
 * {@code gpu.N.memory_used_mib} as used by others. GPU J (drawn at random) has less free than the default
 * imexprobe.driver.min-free-memory (4 GiB); GPU O has plenty. Agent a sees both and probes b (O only) and bj (J only)
 * every second: its pairs from J and into bj are not probed (GPU_MEMORY_IN_USE, blamed on the busy side), never
 * failed, and it creates no context on J; its pair from O into b passes. Agent c has the check off (0) and probes from J.
 */
class MemoryHeadroomIT {

    @TempDir
    static Path dir;

    static int j;
    static int o;
    static long usedMiB;
    static AgentProcess a;
    static AgentProcess b;
    static AgentProcess bj;
    static AgentProcess c;

    @BeforeAll
    static void start() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        j = random.nextInt(2);
        o = 1 - j;
        usedMiB = 143771 - 4096 + 1 + random.nextInt(4000); // 1..4000 MiB short of the 4 GiB the agent leaves
        FakeMachine machine = FakeMachine.h200(dir.resolve("machine")).gpus(2)
                .config("gpu." + j + ".memory_used_mib", Long.toString(usedMiB))
                .config("gpu." + o + ".memory_used_mib", Long.toString(random.nextInt(100_000)));
        Map<String, String> env = machine.env();
        b = AgentProcess.start("b", dir.resolve("b"), env, "node-b", Map.of("CUDA_VISIBLE_DEVICES",
                Integer.toString(o)));
        bj = AgentProcess.start("bj", dir.resolve("bj"), env, "node-bj", Map.of("CUDA_VISIBLE_DEVICES",
                Integer.toString(j), "FAKECUDA_CONTEXT_LOG", dir.resolve("bj-contexts.log").toString()));
        c = AgentProcess.start("c", dir.resolve("c"), env, "node-c", Map.of("IMEXPROBE_DRIVER_MINFREEMEMORY", "0",
                "CUDA_VISIBLE_DEVICES", Integer.toString(j)));
        AgentProcess.awaitReady(b, bj, c);
        a = AgentProcess.start("a", dir.resolve("a"), env, "node-a", Map.of("IMEXPROBE_MESH_INTERVAL", "1s",
                "IMEXPROBE_PEERS_STATIC", b.hostPort() + "," + bj.hostPort(),
                "FAKECUDA_CONTEXT_LOG", dir.resolve("a-contexts.log").toString())).awaitReady();
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(a, b, bj, c);
    }

    @Test
    void pairsOfTheBusyGpuAreNotProbedAndNoContextIsTakenThere() {
        String aJ = a.gpuUuid(j);
        String aO = a.gpuUuid(o);
        String bO = b.gpuUuid(0);
        String bjJ = bj.gpuUuid(0);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonNode ok = a.meshPair(aO, bO);
            assertThat(ok).isNotNull();
            assertThat(ok.path("state").asString()).as(ok.toString()).isEqualTo("ok");
            JsonNode into = a.meshPair(aO, bjJ);
            assertThat(into).isNotNull();
            assertThat(into.path("state").asString()).as(into.toString()).isEqualTo("not_probed");
        });
        for (String[] p : new String[][] {{aJ, bO, "source"}, {aJ, bjJ, "source"}, {aO, bjJ, "target"}}) {
            JsonNode pair = a.meshPair(p[0], p[1]);
            assertThat(pair).as("pair %s -> %s", p[0], p[1]).isNotNull();
            assertThat(pair.path("state").asString()).as(pair.toString()).isEqualTo("not_probed");
            JsonNode finding = pair.path("finding");
            assertThat(finding.path("code").asString()).isEqualTo("GPU_MEMORY_IN_USE");
            assertThat(finding.path("severity").asString()).isEqualTo("info");
            assertThat(finding.path("blame").asString()).as(pair.toString()).isEqualTo(p[2]);
            assertThat(finding.path("evidence").path("freeMiB").asLong()).isEqualTo(143771 - usedMiB);
            assertThat(finding.path("evidence").path("minFreeMiB").asLong()).isEqualTo(4096);
            assertThat(finding.path("cause").asString()).contains((143771 - usedMiB) + " MiB of its 143771 MiB free");
        }
        assertThat(FakeMachine.contextsCreated(dir.resolve("a-contexts.log"))).containsExactly("create " + o);
        assertThat(FakeMachine.contextsCreated(dir.resolve("bj-contexts.log"))).as("the importer whose GPU is busy made no context").isEmpty();
        assertThat(a.metric("imexprobe_pair_up", "source_gpu", aJ, "target_gpu", bO)).as("never a failed pair")
                .isNaN();
        assertThat(a.metric("imexprobe_pairs", "state", "not_probed", "reason", "GPU_MEMORY_IN_USE")).isEqualTo(3.0);
        // the busy GPU is not a broken one: the node report has no finding for it
        assertThat(a.get("/v1/node").json().path("findings").findValuesAsString("code"))
                .doesNotContain("GPU_MEMORY_IN_USE");
    }

    @Test
    void onDemandAndWithTheCheckOffTheBusyGpu() {
        JsonNode push = a.get("/probe?target=" + b.hostPort() + "&gpu=" + j + "&direction=both").json();
        assertThat(push.path("verdict").asString()).as(push.toString()).isEqualTo("not_probed");
        for (JsonNode r : push.path("results")) {
            assertThat(r.path("finding").path("code").asString()).as(r.toString()).isEqualTo("GPU_MEMORY_IN_USE");
            assertThat(r.path("finding").path("blame").asString()).as(r.toString())
                    .isEqualTo(r.path("direction").asString().equals("push") ? "source" : "target");
        }
        // imexprobe.driver.min-free-memory=0: the same busy GPU is probed
        JsonNode off = c.get("/probe?target=" + b.hostPort() + "&direction=push").json();
        assertThat(off.path("verdict").asString()).as(off.toString()).isEqualTo("pass");
    }
}
