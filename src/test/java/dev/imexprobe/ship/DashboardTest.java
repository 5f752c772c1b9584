package dev.imexprobe.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** grafana/imexprobe.json: valid, on the ${datasource} variable, naming only metrics the agent exports. */
class DashboardTest {

    /** The agent's metric names (docs/metrics.md) plus Prometheus' up; histograms in their exposition forms. */

    private static final Pattern METRIC = Pattern.compile("(?<![A-Za-z0-9_:\"$])(imexprobe_[a-z0-9_]+|up)(?![A-Za-z0-9_\"])");

    static JsonNode dashboard() throws Exception {
        return JsonMapper.builder().build().readTree(Files.readString(Project.DASHBOARD));
    }

    static List<JsonNode> panels(JsonNode dash) {
        List<JsonNode> all = new ArrayList<>();
        for (JsonNode p : dash.get("panels")) {
            all.add(p);
            if (p.has("panels")) {
                p.get("panels").forEach(all::add);
            }
        }
        return all;
    }

    @Test
    void chartCarriesTheSameDashboard() throws Exception {
        assertThat(Files.readString(Project.CHART_DASHBOARD)).isEqualTo(Files.readString(Project.DASHBOARD));
    }

    @Test
    void isAModernDashboardWithDatasourceJobAndNodeVariables() throws Exception {
        JsonNode dash = dashboard();
        assertThat(dash.get("schemaVersion").asInt()).isGreaterThanOrEqualTo(39);
        assertThat(dash.get("uid").asText()).isNotBlank();
        JsonNode vars = dash.at("/templating/list");
        JsonNode ds = find(vars, "datasource");
        assertThat(ds.get("type").asText()).isEqualTo("datasource");
        assertThat(ds.get("query").asText()).isEqualTo("prometheus");
        JsonNode node = find(vars, "node");
        assertThat(node.get("type").asText()).isEqualTo("query");
        assertThat(node.at("/query/query").asText()).startsWith("label_values(").endsWith(", node)");
        assertThat(node.at("/datasource/uid").asText()).isEqualTo("${datasource}");
        assertThat(find(vars, "job").at("/datasource/uid").asText()).isEqualTo("${datasource}");
        JsonNode domain = find(vars, "domain");
        assertThat(domain.at("/query/query").asText()).isEqualTo(domain.get("definition").asText())
                .isEqualTo(DOMAIN_VARIABLE_QUERY);
        assertThat(domain.get("includeAll").asBoolean()).isTrue();
        assertThat(domain.get("allValue").asText()).isEqualTo(".*");
    }

    /** The domain variable lists the IMEX domains of the agents' GPUs (DashboardScrapeIT evaluates it on a live scrape). */
    static final String DOMAIN_VARIABLE_QUERY = "label_values(imexprobe_gpu_imex_domain_info{job=~\"$job\"}, domain)";

    @Test
    void everyPanelButTheAgentsFollowsTheDomainVariable() throws Exception {
        int filtered = 0;
        for (JsonNode p : panels(dashboard())) {
            if (!p.has("targets")) {
                continue;
            }
            for (JsonNode t : p.get("targets")) {
                String e = t.get("expr").asText();
                if (e.contains("imexprobe_build_info") || e.startsWith("sum(up") || e.startsWith("count(up")
                        || e.startsWith("max by (node, pod) (up")) {
                    continue; // the Agents row: every agent, whatever its GPUs
                }
                assertThat(e).as("panel %s", p.get("title")).contains("domain=~\"$domain\"");
                if (e.contains("imexprobe_pair_")) {
                    // pair series carry the domain themselves: no join needed
                    assertThat(e).doesNotContain("and on (namespace, pod) imexprobe_gpu_imex_domain_info");
                }
                filtered++;
            }
        }
        assertThat(filtered).isGreaterThanOrEqualTo(15);
    }

    @Test
    void panelsHaveUniqueIdsAndEveryQueryUsesTheDatasourceVariable() throws Exception {
        Set<Integer> ids = new HashSet<>();
        int queries = 0;
        for (JsonNode p : panels(dashboard())) {
            assertThat(ids.add(p.get("id").asInt())).as("panel id %s unique", p.get("id")).isTrue();
            if ("row".equals(p.get("type").asText())) {
                continue;
            }
            assertThat(p.at("/datasource/uid").asText()).as("datasource of %s", p.get("title")).isEqualTo("${datasource}");
            assertThat(p.get("targets")).as("targets of %s", p.get("title")).isNotEmpty();
            for (JsonNode t : p.get("targets")) {
                assertThat(t.at("/datasource/uid").asText()).isEqualTo("${datasource}");
                assertThat(t.get("expr").asText()).isNotBlank();
                queries++;
            }
        }
        assertThat(queries).isGreaterThanOrEqualTo(15);
    }

