package dev.imexprobe.mesh;

import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fabric faults a domain-aware agent names, each made by the fake driver's NVML through the real JNI path: a GPU
 * whose fabric state stays IN_PROGRESS past the grace period (FABRIC_STATE_STUCK), a GPU whose health mask says
 * degraded bandwidth and route recovery (FABRIC_DEGRADED naming the bits), one whose mask says an unhealthy route
 * (FABRIC_UNHEALTHY).
 */
class FabricFaultsIT {

    static final String CLUSTER = "6a1c7b2e-5d0f-4c3b-9a8e-0000000fa017";
    /** nvml.h health mask: DEGRADED_BW TRUE (bits 0-1), ROUTE_RECOVERY TRUE (2-3), the rest FALSE, config NONE. */
    static final long DEGRADED = 1L | 1L << 2 | 2L << 4 | 2L << 6 | 1L << 8;
    /** ROUTE_UNHEALTHY TRUE (bits 4-5). */
    static final long UNHEALTHY = 2L | 2L << 2 | 1L << 4 | 2L << 6 | 1L << 8;
    static MeshAgents mesh;
    static Agent agent;

    @BeforeAll
    static void start() {
        mesh = MeshAgents.forTest(FabricFaultsIT.class);
        FakeMachine m = FakeMachine.h200(mesh.dir().resolve("faulty")).host("faulty").gpus(4)
                .fabric(0, 2, CLUSTER, 1)
                .fabric(1, 3, CLUSTER, 1).config("gpu.1.fabric.health", Long.toString(DEGRADED))
                .config("gpu.1.fabric.summary", "3")
                .fabric(2, 3, CLUSTER, 1).config("gpu.2.fabric.health", Long.toString(UNHEALTHY))
                .config("gpu.2.fabric.summary", "2")
                .fabric(3, 3, CLUSTER, 2); // another clique than its node's other GPUs
        agent = mesh.add("faulty", m, Map.of("IMEXPROBE_MESH_INTERVAL", "1s",
                "IMEXPROBE_NODE_FABRIC_STUCK_AFTER", "3s"));
        agent.env("IMEXPROBE_PEERS_STATIC", mesh.staticList());
        mesh.startAll(false);
        agent.awaitLive();
    }

    @AfterAll
    static void stop() {
        if (mesh != null) {
            mesh.close();
        }
    }

    private static Map<String, JsonNode> findingsByCode(JsonNode node) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        for (JsonNode f : node.path("findings")) {
            out.put(f.path("code").asString(), f);
        }
        return out;
    }

    @Test
    void inProgressBecomesStuckAfterTheGracePeriod() {
        // (the switch from FABRIC_NOT_COMPLETED within the grace is LocalDiagnosisFabricTest's: here the agent's
        // start-up alone may take longer than the grace)
        JsonNode later = MeshAgents.eventually(Duration.ofSeconds(30), "FABRIC_STATE_STUCK on GPU 0",
                () -> agent.json("/v1/node"), n -> findingsByCode(n).containsKey("FABRIC_STATE_STUCK"));
        JsonNode stuck = findingsByCode(later).get("FABRIC_STATE_STUCK");
        assertThat(stuck.path("severity").asString()).isEqualTo("error");
        assertThat(stuck.path("evidence").path("state").asString()).isEqualTo("IN_PROGRESS");
        assertThat(stuck.path("evidence").path("stuckAfterSeconds").asLong()).isEqualTo(3);
        assertThat(stuck.path("evidence").path("seconds").asLong()).isGreaterThanOrEqualTo(3);
        assertThat(stuck.path("evidence").path("gpu").asString()).startsWith("0 (");
        assertThat(findingsByCode(later)).doesNotContainKey("FABRIC_NOT_COMPLETED");
    }

    @Test
    void theHealthMaskBitsAreNamed() {
        Map<String, JsonNode> f = findingsByCode(agent.json("/v1/node?refresh=true"));

        assertThat(f.get("FABRIC_DEGRADED").path("severity").asString()).isEqualTo("warning");
        assertThat(f.get("FABRIC_DEGRADED").path("evidence").path("flags").asString())
                .isEqualTo("DEGRADED_BW, ROUTE_RECOVERY, SUMMARY_LIMITED_CAPACITY");
        assertThat(f.get("FABRIC_DEGRADED").path("evidence").path("gpu").asString()).startsWith("1 (");
        assertThat(f.get("FABRIC_UNHEALTHY").path("severity").asString()).isEqualTo("error");
        assertThat(f.get("FABRIC_UNHEALTHY").path("evidence").path("flags").asString())
                .isEqualTo("ROUTE_UNHEALTHY, SUMMARY_UNHEALTHY");
        assertThat(f.get("FABRIC_UNHEALTHY").path("cause").asString()).contains("ROUTE_UNHEALTHY");
    }

    @Test
    void gpusOfOneNodeInTwoCliquesDisagree() {
        JsonNode d = findingsByCode(agent.json("/v1/node?refresh=true")).get("DOMAIN_MEMBERS_DISAGREE");

        assertThat(d).isNotNull();
        assertThat(d.path("severity").asString()).isEqualTo("warning");
        assertThat(d.path("evidence").path("gpus").toString()).isEqualTo("[\"GPU 1, 2 in fabric:" + CLUSTER
                + "/1\",\"GPU 3 in fabric:" + CLUSTER + "/2\"]");
    }
}
