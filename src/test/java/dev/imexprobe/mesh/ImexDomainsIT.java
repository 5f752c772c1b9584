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
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The mesh knows IMEX domains: two NVLink domains of two agents each (one cluster, cliques 1 and 2, each agent on
 * its own host) and one HGX-style node whose GPU has no fabric (node-local). Only pairs within a domain are
 * probed; the rest are "not probed" with DIFFERENT_IMEX_DOMAIN, never failed, never in imexprobe_pair_up (so no
 * alert can fire for them); /v1/node and /v1/mesh say the domains; an on-demand /probe across domains fails as
 * the fake's driver does and names DIFFERENT_IMEX_DOMAIN (info) instead of an error.
 */
class ImexDomainsIT {

    static final String CLUSTER = "6a1c7b2e-5d0f-4c3b-9a8e-0000000d0a1f";
    static final Duration SETTLE = Duration.ofSeconds(60);
    static MeshAgents mesh;
    static final Map<String, Agent> AGENTS = new LinkedHashMap<>();

    @BeforeAll
    static void start() {
        mesh = MeshAgents.forTest(ImexDomainsIT.class);
        Map<String, String> env = Map.of("IMEXPROBE_MESH_INTERVAL", "2s", "IMEXPROBE_MESH_JITTER", "0.1");
        for (String n : List.of("rack1-a", "rack1-b", "rack2-a", "rack2-b", "hgx")) {
            FakeMachine m = FakeMachine.h200(mesh.dir().resolve(n)).host(n);
            if (n.startsWith("rack")) {
                m.fabric(0, 3, CLUSTER, n.startsWith("rack1") ? 1 : 2);
            }
            AGENTS.put(n, mesh.add(n, m, env));
        }
        for (Agent a : AGENTS.values()) {
            a.env("IMEXPROBE_PEERS_STATIC", mesh.staticList());
        }
        mesh.startAll(true);
    }

    @AfterAll
    static void stop() {
        if (mesh != null) {
            mesh.close();
        }
    }