    /** Every metric name the dashboard's queries and variables use (checked against a live scrape: DashboardScrapeIT). */
    static Set<String> usedMetrics() throws Exception {
        Set<String> used = new TreeSet<>();
        for (JsonNode p : panels(dashboard())) {
            if (p.has("targets")) {
                for (JsonNode t : p.get("targets")) {
                    used.addAll(metricsIn(t.get("expr").asText()));
                }
            }
        }
        for (JsonNode v : dashboard().at("/templating/list")) {
            if (v.has("definition")) {
                used.addAll(metricsIn(v.get("definition").asText()));
            }
        }
        return used;
    }

    @Test
    void queriesNameTheMetricsTheDashboardIsFor() throws Exception {
        Set<String> used = usedMetrics();
        // What the dashboard is for: the matrix, failures by stage and CUresult, durations, node state, agents.
        assertThat(used).contains("imexprobe_pair_up", "imexprobe_stage_results_total",
                "imexprobe_stage_duration_seconds_bucket", "imexprobe_imex_channels", "imexprobe_imex_daemon_ready",
                "imexprobe_fabric_state", "imexprobe_fabric_healthy", "imexprobe_allocations_live",
                "imexprobe_pairs", "imexprobe_channel_mode", "up");
    }

    @Test
    void notProbedIsToldApartFromFailedAndObserversFromBrokenChannels() throws Exception {
        List<JsonNode> panels = panels(dashboard());
        JsonNode notProbed = panelQuerying(panels, "state=\"not_probed\"");
        JsonNode failed = panelQuerying(panels, "state=\"failed\"");
        assertThat(notProbed.path("id").asInt()).as("not probed and failed in separate panels")
                .isNotEqualTo(failed.path("id").asInt());
        assertThat(notProbed.at("/targets/0/expr").asText()).startsWith("sum by (reason) (imexprobe_pairs{");
        assertThat(failed.at("/targets/0/expr").asText()).startsWith("sum by (reason) (imexprobe_pairs{");
        assertThat(notProbed.get("title").asText()).contains("never alerting");
        JsonNode byState = panelQuerying(panels, "sum by (state) (imexprobe_pairs{");
        assertThat(byState.toString()).contains("\"options\":\"failed\"", "\"options\":\"not_probed\"");

        // The node table: an observer's missing channel is left empty, never a red 0, and its mode is a column.
        JsonNode table = panelQuerying(panels, "imexprobe_imex_channels{");
        assertThat(table.at("/targets/0/expr").asText())
                .contains("unless on (node) imexprobe_channel_mode{", "mode=\"observer\"");
        assertThat(table.toString()).contains("max by (node, mode) (imexprobe_channel_mode{", "\"channel mode\"");
        // nor is the channel of a node whose GPUs all cannot make fabric memory (FABRIC_UNSUPPORTED): it needs none
        assertThat(table.at("/targets/0/expr").asText())
                .endsWith("unless on (node) imexprobe_gpus_fabric_capable{job=~\"$job\",node=~\"$node\"} == 0");
        assertThat(table.toString()).contains("max by (node) (imexprobe_gpus_fabric_capable{", "\"GPUs with fabric memory\"");
    }

    /** A pair's probes summed over pods, as alert ImexprobePairImportIntermittent sums them, over the dashboard's range. */
    static final String PAIR = "namespace, domain, source_node, source_gpu, target_node, target_gpu";

    static String probesInRange(String verdict) {
        return "sum by (" + PAIR + ") (increase(imexprobe_probes_total{job=~\"$job\",node=~\"$node\",domain=~\"$domain\","
                + verdict + "}[$__range]))";
    }

    @Test
    void pairsFailingNowAndThenHaveATableRightAfterTheFailingPairs() throws Exception {
        List<JsonNode> top = new ArrayList<>();
        dashboard().get("panels").forEach(top::add);
        JsonNode failing = top.stream().filter(p -> p.path("title").asText().equals("Failing pairs: last CUresult"))
                .findFirst().orElseThrow();
        JsonNode p = top.get(top.indexOf(failing) + 1);
        assertThat(p.get("title").asText()).isEqualTo("Pairs failing now and then (failed share of probes in range)");
        assertThat(p.get("type").asText()).isEqualTo("table");
        // below the first row's two tables, full width
        assertThat(p.at("/gridPos/y").asInt()).isEqualTo(failing.at("/gridPos/y").asInt() + failing.at("/gridPos/h").asInt());
        assertThat(p.at("/gridPos/w").asInt()).isEqualTo(24);
        assertThat(p.get("description").asText()).contains("ImexprobePairImportIntermittent", "alerts.pairIntermittentWindow (30m)");

        // the alert's measure: failed share per pair, only pairs with a failure and a pass in the range (failing every
        // probe is the other table's); the counts restricted to the same pairs, so the merge adds no rows
        String fail = probesInRange("verdict=\"fail\"");
        String pass = probesInRange("verdict=\"pass\"");
        String all = probesInRange("verdict=~\"pass|fail\"");
        String on = " and on (" + PAIR + ") ";
        assertThat(p.get("targets")).extracting(t -> t.get("refId").asText()).containsExactly("A", "B", "C");
        assertThat(p.at("/targets/0/expr").asText()).isEqualTo("sort_desc(" + fail + " / " + all + " > 0" + on + pass + " > 0)");
        assertThat(p.at("/targets/1/expr").asText()).isEqualTo(fail + " > 0" + on + pass + " > 0");
        assertThat(p.at("/targets/2/expr").asText()).isEqualTo(all + on + fail + " > 0" + on + pass + " > 0");
        assertThat(p.get("targets")).allSatisfy(t -> {
            assertThat(t.get("instant").asBoolean()).isTrue();
            assertThat(t.get("range").asBoolean()).isFalse();
            assertThat(t.get("format").asText()).isEqualTo("table");
        });

        // one row per pair, largest share first, the share as a percentage
        assertThat(p.at("/transformations/0/id").asText()).isEqualTo("merge");
        assertThat(p.at("/transformations/1/options/renameByName").toString())
                .contains("\"Value #A\":\"failed share\"", "\"Value #B\":\"failed probes\"", "\"Value #C\":\"probes\"");
        assertThat(p.at("/transformations/2/id").asText()).isEqualTo("sortBy");
        assertThat(p.at("/transformations/2/options/sort/0/field").asText()).isEqualTo("failed share");
        assertThat(p.at("/transformations/2/options/sort/0/desc").asBoolean()).isTrue();
        JsonNode share = null;
        for (JsonNode o : p.at("/fieldConfig/overrides")) {
            if (o.at("/matcher/options").asText().equals("failed share")) {
                share = o;
            }
        }
        assertThat(share).as("an override for the share").isNotNull();
        assertThat(share.toString()).contains("{\"id\":\"unit\",\"value\":\"percentunit\"}");
    }

