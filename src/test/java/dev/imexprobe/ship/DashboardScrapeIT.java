package dev.imexprobe.ship;

import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every metric the Grafana dashboard queries is one a running agent exports: two agents on the fake driver probe
 * each other, and the names in a live scrape of one (not a list written by hand) must cover the dashboard's.
 */
class DashboardScrapeIT {

    static MeshAgents mesh;
    static Agent a;

    @BeforeAll
    static void startTwoAgents() {
        mesh = MeshAgents.forTest(DashboardScrapeIT.class);
        Map<String, String> fast = Map.of("IMEXPROBE_MESH_INTERVAL", "2s", "IMEXPROBE_MESH_JITTER", "0.1");
        a = mesh.add("node-a", fast);
        Agent b = mesh.add("node-b", fast);
        a.env("IMEXPROBE_PEERS_STATIC", mesh.staticList());
        b.env("IMEXPROBE_PEERS_STATIC", mesh.staticList());
        mesh.startAll(true);
    }

    @AfterAll
    static void stop() {
        if (mesh != null) {
            mesh.close();
        }
    }

    @Test
    void everyMetricTheDashboardQueriesIsInALiveScrape() throws Exception {
        // After a finished cycle with passing pairs every series the dashboard reads exists.
        String scrape = MeshAgents.eventually(Duration.ofSeconds(60), "a mesh cycle with a passing pair", a::scrape,
                s -> MeshAgents.samples(s).stream().anyMatch(x -> x.name().equals("imexprobe_pair_up") && x.value() == 1)
                        && MeshAgents.samples(s).stream().anyMatch(
                                x -> x.name().equals("imexprobe_mesh_last_cycle_timestamp_seconds") && x.value() > 0));
        Set<String> exported = MeshAgents.samples(scrape).stream().map(MeshAgents.Sample::name)
                .collect(Collectors.toCollection(TreeSet::new));
        Set<String> queried = new TreeSet<>(DashboardTest.usedMetrics());
        // `up` is Prometheus's own series for every target, not the agent's.
        assertThat(queried.remove("up")).as("the dashboard shows which agents are up").isTrue();
        assertThat(queried).isNotEmpty();
        assertThat(exported).as("names in the live scrape").containsAll(queried);
    }

    @Test
    void theDomainVariableListsTheAgentsDomainsAndPairSeriesCarryThem() throws Exception {
        // label_values(<metric>{job=~"$job"}, <label>), evaluated on the live scrape as Prometheus would
        java.util.regex.Matcher q = java.util.regex.Pattern.compile("label_values\\((\\w+)\\{[^}]*}, (\\w+)\\)")
                .matcher(DashboardTest.DOMAIN_VARIABLE_QUERY);
        assertThat(q.matches()).isTrue();
        String metric = q.group(1);
        String label = q.group(2);
        String scrape = MeshAgents.eventually(Duration.ofSeconds(60), "a passing pair", a::scrape,
                s -> MeshAgents.samples(s).stream().anyMatch(x -> x.name().equals("imexprobe_pair_up") && x.value() == 1));
        Set<String> listed = MeshAgents.samples(scrape).stream().filter(x -> x.name().equals(metric))
                .map(x -> x.labels().get(label)).collect(Collectors.toCollection(TreeSet::new));
        String own = a.json("/v1/node").get("gpus").get(0).get("imexDomain").asString();
        assertThat(listed).as("values of the domain variable").containsExactly(own);
        // choosing it keeps every pair series of this agent (each carries its domain), and a domain nobody has keeps none
        assertThat(MeshAgents.samples(scrape)).filteredOn(x -> x.name().startsWith("imexprobe_pair_")).isNotEmpty()
                .allSatisfy(x -> assertThat(x.labels().get("domain")).isIn(listed));
        assertThat(MeshAgents.samples(scrape)).filteredOn(x -> x.name().equals("imexprobe_probes_total")).isNotEmpty()
                .allSatisfy(x -> assertThat(x.labels().get("domain")).isIn(listed));
    }
}