    private static Map<String, JsonNode> pairs(JsonNode view) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        for (JsonNode p : view.path("pairs")) {
            out.put(p.path("sourceNode").asString() + ">" + p.path("targetNode").asString(), p);
        }
        return out;
    }

    private static String domainOf(Agent a) {
        return a.json("/v1/node").get("gpus").get(0).get("imexDomain").asString();
    }

    @Test
    void onlyPairsWithinADomainAreProbedAndNoneAcrossFails() {
        assertThat(domainOf(AGENTS.get("rack1-a"))).isEqualTo("fabric:" + CLUSTER + "/1")
                .isEqualTo(domainOf(AGENTS.get("rack1-b")));
        assertThat(domainOf(AGENTS.get("rack2-a"))).isEqualTo("fabric:" + CLUSTER + "/2");
        assertThat(domainOf(AGENTS.get("hgx"))).startsWith("host:");

        for (Agent a : AGENTS.values()) {
            JsonNode view = MeshAgents.eventually(SETTLE, a.node() + " sees all 4 peers' pairs settled",
                    () -> a.mesh(false), v -> pairs(v).size() == 4
                            && pairs(v).values().stream().noneMatch(p -> p.path("state").asString().equals("unknown"))
                            // a pair first seen before its target identified itself is keyed by address, not node
                            && pairs(v).keySet().stream().allMatch(k -> AGENTS.containsKey(k.substring(k.indexOf('>') + 1))));
            for (Map.Entry<String, JsonNode> e : pairs(view).entrySet()) {
                String target = e.getKey().substring(e.getKey().indexOf('>') + 1);
                boolean sameDomain = a.node().startsWith("rack") && target.startsWith("rack")
                        && a.node().substring(0, 5).equals(target.substring(0, 5));
                JsonNode p = e.getValue();
                // every pair says its domain: the exporter's; across domains the importer's too
                assertThat(p.path("domain").asString()).as(e.getKey()).isEqualTo(domainOf(a));
                if (sameDomain) {
                    assertThat(p.path("state").asString()).as(e.getKey()).isEqualTo("ok");
                    assertThat(p.has("targetDomain")).as(e.getKey()).isFalse();
                } else {
                    assertThat(p.path("targetDomain").asString()).as(e.getKey())
                            .isEqualTo(domainOf(AGENTS.get(target)));
                    assertThat(p.path("state").asString()).as(e.getKey()).isEqualTo("not_probed");
                    assertThat(p.path("finding").path("code").asString()).isEqualTo("DIFFERENT_IMEX_DOMAIN");
                    assertThat(p.path("finding").path("severity").asString()).isEqualTo("info");
                }
            }
            assertThat(view.path("findings").toString()).as("no error finding in %s", a.node())
                    .doesNotContain("\"error\"");
            // pair_up only for the probed pairs: nothing across domains for an alert to fire on
            long series = MeshAgents.samples(a.scrape()).stream()
                    .filter(s -> s.name().equals("imexprobe_pair_up")).count();
            assertThat(series).as("imexprobe_pair_up series of %s", a.node()).isEqualTo(a.node().startsWith("rack") ? 1 : 0);
            assertThat(MeshAgents.samples(a.scrape()).stream().filter(s -> s.name().equals("imexprobe_pair_up"))
                    .allMatch(s -> s.value() == 1.0)).isTrue();
            // pair series carry the pair's domain, and the GPU's domain is one series to filter agents by
            String scrape = a.scrape();
            assertThat(MeshAgents.samples(scrape)).filteredOn(s -> s.name().startsWith("imexprobe_pair_"))
                    .allSatisfy(s -> assertThat(s.labels()).containsEntry("domain", domainOf(a)));
            assertThat(MeshAgents.metric(scrape, "imexprobe_gpu_imex_domain_info", "domain", domainOf(a)))
                    .as("imexprobe_gpu_imex_domain_info of %s", a.node()).isEqualTo(1.0);
        }
        String page = AGENTS.get("hgx").get("/").body();
        assertThat(page).contains("not probed");
        // the matrix page: one section per domain with pairs, each holding only its own agents' pairs
        for (String rack : List.of("rack1", "rack2")) {
            String domain = domainOf(AGENTS.get(rack + "-a"));
            assertThat(page).contains("<h2 class=\"domain\">IMEX domain <code>" + domain + "</code></h2>");
            String table = page.substring(page.indexOf("data-domain=\"" + domain + "\""));
            table = table.substring(0, table.indexOf("</table>"));
            assertThat(table.split("<td class=\"ok\"", -1)).as(rack).hasSize(3);
            assertThat(table).contains(rack + "-a / ").contains(rack + "-b / ").doesNotContain("hgx / ")
                    .doesNotContain("not_probed");
        }
        assertThat(page.split("<h2 class=\"domain\">", -1)).as("sections: the two racks").hasSize(3);
        // across domains: counted per pair of domains, grey, not red
        String across = page.substring(page.indexOf("<table id=\"across\""));
        across = across.substring(0, across.indexOf("</table>"));
        assertThat(across).contains(domainOf(AGENTS.get("hgx"))).contains("not probed — different domain")
                .doesNotContain("class=\"failed\"");
    }

    @Test
    void onDemandAcrossDomainsNamesTheDomainsNotAnError() {
        Agent a = AGENTS.get("rack1-a");
        for (String target : List.of("rack2-a", "hgx")) {
            JsonNode r = a.json("/probe?target=" + AGENTS.get(target).hostPort() + "&direction=push");
            JsonNode result = r.get("results").get(0);
            assertThat(result.get("verdict").asString()).as(target).isEqualTo("fail");
            assertThat(result.get("finding").get("code").asString()).as(result.toString())
                    .isEqualTo("DIFFERENT_IMEX_DOMAIN");
            assertThat(result.get("finding").get("severity").asString()).isEqualTo("info");
            assertThat(result.get("finding").get("evidence").get("targetDomain").asString())
                    .isEqualTo(domainOf(AGENTS.get(target)));
        }
        JsonNode same = a.json("/probe?target=" + AGENTS.get("rack1-b").hostPort() + "&direction=both");
        assertThat(same.get("verdict").asString()).isEqualTo("pass");
    }
}
