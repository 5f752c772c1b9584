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
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * NVML calls of one agent never overlap, though node reports are built on several driver threads at once. The
 * fake NVML fails a call that starts while another is in flight (NVML_ERROR_UNKNOWN, and a line in the log), and
 * each fabric-info call is slowed so that unserialised calls would overlap: concurrent refreshes must still see
 * every GPU's fabric info answered.
 */
class NvmlSerialisedIT {

    private static final int GPUS = 4;
    private static final int REFRESHES = 6;

    @TempDir
    static Path dir;

    static AgentProcess agent;

    @BeforeAll
    static void start() {
        FakeMachine machine = FakeMachine.h200(dir.resolve("machine")).gpus(GPUS);
        agent = AgentProcess.start("agent", dir.resolve("a"), machine.env(), "node-a",
                Map.of("IMEXPROBE_DRIVER_THREADS", "8", "IMEXPROBE_DRIVER_TIMEOUT", "20s")).awaitReady();
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(agent);
    }

    @Test
    void concurrentNodeRefreshesNeverCallNvmlAtOnce() {
        agent.faults("nvmlDeviceGetGpuFabricInfoV=delay:25\nnvmlDeviceGetHandleByUUID=delay:5");
        try {
            List<CompletableFuture<AgentProcess.Reply>> calls = new ArrayList<>();
            for (int i = 0; i < REFRESHES; i++) {
                calls.add(CompletableFuture.supplyAsync(
                        () -> agent.get("/v1/node?refresh=true", Duration.ofSeconds(60))));
            }
            for (CompletableFuture<AgentProcess.Reply> call : calls) {
                AgentProcess.Reply r = call.join();
                assertThat(r.status()).as(r.body()).isEqualTo(200);
                JsonNode gpus = r.json().get("gpus");
                assertThat(gpus).hasSize(GPUS);
                for (JsonNode gpu : gpus) {
                    assertThat(gpu.get("fabricResult").get("name").asString()).as(gpu.toString())
                            .isEqualTo("NVML_SUCCESS");
                }
            }
        } finally {
            agent.clearFaults();
        }
        assertThat(agent.logText()).doesNotContain("NVML calls must be serialised");
    }
}
