package dev.imexprobe.mesh;

import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Domain faults made by the fake driver's {@code imex.domain} (which IMEX daemon ensemble a host is in), on real
 * agent processes through the real JNI path:
 * <ul>
 *   <li>clique 1 served by two IMEX domains (a1, a2 in A; b1, b2 in B): CLIQUE_SPLIT;</li>
 *   <li>clique 2 whose node x is in another IMEX domain than c1, c2: DOMAIN_CLAIM_UNPROVEN for x;</li>
 *   <li>b1, b2 (clique 1) and c1, c2 (clique 2) share IMEX domain B, so the cross-domain sample between them
 *       passes: IMEX_DOMAINS_NOT_ISOLATED, while samples into other IMEX domains fail as expected (info).</li>
 * </ul>
 */
class DomainFaultsIT {

    static final String CLUSTER = "6a1c7b2e-5d0f-4c3b-9a8e-0000000d0a2f";
    static final Duration SETTLE = Duration.ofSeconds(90);
    static MeshAgents mesh;
    static final Map<String, Agent> AGENTS = new LinkedHashMap<>();

    @BeforeAll
    static void start() {
        mesh = MeshAgents.forTest(DomainFaultsIT.class);
        Map<String, String> env = Map.of("IMEXPROBE_MESH_INTERVAL", "2s", "IMEXPROBE_MESH_JITTER", "0.1",
                "IMEXPROBE_MESH_CROSS_DOMAIN_SAMPLE_INTERVAL", "1s");
        Map<String, String[]> nodes = new LinkedHashMap<>();
        nodes.put("a1", new String[] {"1", "A"});
        nodes.put("a2", new String[] {"1", "A"});
        nodes.put("b1", new String[] {"1", "B"});
        nodes.put("b2", new String[] {"1", "B"});
        nodes.put("c1", new String[] {"2", "B"});
        nodes.put("c2", new String[] {"2", "B"});
        nodes.put("x", new String[] {"2", "X"});
        nodes.forEach((n, cliqueAndImex) -> {
            FakeMachine m = FakeMachine.h200(mesh.dir().resolve(n)).host(n)
                    .fabric(0, 3, CLUSTER, Long.parseLong(cliqueAndImex[0])).config("imex.domain", cliqueAndImex[1]);
            AGENTS.put(n, mesh.add(n, m, env));
        });
        for (Agent a : AGENTS.values()) {
            a.env("IMEXPROBE_PEERS_STATIC", mesh.staticList());
        }
        mesh.startAll(false);
        AGENTS.values().forEach(Agent::awaitLive);
    }

    @AfterAll
    static void stop() {
        if (mesh != null) {
            mesh.close();
        }
    }

    private static List<String> codes(JsonNode view) {
        List<String> out = new ArrayList<>();
        view.path("findings").forEach(f -> out.add(f.path("code").asString()));
        return out;
    }

    private static JsonNode finding(JsonNode view, String code) {
        for (JsonNode f : view.path("findings")) {
            if (f.path("code").asString().equals(code)) {
                return f;
            }
        }
        return null;
    }

    @Test
    void aSplitCliqueAndANodeOutsideItsClaimedDomainAreNamed() {
        Agent a1 = AGENTS.get("a1");
        JsonNode view = MeshAgents.eventually(SETTLE, "CLIQUE_SPLIT and DOMAIN_CLAIM_UNPROVEN in the domain view",
                () -> a1.mesh(true), v -> codes(v).contains("CLIQUE_SPLIT")
                        && codes(v).contains("DOMAIN_CLAIM_UNPROVEN"));

        JsonNode split = finding(view, "CLIQUE_SPLIT");
        assertThat(split.path("evidence").path("domain").asString()).isEqualTo("fabric:" + CLUSTER + "/1");
        assertThat(split.path("evidence").path("groups").toString()).isEqualTo("[\"[a1, a2]\",\"[b1, b2]\"]");
        assertThat(split.path("evidence").path("driverResult").asString()).isEqualTo("import CUDA_ERROR_NOT_SUPPORTED");
        assertThat(split.path("severity").asString()).isEqualTo("error");
        JsonNode claim = finding(view, "DOMAIN_CLAIM_UNPROVEN");
        assertThat(claim.path("evidence").path("node").asString()).isEqualTo("x");
        assertThat(claim.path("evidence").path("domain").asString()).isEqualTo("fabric:" + CLUSTER + "/2");
        assertThat(claim.path("evidence").path("failedWith").toString()).isEqualTo("[\"c1\",\"c2\"]");
    }

    @Test
    void theCrossDomainSampleFindsDomainsThatAreNotApartAndStaysQuietWhereTheyAre() {
        Agent b1 = AGENTS.get("b1");
        JsonNode view = MeshAgents.eventually(SETTLE, "b1 sampled c1, c2 and x",
                () -> b1.mesh(false), v -> sampled(v, "c1") && sampled(v, "c2") && sampled(v, "x"));
        for (JsonNode p : view.path("pairs")) {
            String target = p.path("targetNode").asString();
            if (!target.startsWith("c") && !target.equals("x")) {
                continue;
            }
            assertThat(p.path("state").asString()).as(target).isEqualTo("not_probed");
            String code = p.path("finding").path("code").asString();
            if (target.equals("x")) {
                assertThat(code).isEqualTo("DIFFERENT_IMEX_DOMAIN");
                assertThat(p.path("finding").path("evidence").path("sample").asString())
                        .isEqualTo("import CUDA_ERROR_NOT_SUPPORTED");
            } else {
                assertThat(code).as(target).isEqualTo("IMEX_DOMAINS_NOT_ISOLATED");
                assertThat(p.path("finding").path("severity").asString()).isEqualTo("warning");
            }
        }
        assertThat(codes(view)).contains("IMEX_DOMAINS_NOT_ISOLATED");
        // sampled pairs are no pair series: nothing across domains for an alert
        assertThat(MeshAgents.samples(b1.scrape()).stream().filter(s -> s.name().equals("imexprobe_pair_up"))
                .count()).isEqualTo(3);
    }

    private static boolean sampled(JsonNode view, String target) {
        for (JsonNode p : view.path("pairs")) {
            if (p.path("targetNode").asString().equals(target)) {
                JsonNode f = p.path("finding");
                return f.path("code").asString().equals("IMEX_DOMAINS_NOT_ISOLATED") || f.path("evidence").has("sample");
            }
        }
        return false;
    }
}
