package dev.imexprobe.ship;

import static dev.imexprobe.ship.Chart.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.imexprobe.ship.PrometheusServer.Alert;
import dev.imexprobe.ship.PrometheusServer.Series;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;

/**
 * The chart's alerts and the Grafana dashboard against a real Prometheus scraping real agents.
 *
 * <p>Three agents on the fake driver ("nodes" node-a, node-b, node-c of one simulated NVLink domain, static peer
 * list, mesh interval 2 s) and one Prometheus started here: scrape and evaluation every 1 s, job {@code imexprobe}
 * on /actuator/prometheus, one static target per agent carrying the labels the chart's ServiceMonitor gives
 * (node and pod by its relabelling; namespace, service, endpoint, container as the Prometheus Operator adds them),
 * and as rule file the chart's PrometheusRule rendered by real Helm with short durations ({@code alerts.*For=3s},
 * {@code agent.meshInterval=2s}; AlertRulesTest checks the shipped values with promtool). Then, one fault at a
 * time, each alert is watched through /api/v1/alerts going pending, then firing (not before its {@code for:}),
 * with exactly the labels an operator would route on, and then resolving:
 * <ol>
 * <li>ImexprobePairImportFailing and ImexprobeTargetUnreachable: node-c's imports fail with 800
 *     (cuMemImportFromShareableHandle=800), so node-a→node-c and node-b→node-c fail: two sources into one target
 *     (why three agents: targetMinSources is 2). While it fails, every dashboard query is evaluated.</li>
 * <li>ImexprobeNoImexChannel and ImexprobeDomainFailing: node-b's channel file is removed, so 4 of the domain's 6
 *     pairs fail (node-b's exports and imports).</li>
 * <li>ImexprobeProbesStale: node-a's NVML fabric query hangs (nvmlDeviceGetGpuFabricInfoV=hang). The mesh
 *     refreshes the node report at the start of each round, so the round stalls while scrapes go on: exactly
 *     "the agent answers scrapes but its probe loop has stalled".</li>
 * <li>ImexprobeAgentDown: node-c is killed (SIGKILL), so its {@code up} is 0.</li>
 * </ol>
 *
 * <p>ImexprobePairImportIntermittent (promtool's cases only) may go pending, never firing, for the pairs each fault
 * fails for good, and nothing else may: the rule leaves a pair that has failed for alerts.pairFailingFor to
 * ImexprobePairImportFailing.
 *
 * <p>How it can fail: alerts are matched on their exact label sets and the cu_result annotation (a rule that drops
 * or renames a label, or a cu_result template that names the wrong code, fails the match and the wait times out);
 * only the alerts the fault explains may be active at each step; each rule must evaluate without error. A broken copy of the pair rule
 * (a job selector that matches nothing, as a mis-rendered job name would) is loaded beside the real rules; it is
 * valid PromQL, so promtool accepts it, and this test asserts that it never fires while the real rule does:
 * the same wait that finds the real alert would time out on it. The dashboard check asserts that a query for an
 * unknown node returns nothing, so "non-empty" is not vacuous.
 *
 * <p>Skipped when Prometheus or promtool is not installed ({@code apt-get install -y --no-install-recommends
 * prometheus}; .ci/run installs it). Logs, the rules, the Prometheus configuration and a timeline of what fired
 * when stay in target/mesh-it/LivePrometheusIT.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LivePrometheusIT {

    static final Duration MESH_INTERVAL = Duration.ofSeconds(2);
    /**
     * Every alert's {@code for:}: long enough that pending is seen (polls every 250 ms, evaluations every 1 s) and
     * distinct from the canary's 1 s. Waited out once per alert phase and in the silent window (3 s: ~10 s less
     * than 5 s over the class).
     */
    static final Duration FOR = Duration.ofSeconds(3);
    static final String FOR_TEXT = FOR.toSeconds() + "s";
    /** From a fault to its alert firing: a round (2 s), a scrape, an evaluation, then FOR; generous for 2 cores. */
    static final Duration FIRE_WITHIN = Duration.ofSeconds(120);
    static final Duration SETTLE = Duration.ofSeconds(120);
    static final String JOB = "imexprobe";
    static final String NAMESPACE = Chart.NAMESPACE;
    static final String CANARY = "LiveTestCanaryPairRuleWrongJob";
    static final List<String> NODES = List.of("node-a", "node-b", "node-c");

    static MeshAgents mesh;
    static final Map<String, Agent> AGENTS = new LinkedHashMap<>();
    static final Map<String, String> GPU = new LinkedHashMap<>();
    /** Each agent's GPU's IMEX domain, as its /v1/node says. */
    static final Map<String, String> DOMAIN = new LinkedHashMap<>();
    static PrometheusServer prometheus;
    static Path dir;
    static final List<String> TIMELINE = new ArrayList<>();
    static Instant started;
    /** When every target was first up: scrapes before that met agents still starting. */
    static Instant allUp;

    // ---- set-up -----------------------------------------------------------------------------------------------

    @BeforeAll
    static void startAgentsAndPrometheus() throws Exception {
        Optional<Path> prom = Tools.onPath("prometheus");
        Optional<Path> promtool = Tools.onPath("promtool");
        assumeTrue(prom.isPresent() && promtool.isPresent(), "prometheus/promtool not installed (apt-get install -y "
                + "--no-install-recommends prometheus; .ci/run does): live alert test skipped");
        started = Instant.now();
        mesh = MeshAgents.forTest(LivePrometheusIT.class);
        dir = mesh.dir();

        // The chart's rules, rendered by real Helm with the short durations of a live test.
        Map<String, Object> v = values("prometheusRule.enabled", true, "imex.channel.mode", "hostPath", "agent.meshInterval", MESH_INTERVAL.toSeconds() + "s",
                "alerts.pairFailingFor", FOR_TEXT, "alerts.targetUnreachableFor", FOR_TEXT, "alerts.domainFailingFor", FOR_TEXT, "alerts.agentDownFor", FOR_TEXT,
                "alerts.probesStaleFor", FOR_TEXT, "alerts.noImexChannelFor", FOR_TEXT, "alerts.driverCallStuckFor", FOR_TEXT,
                "alerts.fabricUnhealthyFor", FOR_TEXT, "alerts.pairIntermittentFor", FOR_TEXT,
                "alerts.runbookBaseUrl", "https://runbooks.example.com/imexprobe/docs/findings.md");
        List<Map<String, Object>> groups = Chart.at(Chart.render(v).one("PrometheusRule"), "spec.groups");
        Files.writeString(dir.resolve("rules.yaml"), yaml(Map.of("groups", groups)));
        Files.writeString(dir.resolve("canary-rules.yaml"), yaml(Map.of("groups", List.of(canaryGroup(groups)))));
        String rules = Files.readString(dir.resolve("rules.yaml"));
        assertThat(rules).as("stale threshold 3 × 2 s").contains("> 6\n").contains("for: " + FOR_TEXT)
                .doesNotContain("for: 5m").doesNotContain("for: 1m");
        Tools.Result check = Tools.run(dir, 120, List.of(promtool.get().toString(), "check", "rules", "rules.yaml",
                "canary-rules.yaml"));
        assertThat(check.exitCode()).as(check.output()).isZero();

        for (String n : NODES) {
            // A long driver deadline: the stale test holds a driver call for longer than three intervals.
            AGENTS.put(n, mesh.add(n, Map.of("IMEXPROBE_MESH_INTERVAL", MESH_INTERVAL.toSeconds() + "s",
                    "IMEXPROBE_MESH_JITTER", "0.1", "IMEXPROBE_MESH_MAXBACKOFF", "8s", "IMEXPROBE_DRIVER_TIMEOUT", "60s")));
        }
        for (Agent a : AGENTS.values()) {
            a.env("IMEXPROBE_PEERS_STATIC", mesh.staticList());
        }
        mesh.agents().forEach(Agent::start);
        for (Agent a : AGENTS.values()) {
            a.awaitReady();
        }
        for (Agent a : AGENTS.values()) {
            GPU.put(a.node(), a.json("/v1/node").path("gpus").get(0).path("uuid").asString());
            DOMAIN.put(a.node(), a.json("/v1/node").path("gpus").get(0).path("imexDomain").asString());
        }
        assertThat(GPU.values()).doesNotHaveDuplicates().allSatisfy(u -> assertThat(u).startsWith("GPU-"));
        Files.writeString(dir.resolve("dcgm-rules.yaml"), yaml(Map.of("groups", List.of(dcgmGroup()))));
        Files.writeString(dir.resolve("prometheus.yml"), prometheusConfig());
        prometheus = PrometheusServer.start(prom.get(), dir, dir.resolve("prometheus.yml"));
        prometheus.awaitReady(dir.resolve("prometheus.yml"));
        event("setup", started, "3 agents ready and Prometheus ready");
    }

    /** The labels a ServiceMonitor-made scrape gives each agent (besides job and instance). */
    static Map<String, String> targetLabels(Agent a) {
        Map<String, String> l = new LinkedHashMap<>();
        l.put("namespace", NAMESPACE);
        l.put("service", JOB);
        l.put("endpoint", "http");
        l.put("container", "agent");
        l.put("pod", pod(a.node()));
        l.put("node", a.node());
        return l;
    }

    static String pod(String node) {
        return "imexprobe-" + node.substring(node.length() - 1) + "x7q2";
    }

    static String prometheusConfig() {
        StringBuilder s = new StringBuilder("""
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                  evaluation_interval: 1s
                rule_files:
                  - rules.yaml
                  - canary-rules.yaml
                  - dcgm-rules.yaml
                scrape_configs:
                  - job_name: %s
                    metrics_path: /actuator/prometheus
                    static_configs:
                """.formatted(JOB));
        for (Agent a : AGENTS.values()) {
            s.append("      - targets: ['").append(a.hostPort()).append("']\n        labels:\n");
            targetLabels(a).forEach((k, v) -> s.append("          ").append(k).append(": ").append(v).append('\n'));
        }
        return s.toString();
    }

    /**
     * The pair rule again under another name, its job selector pointing at a job nobody scrapes, for 1 s: what a
     * chart would ship if its job helper and the ServiceMonitor disagreed. promtool check rules passes it.
     */
    static Map<String, Object> canaryGroup(List<Map<String, Object>> groups) {
        @SuppressWarnings("unchecked")
        Map<String, Object> pair = ((List<Map<String, Object>>) groups.getFirst().get("rules")).stream()
                .filter(r -> "ImexprobePairImportFailing".equals(r.get("alert"))).findFirst().orElseThrow();
        Map<String, Object> canary = new LinkedHashMap<>(pair);
        canary.put("alert", CANARY);
        canary.put("expr", ((String) pair.get("expr")).replace("job=\"" + JOB + "\"", "job=\"" + JOB + "-typo\""));
        canary.put("for", "1s");
        assertThat((String) canary.get("expr")).contains(JOB + "-typo").doesNotContain("job=\"" + JOB + "\"");
        return Map.of("name", "live-test-canary", "rules", List.of(canary));
    }

    /**
     * What dcgm-exporter would export for each agent's GPU 0, as recording rules (a series with exactly its labels:
     * {@code gpu} the index, {@code UUID}, {@code Hostname}, {@code modelName}), so that the join can be queried.
     */
    static Map<String, Object> dcgmGroup() {
        List<Map<String, Object>> rules = new ArrayList<>();
        GPU.forEach((node, uuid) -> rules.add(Map.of("record", "DCGM_FI_DEV_GPU_TEMP", "expr", "vector(41)",
                "labels", Map.of("gpu", "0", "UUID", uuid, "Hostname", node, "modelName", "NVIDIA GB200",
                        "job", "dcgm-exporter"))));
        return Map.of("name", "synthetic-dcgm-exporter", "rules", rules);
    }

    static String yaml(Object o) {
        DumperOptions d = new DumperOptions();
        d.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        d.setWidth(10_000);
        return new Yaml(d).dump(o);
    }

    @AfterAll
    static void stopEverything() throws IOException {
        try {
            if (dir != null) {
                event("end", started, "test class done");
                Files.write(dir.resolve("timeline.txt"), TIMELINE);
                System.out.println("LivePrometheusIT timeline:\n  " + String.join("\n  ", TIMELINE));
            }
        } finally {
            if (prometheus != null) {
                prometheus.close();
            }
            if (mesh != null) {
                mesh.close();
            }
        }
    }

    // ---- the healthy domain ---------------------------------------------------------------------------------

    @Test
    @Order(1)
    void everyAgentIsScrapedWithServiceMonitorLabelsAndTheRulesEvaluateSilently() {
        Instant t0 = Instant.now();
        List<JsonNode> targets = eventually("3 targets up", prometheus::targets,
                ts -> ts.size() == 3 && ts.stream().allMatch(t -> "up".equals(t.path("health").asString())));
        for (JsonNode t : targets) {
            Agent a = AGENTS.get(t.path("labels").path("node").asString());
            assertThat(a).as("target %s", t).isNotNull();
            Map<String, String> expected = new LinkedHashMap<>(targetLabels(a));
            expected.put("job", JOB);
            expected.put("instance", a.hostPort());
            Map<String, String> actual = new LinkedHashMap<>();
            t.path("labels").properties().forEach(e -> actual.put(e.getKey(), e.getValue().asString()));
            assertThat(actual).isEqualTo(expected);
        }
        allUp = Instant.now();
        // The agents name no node/pod/namespace themselves (that would turn ours into exported_*).
        assertThat(prometheus.query("{job=\"" + JOB + "\", exported_node=~\".+\"}")).isEmpty();

        eventually("all 6 ordered pairs measured and up", () -> prometheus.query(
                "count(imexprobe_pair_up{job=\"" + JOB + "\"} == 1)"), r -> r.size() == 1 && r.getFirst().value() == 6);
        event("healthy", t0, "6/6 pairs up in Prometheus");

        // DCGM join: per-GPU series carry dcgm-exporter's gpu (index) and UUID, so they join on UUID directly...
        List<Series> perGpu = eventually("imexprobe_fabric_healthy joins DCGM on UUID", () -> prometheus.query(
                "imexprobe_fabric_healthy{job=\"" + JOB + "\"} * on (UUID) group_left (Hostname, modelName) "
                        + "DCGM_FI_DEV_GPU_TEMP"), r -> r.size() == NODES.size());
        assertThat(perGpu).allSatisfy(x -> {
            assertThat(x.labels().get("UUID")).isEqualTo(GPU.get(x.labels().get("node")));
            assertThat(x.labels()).containsEntry("Hostname", x.labels().get("node")).containsEntry("gpu", "0")
                    .containsEntry("modelName", "NVIDIA GB200");
        });
        // ...and pair series (source_gpu/target_gpu are the UUIDs) join after a label_replace, as docs/metrics.md shows.
        List<Series> pairs = prometheus.query("label_replace(imexprobe_pair_up{job=\"" + JOB + "\"}, \"UUID\", \"$1\", "
                + "\"target_gpu\", \"(.+)\") * on (UUID) group_left (Hostname, modelName) DCGM_FI_DEV_GPU_TEMP");
        assertThat(pairs).hasSize(6).allSatisfy(x -> {
            assertThat(x.labels().get("UUID")).isEqualTo(x.labels().get("target_gpu"));
            assertThat(x.labels().get("Hostname")).isEqualTo(x.labels().get("target_node"));
            assertThat(x.value()).isEqualTo(41.0); // pair_up 1 × temperature 41
        });
        event("healthy", t0, "imexprobe per-GPU and pair series join DCGM_FI_DEV_GPU_TEMP on UUID");

        List<JsonNode> rules = eventually("every rule evaluated without error", prometheus::rules,
                rs -> rs.size() == AlertRulesTest.ALERTS.size() + 1 && rs.stream().allMatch(r -> "ok".equals(r.path("health").asString())));
        assertThat(rules.stream().map(r -> r.path("name").asString()).toList()).containsExactlyInAnyOrderElementsOf(
                concat(AlertRulesTest.ALERTS, List.of(CANARY)));
        assertThat(rules).allSatisfy(r -> assertThat(r.path("duration").asDouble())
                .isEqualTo(r.path("name").asString().equals(CANARY) ? 1.0 : (double) FOR.toSeconds()));

        // Silent while healthy: once anything left from the start-up has cleared (an agent reports a zero
        // last-round time until its first round), nothing goes pending or fires for longer than any for:.
        eventually("no alert active once healthy", prometheus::alerts, List::isEmpty);
        event("healthy", t0, "no alert active");
        long until = System.nanoTime() + FOR.plusSeconds(5).toNanos();
        while (System.nanoTime() < until) {
            assertThat(prometheus.alerts()).as("alerts of a healthy domain").isEmpty();
            PrometheusServer.sleep(500);
        }
        event("healthy", t0, "silent for " + FOR.plusSeconds(5).toSeconds() + " s");
    }

    // ---- a pair that cannot import: pair alert, target alert, dashboard ---------------------------------------

    @Test
    @Order(2)
    void importFailureIntoOneTargetFiresPairAndTargetAlertsAndEveryDashboardQueryHasData() {
        quiet();
        Agent c = AGENTS.get("node-c");
        Instant t0 = Instant.now();
        c.machine().fault("cuMemImportFromShareableHandle=800");
        event("import-800", t0, "fault set on node-c: cuMemImportFromShareableHandle=800");
        List<Expectation> expected = List.of(
                pairAlert("node-a", "node-c", "CUDA_ERROR_NOT_PERMITTED"),
                pairAlert("node-b", "node-c", "CUDA_ERROR_NOT_PERMITTED"),
                targetAlert("node-c"));
        Map<Expectation, Sighting> seen;
        try {
            seen = awaitPendingThenFiring("import-800", t0, expected,
                    intermittentPendingAtMost("import-800", t0, a -> a.labels().get("target_node").equals("node-c")));

            Alert ac = seen.get(expected.get(0)).firing();
            assertThat(ac.value()).as("the CUresult code").isEqualTo(800.0);
            assertThat(ac.annotations().get("summary")).isEqualTo("IMEX import from node-a " + GPU.get("node-a")
                    + " into node-c " + GPU.get("node-c") + " fails: CUDA_ERROR_NOT_PERMITTED");
            // The description's query() template ran against the live series: the exporter's top failing stage.
            assertThat(ac.annotations().get("description")).contains("for " + FOR_TEXT, "code 800",
                    "Most frequent failing stage on that agent in the last 15 minutes: import (CUDA_ERROR_NOT_PERMITTED).",
                    "pod " + pod("node-a"));
            assertThat(ac.annotations().get("runbook_url")).endsWith("/docs/findings.md#imexprobepairimportfailing");
            Alert target = seen.get(expected.get(2)).firing();
            assertThat(target.value()).as("failing source nodes").isEqualTo(2.0);
            assertThat(target.annotations().get("summary"))
                    .isEqualTo("IMEX target node-c " + GPU.get("node-c") + " fails imports from 2 source nodes: suspect the target");

            // A wrong expectation does not match: the matcher discriminates (cu_result 101 instead of 800).
            assertThat(prometheus.alerts()).noneMatch(pairAlert("node-a", "node-c", "CUDA_ERROR_INVALID_DEVICE")::matches)
                    .noneMatch(pairAlert("node-c", "node-a", "CUDA_ERROR_NOT_PERMITTED")::matches);
            // The broken copy of the rule (wrong job) never fired, though it waits 1 s and the real one 10 s.
            assertThat(prometheus.query("ALERTS{alertname=\"" + CANARY + "\"}")).isEmpty();

            everyDashboardQueryReturnsData();
            event("import-800", t0, "every dashboard query returned data");
        } finally {
            c.machine().clearFaults();
        }
        Instant cleared = Instant.now();
        event("import-800", t0, "fault cleared");
        awaitResolved("import-800", cleared, expected);
        assertThat(prometheus.rules()).filteredOn(r -> !r.path("name").asString().equals(CANARY))
                .allSatisfy(r -> assertThat(r.path("state").asString()).as(r.path("name").asString()).isEqualTo("inactive"));
    }

    // ---- the dashboard --------------------------------------------------------------------------------------

    /** Grafana's variables as a dashboard user on this Prometheus would have them. */
    static String substitute(String expr, String nodeRegex) {
        return substitute(expr, nodeRegex, String.join("|", new java.util.TreeSet<>(DOMAIN.values())));
    }

    static String substitute(String expr, String nodeRegex, String domainRegex) {
        String out = expr.replace("${datasource}", "prometheus").replace("$datasource", "prometheus")
                .replace("${job}", JOB).replace("$job", JOB)
                .replace("${domain}", domainRegex).replace("$domain", domainRegex)
                .replace("${node}", nodeRegex).replace("$node", nodeRegex)
                .replace("$__rate_interval", "30s").replace("$__interval", "5s").replace("$__range", "10m");
        assertThat(out).as("every variable of %s substituted", expr).doesNotContain("$");
        return out;
    }

    static void everyDashboardQueryReturnsData() {
        JsonNode dash;
        try {
            dash = DashboardTest.dashboard();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        String nodes = String.join("|", NODES);
        // The variables' own queries list this job and these nodes.
        assertThat(prometheus.labelValues("job", "imexprobe_build_info")).containsExactly(JOB);
        assertThat(prometheus.labelValues("node", "imexprobe_build_info{job=~\"" + JOB + "\"}"))
                .containsExactlyInAnyOrderElementsOf(NODES);

        SoftAssertions soft = new SoftAssertions();
        int queries = 0;
        for (JsonNode p : DashboardTest.panels(dash)) {
            if (!p.has("targets")) {
                continue;
            }
            for (JsonNode t : p.get("targets")) {
                String what = "panel " + p.path("id").asInt() + " \"" + p.path("title").asString() + "\" "
                        + t.path("refId").asString();
                String expr = substitute(t.path("expr").asString(), nodes);
                List<Series> instant = prometheus.query(expr);
                soft.assertThat(instant).as("%s instant: %s", what, expr).isNotEmpty();
                soft.assertThat(instant).as("%s has a number: %s", what, expr)
                        .anySatisfy(s -> assertThat(Double.isFinite(s.value())).isTrue());
                if (t.path("range").asBoolean(false)) {
                    soft.assertThat(prometheus.queryRange(expr, Duration.ofSeconds(60), Duration.ofSeconds(5)))
                            .as("%s range: %s", what, expr).isNotEmpty();
                }
                queries++;
            }
        }
        soft.assertAll();
        assertThat(queries).isGreaterThanOrEqualTo(15);
        // Non-empty is not vacuous: the same first query for a node nobody runs on has no data.
        String first = DashboardTest.panels(dash).stream().filter(p -> p.has("targets")).findFirst().orElseThrow()
                .get("targets").get(0).path("expr").asString();
        assertThat(prometheus.query(substitute(first, "no-such-node"))).isEmpty();
        // The domain variable's own query lists the agents' domain, and a domain nobody is in empties every panel
        // that follows it (the pair panels by their label, the agent panels through imexprobe_gpu_imex_domain_info).
        assertThat(prometheus.labelValues("domain", "imexprobe_gpu_imex_domain_info{job=~\"" + JOB + "\"}"))
                .containsExactlyInAnyOrderElementsOf(new java.util.TreeSet<>(DOMAIN.values()));
        for (JsonNode p : DashboardTest.panels(dash)) {
            for (JsonNode t : p.path("targets")) {
                String e = t.path("expr").asString();
                if (e.contains("$domain")) {
                    assertThat(prometheus.query(substitute(e, nodes, "host:no-such-domain")))
                            .as("panel %s for an unknown domain: %s", p.path("title").asString(), e).isEmpty();
                }
            }
        }
    }

    // ---- no IMEX channel ------------------------------------------------------------------------------------

    @Test
    @Order(3)
    void anAgentWithoutAChannelFiresNoImexChannel() {
        quiet();
        Agent b = AGENTS.get("node-b");
        Instant t0 = Instant.now();
        b.machine().removeChannels();
        event("no-channel", t0, "node-b's channel0 removed");
        Expectation noChannel = agentAlert("ImexprobeNoImexChannel", b);
        // Without a channel node-b can neither create (its exports) nor import: its pairs fail both ways, 4 of the
        // domain's 6, so the domain alert fires (more than half); the pair alerts and the target alert for node-b
        // may join in; nothing about the other agents may.
        Expectation domain = domainAlert(DOMAIN.get("node-b"));
        Predicate<Alert> explained = a -> (a.name().equals("ImexprobePairImportFailing")
                && (a.labels().get("source_node").equals("node-b") || a.labels().get("target_node").equals("node-b"))
                && "CUDA_ERROR_NOT_PERMITTED".equals(a.annotations().get("cu_result")))
                || (a.name().equals("ImexprobeTargetUnreachable") && a.labels().get("target_node").equals("node-b"))
                || intermittentPendingAtMost("no-channel", t0, x -> x.labels().get("source_node").equals("node-b")
                        || x.labels().get("target_node").equals("node-b")).test(a);
        try {
            Map<Expectation, Sighting> seen = awaitPendingThenFiring("no-channel", t0, List.of(noChannel, domain),
                    explained);
            Alert failing = seen.get(domain).firing();
            assertThat(failing.value()).as("share of the domain's pairs failing").isCloseTo(4.0 / 6, within(0.01));
            assertThat(failing.annotations().get("summary"))
                    .isEqualTo("IMEX domain " + DOMAIN.get("node-b") + ": 66.67% of its pairs fail");
            Alert alert = seen.get(noChannel).firing();
            assertThat(alert.value()).isZero();
            assertThat(alert.annotations().get("summary"))
                    .isEqualTo("imexprobe agent " + pod("node-b") + " on node node-b has no usable IMEX channel");
        } finally {
            b.machine().channels(0);
        }
        Instant restored = Instant.now();
        event("no-channel", t0, "channel0 back");
        awaitResolved("no-channel", restored, List.of(noChannel, domain));
        eventually("every alert of the channel fault resolved", prometheus::alerts, List::isEmpty);
        event("no-channel", t0, "all alerts resolved");
    }

    // ---- a stalled probe loop -------------------------------------------------------------------------------

    @Test
    @Order(4)
    void aHungDriverCallStallsTheProbeLoopAndFiresProbesStale() {
        quiet();
        Agent a = AGENTS.get("node-a");
        Instant t0 = Instant.now();
        // The mesh refreshes the node report (NVML fabric info included) at the start of every round, on the driver
        // pool under its deadline (60 s here): a hang holds the round that long, while scrapes are served from the
        // last report. With the default 5 s deadline a round would go on after 5 s, under three 2 s intervals.
        a.machine().fault("nvmlDeviceGetGpuFabricInfoV=hang");
        event("stale", t0, "fault set on node-a: nvmlDeviceGetGpuFabricInfoV=hang");
        Expectation stale = agentAlert("ImexprobeProbesStale", a);
        try {
            Map<Expectation, Sighting> seen = awaitPendingThenFiring("stale", t0, List.of(stale), x -> false);
            Alert alert = seen.get(stale).firing();
            assertThat(alert.value()).as("seconds since the last round").isGreaterThan(6.0 + FOR.toSeconds() - 1);
            assertThat(alert.annotations().get("description")).contains("more than 6 s, 3 intervals of 2s");
            assertThat(a.alive()).isTrue();
        } finally {
            a.machine().clearFaults();
        }
        Instant cleared = Instant.now();
        event("stale", t0, "hang released");
        awaitResolved("stale", cleared, List.of(stale));
        eventually("no alert after the stall", prometheus::alerts, List::isEmpty);
    }

    // ---- an agent killed ------------------------------------------------------------------------------------

    @Test
    @Order(5)
    void aKilledAgentFiresAgentDownAndItsPairsFailWithoutADriverCode() {
        quiet();
        // Until now every scrape of every agent must have worked: a scrape that fails (a timeout, or a 500 as the
        // DuplicateLabelsException of re-registered gauges gave) is up == 0 and the start of a false AgentDown.
        String window = "[" + Duration.between(allUp, Instant.now()).toSeconds() + "s]";
        String up = "up{job=\"" + JOB + "\"}" + window;
        double scrapes = prometheus.query("sum(count_over_time(" + up + "))").getFirst().value();
        // One query, so both sums see the same samples: two queries a scrape apart read -1 failed (a window that
        // slid between them, seen under two Failsafe JVMs).
        double failed = prometheus.query("sum(count_over_time(" + up + ") - sum_over_time(" + up + "))").getFirst()
                .value();
        double slowest = prometheus.query("max(max_over_time(scrape_duration_seconds{job=\"" + JOB + "\"}" + window
                + "))").getFirst().value();
        List<String> failures = prometheus.scrapeFailures();
        event("scrapes", started, String.format(Locale.ROOT, "%.0f scrapes since all were up, %.0f failed, slowest %.3f s;"
                + " failed scrapes Prometheus logged since its start: %s", scrapes, failed, slowest, failures));
        for (Agent x : AGENTS.values()) {
            assertThat(x.logText()).as("log of %s", x.node()).doesNotContain("unexpected error answering a request");
        }
        assertThat(failed).as("failed scrapes before the kill; Prometheus logged %s", failures).isZero();
        Agent c = AGENTS.get("node-c");
        Instant t0 = Instant.now();
        c.kill();
        event("kill", t0, "node-c killed (SIGKILL)");
        Expectation down = agentAlert("ImexprobeAgentDown", c);
        // Its exporters cannot reach it: the transfer fails before any driver call, so cu_result says none.
        List<Expectation> expected = List.of(down, pairAlert("node-a", "node-c", "none"),
                pairAlert("node-b", "node-c", "none"), targetAlert("node-c"));
        Map<Expectation, Sighting> seen = awaitPendingThenFiring("kill", t0, expected,
                intermittentPendingAtMost("kill", t0, a -> a.labels().get("target_node").equals("node-c")));
        assertThat(seen.get(down).firing().value()).isZero();
        assertThat(seen.get(down).firing().annotations().get("summary"))
                .isEqualTo("imexprobe agent " + pod("node-c") + " on node node-c is down");
        assertThat(seen.get(expected.get(1)).firing().value()).isZero();
        assertThat(seen.get(expected.get(1)).firing().annotations().get("summary")).endsWith("fails: none");
    }

    /** Each fault starts from a quiet domain, so one failed step does not fail the next. */
    static void quiet() {
        eventually("no alert active before the next fault", prometheus::alerts, List::isEmpty);
    }

    /**
     * ImexprobePairImportIntermittent pending, never firing, for a pair the fault fails for good: its window (30m, the
     * default) still holds the pair's passes from before, so once it has counted 3 failures (over 5% of the window's
     * probes) it may go pending; once the pair has had no pass for alerts.pairFailingFor (3 s here) the rule holds it
     * back (a stretch without a pass is ImexprobePairImportFailing's), in this test before its for: (3 s) is out, and
     * for the rest of its window. In production for: (10m) is longer than pairFailingFor (5m). Each sighting is on the
     * timeline.
     */
    static Predicate<Alert> intermittentPendingAtMost(String phase, Instant t0, Predicate<Alert> pair) {
        return a -> {
            boolean ok = a.name().equals("ImexprobePairImportIntermittent") && "pending".equals(a.state()) && pair.test(a);
            if (ok && INTERMITTENT_SEEN.add(phase + brief(a))) {
                event(phase, t0, "pending (allowed, must not fire) " + brief(a));
            }
            return ok;
        };
    }

    static final java.util.Set<String> INTERMITTENT_SEEN = java.util.concurrent.ConcurrentHashMap.newKeySet();

    // ---- expectations, sightings, waiting -------------------------------------------------------------------

    /**
     * An alert by name and its complete label set (sorted, so failure messages read the same every time), and
     * annotations it must carry.
     */
    record Expectation(String name, Map<String, String> labels, Map<String, String> annotations) {
        Expectation(String name, Map<String, String> labels) {
            this(name, labels, Map.of());
        }

        boolean matches(Alert a) {
            return a.name().equals(name) && a.labels().equals(labels)
                    && a.annotations().entrySet().containsAll(annotations.entrySet());
        }

        @Override
        public String toString() {
            return name + labels + (annotations.isEmpty() ? "" : annotations);
        }
    }

    record Sighting(Alert pending, Instant pendingSeen, Alert firing, Instant firingSeen) {
    }

    static Expectation pairAlert(String source, String target, String cuResult) {
        Agent exporter = AGENTS.get(source);
        Map<String, String> l = new TreeMap<>();
        l.put("alertname", "ImexprobePairImportFailing");
        l.put("severity", "warning");
        l.put("job", JOB);
        l.put("instance", exporter.hostPort());
        l.putAll(targetLabels(exporter));
        l.put("source_node", source);
        l.put("source_gpu", GPU.get(source));
        l.put("target_node", target);
        l.put("target_gpu", GPU.get(target));
        l.put("domain", DOMAIN.get(source));
        return new Expectation("ImexprobePairImportFailing", l, Map.of("cu_result", cuResult));
    }

    static Expectation targetAlert(String target) {
        Map<String, String> l = new TreeMap<>();
        l.put("alertname", "ImexprobeTargetUnreachable");
        l.put("severity", "critical");
        l.put("namespace", NAMESPACE);
        l.put("domain", DOMAIN.get(target));
        l.put("target_node", target);
        l.put("target_gpu", GPU.get(target));
        return new Expectation("ImexprobeTargetUnreachable", l);
    }

    /** Most pairs of one IMEX domain failing. */
    static Expectation domainAlert(String domain) {
        Map<String, String> l = new TreeMap<>();
        l.put("alertname", "ImexprobeDomainFailing");
        l.put("severity", "critical");
        l.put("namespace", NAMESPACE);
        l.put("domain", domain);
        return new Expectation("ImexprobeDomainFailing", l);
    }

    /** Alerts on one agent's own series: its target labels, job, instance and its GPU's IMEX domain. */
    static Expectation agentAlert(String name, Agent a) {
        Map<String, String> l = new TreeMap<>();
        l.put("alertname", name);
        l.put("severity", "warning");
        l.put("job", JOB);
        l.put("instance", a.hostPort());
        l.put("domain", DOMAIN.get(a.node()));
        l.putAll(targetLabels(a));
        return new Expectation(name, l);
    }

    /**
     * Polls /api/v1/alerts until every expectation fires. Each must be seen pending first (it is pending for FOR,
     * the poll runs every 250 ms) and fire no earlier than FOR after it became active. Any active alert that is
     * neither expected nor {@code alsoAllowed} fails at once.
     */
    static Map<Expectation, Sighting> awaitPendingThenFiring(String phase, Instant t0, List<Expectation> expected,
                                                             Predicate<Alert> alsoAllowed) {
        Map<Expectation, Alert> pending = new LinkedHashMap<>();
        Map<Expectation, Instant> pendingSeen = new LinkedHashMap<>();
        Map<Expectation, Sighting> fired = new LinkedHashMap<>();
        long deadline = System.nanoTime() + FIRE_WITHIN.toNanos();
        List<Alert> last = List.of();
        while (fired.size() < expected.size()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(phase + ": not firing within " + FIRE_WITHIN + ": "
                        + expected.stream().filter(e -> !fired.containsKey(e)).toList() + "\nseen pending: "
                        + pending.keySet() + "\nactive now: " + last + "\nProbably a label differs; see "
                        + prometheus.log() + " and the agents' logs in " + dir);
            }
            last = prometheus.alerts();
            Instant now = Instant.now();
            for (Alert a : last) {
                Optional<Expectation> e = expected.stream().filter(x -> x.matches(a)).findFirst();
                if (e.isEmpty()) {
                    if (!alsoAllowed.test(a)) {
                        // An AgentDown nobody caused is a failed scrape: say why (a timeout on a loaded machine, a 500).
                        throw new AssertionError(phase + ": unexpected active alert " + a + " (expected " + expected
                                + "); scrape errors: " + prometheus.targets().stream().map(t -> t.path("labels")
                                .path("node").asString() + ": " + t.path("lastError").asString()).toList()
                                + "; failed scrapes logged: " + prometheus.scrapeFailures());
                    }
                    continue;
                }
                Expectation x = e.get();
                if (fired.containsKey(x)) {
                    continue;
                }
                if ("pending".equals(a.state()) && !pending.containsKey(x)) {
                    pending.put(x, a);
                    pendingSeen.put(x, now);
                    event(phase, t0, "pending " + brief(a));
                } else if ("firing".equals(a.state())) {
                    assertThat(pending).as("%s: %s seen pending before firing", phase, x).containsKey(x);
                    assertThat(a.activeAt()).as("%s: same alert instance as the pending one", phase)
                            .isEqualTo(pending.get(x).activeAt());
                    // Firing is decided at an evaluation at least FOR after activeAt (same machine clock).
                    assertThat(Duration.between(a.activeAt(), now)).as("%s: %s fired only after for", phase, x)
                            .isGreaterThanOrEqualTo(FOR.minusMillis(200));
                    fired.put(x, new Sighting(pending.get(x), pendingSeen.get(x), a, now));
                    event(phase, t0, "firing " + brief(a) + " (active since +"
                            + secs(Duration.between(t0, a.activeAt())) + ")");
                }
            }
            PrometheusServer.sleep(250);
        }
        return fired;
    }

    /** Polls until none of the expectations is active any more. */
    static void awaitResolved(String phase, Instant t0, List<Expectation> expected) {
        eventually(phase + ": " + expected + " resolved", prometheus::alerts,
                as -> as.stream().noneMatch(a -> expected.stream().anyMatch(e -> e.matches(a))));
        event(phase, t0, "resolved " + expected.stream().map(LivePrometheusIT::brief).collect(Collectors.joining(", ")));
    }

    static String brief(Expectation e) {
        Map<String, String> shown = new TreeMap<>(e.labels());
        shown.putAll(e.annotations());
        return e.name() + brief(shown);
    }

    static String brief(Alert a) {
        Map<String, String> shown = new TreeMap<>(a.labels());
        if (a.annotations().containsKey("cu_result")) {
            shown.put("cu_result", a.annotations().get("cu_result"));
        }
        return a.name() + brief(shown);
    }

    static String brief(Map<String, String> labels) {
        List<String> keys = List.of("node", "source_node", "target_node", "cu_result");
        return labels.entrySet().stream().filter(e -> keys.contains(e.getKey()))
                .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(",", "{", "}"));
    }

    static <T> T eventually(String what, java.util.function.Supplier<T> probe, Predicate<T> done) {
        return MeshAgents.eventually(SETTLE, what, probe, done);
    }

    static synchronized void event(String phase, Instant t0, String text) {
        String line = String.format(Locale.ROOT, "[%7s since start] %-10s +%6ss  %s",
                secs(Duration.between(started, Instant.now())), phase, secs(Duration.between(t0, Instant.now())), text);
        TIMELINE.add(line);
    }

    static String secs(Duration d) {
        return String.format(Locale.ROOT, "%.1f", d.toMillis() / 1000.0);
    }

    static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }
}
