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
 * Liveness and readiness of real agents in the three states an operator meets: no driver library at all, a driver
 * but no IMEX channel, and no channel with the channel requirement switched off. Liveness stays UP in all of them:
 * restarting the pod would not bring a driver or a channel.
 */
class HealthIT {

    static MeshAgents agents;
    static Agent noDriver;
    static Agent noChannel;
    static Agent noChannelNotRequired;

    @BeforeAll
    static void start() {
        agents = MeshAgents.forTest(HealthIT.class);
        noDriver = agents.add("no-driver", FakeMachine.h200(agents.dir().resolve("no-driver")).host("no-driver"),
                Map.of("IMEXPROBE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1",
                        "IMEXPROBE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"));
        noChannel = agents.add("no-channel",
                FakeMachine.h200WithoutChannel(agents.dir().resolve("no-channel")).host("no-channel"), Map.of());
        noChannelNotRequired = agents.add("no-channel-relaxed",
                FakeMachine.h200WithoutChannel(agents.dir().resolve("no-channel-relaxed")).host("no-channel-relaxed"),
                Map.of("IMEXPROBE_READINESS_CHANNEL", "false"));
        agents.startAll(false);
    }

    @AfterAll
    static void stop() {
        if (agents != null) {
            agents.close();
        }
    }

    @Test
    void withoutADriverTheAgentIsAliveButNotReadyAndSaysWhy() {
        Reply readiness = noDriver.get("/actuator/health/readiness");
        assertThat(readiness.status()).isEqualTo(503);
        JsonNode r = readiness.json();
        assertThat(r.path("status").asString()).isEqualTo("DOWN");
        JsonNode detail = r.path("components").path("imexprobe");
        assertThat(detail.path("status").asString()).isEqualTo("DOWN");
        assertThat(detail.path("details").path("driver").asBoolean()).isFalse();
        assertThat(detail.path("details").path("reason").asString())
                .startsWith("no usable NVIDIA driver library; no GPU visible; no usable IMEX channel");
        assertThat(r.path("components").path("readinessState").path("status").asString()).isEqualTo("UP");

        assertLive(noDriver);
        assertThat(codes(noDriver.json("/v1/node"))).contains("NO_DRIVER");
    }

    @Test
    void withoutAChannelTheAgentIsAliveButNotReady() {
        Reply readiness = noChannel.get("/actuator/health/readiness");
        assertThat(readiness.status()).isEqualTo(503);
        JsonNode detail = readiness.json().path("components").path("imexprobe");
        assertThat(detail.path("details").path("driver").asBoolean()).isTrue();
        assertThat(detail.path("details").path("gpus").asInt()).isEqualTo(1);
        assertThat(detail.path("details").path("usableChannels").asInt()).isZero();
        assertThat(detail.path("details").path("reason").asString()).startsWith("no usable IMEX channel (");

        assertLive(noChannel);
        assertThat(codes(noChannel.json("/v1/node"))).contains("NO_IMEX_CHANNEL");
        assertThat(noChannel.metric("imexprobe_imex_channels")).isEqualTo(0.0);
    }

    @Test
    void withoutAChannelButNotRequiredTheAgentIsReady() {
        Reply readiness = noChannelNotRequired.get("/actuator/health/readiness");
        assertThat(readiness.status()).isEqualTo(200);
        JsonNode detail = readiness.json().path("components").path("imexprobe");
        assertThat(detail.path("status").asString()).isEqualTo("UP");
        assertThat(detail.path("details").path("usableChannels").asInt()).isZero();

        assertLive(noChannelNotRequired);
        assertThat(codes(noChannelNotRequired.json("/v1/node"))).as("the finding is still reported")
                .contains("NO_IMEX_CHANNEL");
    }

    @Test
    void theMeshIsReportedInHealthButIsNoPartOfReadiness() {
        JsonNode health = noChannelNotRequired.json("/actuator/health");
        assertThat(health.path("components").has("mesh")).isTrue();
        assertThat(health.path("components").path("mesh").path("status").asString()).isIn("UNKNOWN", "UP");
        JsonNode readiness = noChannelNotRequired.get("/actuator/health/readiness").json();
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