    @Test
    void panelsDoNotOverlap() throws Exception {
        Set<String> cells = new HashSet<>();
        for (JsonNode p : panels(dashboard())) {
            JsonNode g = p.get("gridPos");
            assertThat(g.get("x").asInt() + g.get("w").asInt()).as("%s within 24 columns", p.get("title")).isLessThanOrEqualTo(24);
            for (int x = g.get("x").asInt(); x < g.get("x").asInt() + g.get("w").asInt(); x++) {
                for (int y = g.get("y").asInt(); y < g.get("y").asInt() + g.get("h").asInt(); y++) {
                    assertThat(cells.add(x + "," + y)).as("%s overlaps another panel at %s,%s", p.get("title"), x, y).isTrue();
                }
            }
        }
    }

    private static JsonNode panelQuerying(List<JsonNode> panels, String fragment) {
        return panels.stream().filter(p -> p.has("targets") && java.util.stream.StreamSupport
                        .stream(p.get("targets").spliterator(), false)
                        .anyMatch(t -> t.path("expr").asText().contains(fragment)))
                .findFirst().orElseThrow(() -> new AssertionError("no panel queries " + fragment));
    }

    @Test
    void metricScannerSeesThroughPromQl() {
        assertThat(metricsIn("sum by (stage) (increase(imexprobe_stage_results_total{cu_result!~\"CUDA_SUCCESS|none\"}[5m]))"))
                .containsExactly("imexprobe_stage_results_total");
        assertThat(metricsIn("label_join(imexprobe_pair_up{job=~\"$job\"}, \"source\", \" \", \"source_node\")"))
                .containsExactly("imexprobe_pair_up");
        assertThat(metricsIn("sum(up{job=~\"$job\"}) / count(imexprobe_bogus_total)"))
                .containsExactlyInAnyOrder("up", "imexprobe_bogus_total");
    }

    @Test
    void failurePanelsExcludeSuccessAndPercentilesUseTheHistogram() throws Exception {
        List<String> exprs = new ArrayList<>();
        panels(dashboard()).forEach(p -> {
            if (p.has("targets")) {
                p.get("targets").forEach(t -> exprs.add(t.get("expr").asText()));
            }
        });
        assertThat(exprs).filteredOn(e -> e.contains("imexprobe_stage_results_total"))
                .isNotEmpty().allSatisfy(e -> assertThat(e).contains("cu_result!~\"CUDA_SUCCESS|none\""));
        assertThat(exprs).anySatisfy(e -> assertThat(e)
                .contains("histogram_quantile(0.95, sum by (le, stage) (rate(imexprobe_stage_duration_seconds_bucket"));
        assertThat(exprs).anySatisfy(e -> assertThat(e).contains("imexprobe_stage_duration_seconds_sum")
                .contains("imexprobe_stage_duration_seconds_count"));
    }

    static Set<String> metricsIn(String expr) {
        // Label values and matchers are quoted; strip strings first so "source_node" etc. never count.
        String unquoted = expr.replaceAll("\"(\\\\.|[^\"\\\\])*\"", "\"\"");
        Set<String> found = new TreeSet<>();
        Matcher m = METRIC.matcher(unquoted);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }

    private static JsonNode find(JsonNode vars, String name) {
        for (JsonNode v : vars) {
            if (name.equals(v.get("name").asText())) {
                return v;
            }
        }
        throw new AssertionError("no variable " + name);
    }
}
