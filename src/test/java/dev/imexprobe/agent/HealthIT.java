package dev.imexprobe.agent;

import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;
import dev.imexprobe.testing.MeshAgents.Reply;

import tools.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Liveness and readiness of real agents in the states an operator meets: no driver library at all, a driver but no
 * IMEX channel. Both stay live and ready: readiness means the agent serves, and a monitor that left the Service
 * over the fault it watches would hide it (its peers would stop probing it, Prometheus would stop scraping it).
 * The faults are findings and metrics.
 */
class HealthIT {

    static MeshAgents agents;
    static Agent noDriver;
    static Agent noChannel;

    @BeforeAll
    static void start() {
        agents = MeshAgents.forTest(HealthIT.class);
        noDriver = agents.add("no-driver", FakeMachine.h200(agents.dir().resolve("no-driver")).host("no-driver"),
                Map.of("IMEXPROBE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1",
                        "IMEXPROBE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"));
        noChannel = agents.add("no-channel",
                FakeMachine.h200WithoutChannel(agents.dir().resolve("no-channel")).host("no-channel"), Map.of());
        agents.startAll(false);
    }

    @AfterAll
    static void stop() {
        if (agents != null) {
            agents.close();
        }
    }

    @Test
    void withoutADriverTheAgentIsAliveAndReadyAndReportsTheFinding() {
        Reply readiness = noDriver.awaitReady().get("/actuator/health/readiness");
        assertThat(readiness.status()).isEqualTo(200);
        JsonNode detail = readiness.json().path("components").path("imexprobe");
        assertThat(detail.path("status").asString()).isEqualTo("UP");
        assertThat(detail.path("details").path("driver").asBoolean()).isFalse();
        assertThat(detail.path("details").path("findings").toString()).contains("NO_DRIVER");

        assertLive(noDriver);
        assertThat(codes(noDriver.json("/v1/node"))).contains("NO_DRIVER");
    }

    @Test
    void withoutAChannelTheAgentIsAliveAndReadyAndReportsTheFinding() {
        Reply readiness = noChannel.awaitReady().get("/actuator/health/readiness");
        assertThat(readiness.status()).isEqualTo(200);
        JsonNode detail = readiness.json().path("components").path("imexprobe");
        assertThat(detail.path("details").path("driver").asBoolean()).isTrue();
        assertThat(detail.path("details").path("gpus").asInt()).isEqualTo(1);
        assertThat(detail.path("details").path("usableChannels").asInt()).isZero();

        assertLive(noChannel);
        assertThat(codes(noChannel.json("/v1/node"))).contains("NO_IMEX_CHANNEL");
        assertThat(noChannel.metric("imexprobe_imex_channels")).isEqualTo(0.0);
    }

    @Test
    void theMeshIsReportedInHealthButIsNoPartOfReadiness() {
        JsonNode health = noChannel.json("/actuator/health");
        assertThat(health.path("components").has("mesh")).isTrue();
        assertThat(health.path("components").path("mesh").path("status").asString()).isIn("UNKNOWN", "UP");
        JsonNode readiness = noChannel.get("/actuator/health/readiness").json();
        assertThat(readiness.path("components").has("mesh")).isFalse();
    }

    private static void assertLive(Agent a) {
        Reply liveness = a.get("/actuator/health/liveness");
        assertThat(liveness.status()).isEqualTo(200);
        assertThat(liveness.json().path("status").asString()).isEqualTo("UP");
    }

    private static List<String> codes(JsonNode node) {
        List<String> out = new ArrayList<>();
        node.path("findings").forEach(f -> out.add(f.path("code").asString()));
        return out;
    }
}
