package dev.imexprobe.mesh;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * imexprobe.channel.mode=observer (the chart's default): the agent is ready and its rounds run, but it probes
 * nothing — no pair, no context (the fake's context log stays empty), no allocation — and says so with
 * OBSERVER_MODE instead of NO_IMEX_CHANNEL. A peer it knows is discovered but not probed.
 */
class ObserverModeIT {

    @TempDir
    static Path dir;

    static AgentProcess a;
    static AgentProcess b;

    @BeforeAll
    static void start() {
        FakeMachine machine = FakeMachine.h200WithoutChannel(dir.resolve("machine"));
        // a peer that would be an unreachable (failed) pair in any other mode
        Map<String, String> env = Map.of("IMEXPROBE_CHANNEL_MODE", "observer", "IMEXPROBE_MESH_INTERVAL", "1s",
                "FAKECUDA_CONTEXT_LOG", dir.resolve("contexts.log").toString(), "IMEXPROBE_PEERS_STATIC", "127.0.0.1:9");
        a = AgentProcess.start("a", dir.resolve("a"), machine.env(), "node-a", env);
        b = AgentProcess.start("b", dir.resolve("b"), machine.env(), "node-b", env);
        AgentProcess.awaitReady(a, b);
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(a, b);
    }

    @Test
    void readyRoundsRunNothingIsProbedNoContextIsMade() throws Exception {
        JsonNode node = a.get("/v1/node").json();
        assertThat(node.get("findings").toString()).contains("OBSERVER_MODE").doesNotContain("NO_IMEX_CHANNEL");
        assertThat(a.get("/actuator/health/readiness").status()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(a.metric("imexprobe_mesh_last_cycle_timestamp_seconds")).isGreaterThan(0));
        Thread.sleep(3000);
        assertThat(a.metric("imexprobe_peers")).as("the peer is discovered").isEqualTo(1.0);
        assertThat(a.get("/v1/mesh").json().get("pairs")).as("and not probed").isEmpty();
        assertThat(a.metric("imexprobe_cuda_context_held")).isEqualTo(0.0);
        Path log = dir.resolve("contexts.log");
        assertThat(Files.exists(log) ? Files.readAllLines(log) : java.util.List.of()).as("contexts made").isEmpty();
        assertThat(a.liveAllocations()).isZero();
    }
}
