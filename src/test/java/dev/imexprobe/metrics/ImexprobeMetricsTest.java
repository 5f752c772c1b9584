package dev.imexprobe.metrics;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.mesh.PairKey;
import dev.imexprobe.node.ImexDaemonState;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.testing.MutableClock;
import dev.imexprobe.testing.NodeReports;
import dev.imexprobe.testing.ProbeResults;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class ImexprobeMetricsTest {

    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
    private static final String[] PAIR = {"node-a", "GPU-a0", "node-b", "GPU-b0"};
    private static final Set<String> PAIR_LABELS = Set.of("source_node", "source_gpu", "target_node", "target_gpu",
            "domain");

    private final MutableClock clock = new MutableClock(T0);
    private final MeshState mesh = new MeshState(clock);
    private final AtomicReference<NodeReport> node =
            new AtomicReference<>(NodeReports.twoGpus(1, ImexDaemonState.READY));
    private final AtomicInteger peers = new AtomicInteger(3);
    private final AtomicInteger stuck = new AtomicInteger();

    private ImexprobeMetrics metrics(MeterRegistry registry, boolean pairLabels) {
        ImexprobeMetrics m = new ImexprobeMetrics(node::get, mesh, peers::get, stuck::get, pairLabels, "1.2.3");
        m.bindTo(registry);
        return m;
    }

    /** What the agent's recorder does: the state first, then the listener. */
    private void record(ImexprobeMetrics m, dev.imexprobe.probe.PairResult r) {
        mesh.record(r);
        m.onResult(r);
    }

    private static dev.imexprobe.probe.PairResult pass() {
        return ProbeResults.pass(PAIR[0], PAIR[1], PAIR[2], PAIR[3]);
    }

    private static dev.imexprobe.probe.PairResult importNotPermitted() {
        return ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, PAIR[0], PAIR[1], PAIR[2], PAIR[3]);
    }

    // ---- names, tags, descriptions ------------------------------------------------------------------------

    @Test
    void everyMeterHasItsNameTagsAndADescription() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ImexprobeMetrics m = metrics(registry, false);
        record(m, pass());
        record(m, importNotPermitted());

        Map<String, Set<String>> tagsByName = new TreeMap<>();
        for (Meter meter : registry.getMeters()) {
            if (meter.getId().getName().endsWith(".histogram")) {
                continue; // the simple registry's view of the timer's buckets; Prometheus renders them as _bucket
            }
            assertThat(meter.getId().getDescription()).as(meter.getId().getName()).isNotBlank();
            tagsByName.computeIfAbsent(meter.getId().getName(), k -> new TreeSet<>())
                    .addAll(meter.getId().getTags().stream().map(Tag::getKey).toList());
        }

        assertThat(tagsByName).isEqualTo(Map.ofEntries(
                Map.entry("imexprobe.probes", union(PAIR_LABELS, "verdict")),
                Map.entry("imexprobe.stage.results", Set.of("stage", "cu_result")),
                Map.entry("imexprobe.node.condition.writes", Set.of("result")),
                Map.entry("imexprobe.stage.duration", Set.of("stage")),
                Map.entry("imexprobe.pair.up", PAIR_LABELS),
                Map.entry("imexprobe.pairs", Set.of("state", "reason")),
                Map.entry("imexprobe.channel.mode", Set.of("mode")),
                Map.entry("imexprobe.pair.last.cu.result", PAIR_LABELS),
                Map.entry("imexprobe.pair.last.success.timestamp", PAIR_LABELS),
                Map.entry("imexprobe.mesh.last.cycle.timestamp", Set.of()),
                Map.entry("imexprobe.peers", Set.of()),
                Map.entry("imexprobe.imex.channels", Set.of()),
                Map.entry("imexprobe.imex.daemon.ready", Set.of()),
                Map.entry("imexprobe.gpus.visible", Set.of()),
                Map.entry("imexprobe.gpus.fabric.capable", Set.of()),
                Map.entry("imexprobe.fabric.state", Set.of("gpu", "UUID")),
                Map.entry("imexprobe.fabric.healthy", Set.of("gpu", "UUID")),
                Map.entry("imexprobe.gpu.imex.domain.info", Set.of("gpu", "UUID", "domain")),
                Map.entry("imexprobe.allocations.live", Set.of("kind")),
                Map.entry("imexprobe.driver.calls.stuck", Set.of()),
                Map.entry("imexprobe.build.info", Set.of("version", "driver_version", "cuda_version"))));
    }

    @Test
    void pairsAreCountedByStateAndReasonNotProbedApartFromFailed() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ImexprobeMetrics m = metrics(registry, false);
        String empty = registry.scrape();
        // Every state from the first scrape, at zero, so a panel of not-probed pairs has data before any exists.
        for (String st : List.of("ok", "failed", "unknown", "not_probed")) {
            assertThat(empty).contains("imexprobe_pairs{reason=\"none\",state=\"" + st + "\"} 0.0");
        }
        assertThat(empty).contains("imexprobe_channel_mode{mode=\"hostPath\"} 1");

        record(m, pass());
        record(m, ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "node-a", "GPU-a0", "node-c", "GPU-c0"));
        record(m, ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "node-a", "GPU-a0", "node-d", "GPU-d0"));
        mesh.notProbed(new PairKey("node-a", "GPU-a0", "node-e", "GPU-e0"),
                dev.imexprobe.finding.FindingCode.OBSERVER_TARGET.finding(Map.of("targetNode", "node-e")));
        mesh.expect(new PairKey("node-a", "GPU-a0", "node-f", "GPU-f0"));
        m.refreshGauges();

        String scrape = registry.scrape();
        assertThat(pairs(scrape, "ok", "none")).isEqualTo(1.0);
        assertThat(pairs(scrape, "failed", "IMPORT_NOT_PERMITTED")).isEqualTo(2.0);
        assertThat(pairs(scrape, "not_probed", "OBSERVER_TARGET")).isEqualTo(1.0);
        assertThat(pairs(scrape, "unknown", "none")).isEqualTo(1.0);
        assertThat(pairs(scrape, "not_probed", "none")).isEqualTo(0.0);
        // A not-probed pair has no pair_up series: nothing to alert on.
        assertThat(scrape).doesNotContain("target_node=\"node-e\"").doesNotContain("target_node=\"node-f\"");

        // Once the failures are gone their rows go too (bounded by the codes present now).
        mesh.forget(new PairKey("node-a", "GPU-a0", "node-c", "GPU-c0"));
        mesh.forget(new PairKey("node-a", "GPU-a0", "node-d", "GPU-d0"));
        m.refreshGauges();
        assertThat(registry.scrape()).doesNotContain("IMPORT_NOT_PERMITTED");
    }

    /** The imexprobe_pairs sample of one state and reason; null when absent. */
    private static Double pairs(String scrape, String state, String reason) {
        return dev.imexprobe.testing.MeshAgents.metric(scrape, "imexprobe_pairs", "state", state, "reason", reason);
    }

    @Test
    void pairSeriesCarryTheirDomainAndPairsAcrossDomainsHaveNone() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ImexprobeMetrics m = metrics(registry, false);
        mesh.learnDomain("GPU-a0", "fabric:c/1");
        mesh.learnDomain("GPU-b0", "fabric:c/1");
        mesh.learnDomain("GPU-x0", "host:hgx-1");
        record(m, pass());
        // an on-demand probe across domains: in /v1/mesh, but no pair series for an alert to fire on
        record(m, ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_SUPPORTED, "node-a", "GPU-a0", "node-x", "GPU-x0"));
        String scrape = registry.scrape();

        assertThat(scrape).contains("imexprobe_pair_up{domain=\"fabric:c/1\",source_gpu=\"GPU-a0\","
                + "source_node=\"node-a\",target_gpu=\"GPU-b0\",target_node=\"node-b\"} 1.0");
        assertThat(scrape.lines().filter(l -> l.startsWith("imexprobe_pair_")).toList())
                .hasSize(3).noneMatch(l -> l.contains("GPU-x0"));
        assertThat(scrape.lines().filter(l -> l.startsWith("imexprobe_probes_total{")).toList())
                .as("nor a probe counter").hasSize(2).allMatch(l -> l.contains("GPU-b0"));
        assertThat(mesh.snapshot()).filteredOn(p -> p.targetGpu().equals("GPU-x0")).singleElement()
                .satisfies(p -> {
                    assertThat(p.domain()).isEqualTo("fabric:c/1");
                    assertThat(p.targetDomain()).isEqualTo("host:hgx-1");
                    assertThat(p.acrossDomains()).isTrue();
                });
        assertThat(mesh.snapshot()).filteredOn(p -> p.targetGpu().equals("GPU-b0")).singleElement()
                .satisfies(p -> assertThat(p.targetDomain()).isNull());
    }

    @Test
    void thePrometheusScrapeCarriesHelpTypeAndTheDesignedNames() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ImexprobeMetrics m = metrics(registry, false);
        record(m, pass());

        String scrape = registry.scrape();

        assertThat(scrape).contains(
                "# HELP imexprobe_pair_up 1 when the pair's last probe passed, 0 when it failed",
                "# TYPE imexprobe_pair_up gauge",
                "# TYPE imexprobe_probes_total counter",
                "# TYPE imexprobe_stage_results_total counter",
                "# TYPE imexprobe_stage_duration_seconds histogram",
                "# TYPE imexprobe_pair_last_success_timestamp_seconds gauge",
                "# TYPE imexprobe_mesh_last_cycle_timestamp_seconds gauge",
                "imexprobe_probes_total{domain=\"unknown\",source_gpu=\"GPU-a0\",source_node=\"node-a\","
                        + "target_gpu=\"GPU-b0\",target_node=\"node-b\",verdict=\"pass\"} 1.0",
                "imexprobe_stage_results_total{cu_result=\"CUDA_SUCCESS\",stage=\"import\"} 1.0",
                "imexprobe_stage_results_total{cu_result=\"none\",stage=\"transfer\"} 1.0",
                "imexprobe_stage_duration_seconds_bucket{stage=\"create\",le=\"0.0025\"} 1",
                "imexprobe_stage_duration_seconds_count{stage=\"create\"} 1",
                "imexprobe_pair_up{domain=\"unknown\",source_gpu=\"GPU-a0\",source_node=\"node-a\","
                        + "target_gpu=\"GPU-b0\",target_node=\"node-b\"} 1.0",
                "imexprobe_gpu_imex_domain_info{UUID=\"" + NodeReports.GPU0 + "\",domain=\"fabric:"
                        + NodeReports.CLUSTER + "/7\",gpu=\"0\"} 1",
                "imexprobe_build_info{cuda_version=\"13.0\",driver_version=\"580.159.04\",version=\"1.2.3\"} 1",
                // dcgm-exporter's labels, so that imexprobe_* * on (UUID) DCGM_FI_* joins.
                "imexprobe_fabric_state{UUID=\"" + NodeReports.GPU0 + "\",gpu=\"0\"} 3.0",
                "imexprobe_allocations_live{kind=\"created\"} ");
        assertThat(scrape.lines().filter(l -> l.startsWith("# HELP imexprobe_")))
                .as("every family has a help text").allMatch(l -> l.split(" ", 4).length == 4);
    }

    // ---- series present from the first scrape ---------------------------------------------------------------

    @Test
    void stageSeriesExistAtZeroBeforeAnyProbe() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        metrics(registry, false);

        for (Stage s : Stage.values()) {
            String expected = s == Stage.TRANSFER ? "none" : "CUDA_SUCCESS";
            Counter c = registry.find("imexprobe.stage.results").tag("stage", s.label()).tag("cu_result", expected)
                    .counter();
            assertThat(c).as("stage %s, cu_result %s", s.label(), expected).isNotNull();
            assertThat(c.count()).isZero();
            Timer t = registry.find("imexprobe.stage.duration").tag("stage", s.label()).timer();
            assertThat(t).isNotNull();
            assertThat(t.count()).isZero();
        }
        assertThat(registry.find("imexprobe.stage.results").tag("stage", "transfer").tag("cu_result", "CUDA_SUCCESS")
                .counter()).as("the transfer makes no driver call: no CUDA_SUCCESS series").isNull();
        assertThat(registry.get("imexprobe.mesh.last.cycle.timestamp").gauge().value()).isZero();
        assertThat(registry.find("imexprobe.pair.up").gauges()).isEmpty();
    }

    @Test
    void withPairLabelsStageSeriesCarryThePairAndAreNotPreCreated() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ImexprobeMetrics m = metrics(registry, true);
        assertThat(registry.find("imexprobe.stage.results").counters()).isEmpty();

        record(m, importNotPermitted());

        Counter c = registry.get("imexprobe.stage.results").tag("stage", "import")
                .tag("cu_result", "CUDA_ERROR_NOT_PERMITTED").tag("source_node", "node-a").tag("source_gpu", "GPU-a0")
                .tag("target_node", "node-b").tag("target_gpu", "GPU-b0").counter();
        assertThat(c.count()).isEqualTo(1.0);
        assertThat(registry.get("imexprobe.stage.duration").tag("stage", "create").tag("target_node", "node-b")
                .timer().count()).isEqualTo(1);
        assertThat(registry.find("imexprobe.stage.results").counters())
                .allSatisfy(x -> assertThat(x.getId().getTags()).extracting(Tag::getKey).containsAll(PAIR_LABELS));
    }

    @Test
    void withoutPairLabelsStageSeriesCarryNoPair() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ImexprobeMetrics m = metrics(registry, false);
        record(m, importNotPermitted());

        assertThat(registry.find("imexprobe.stage.results").counters()).allSatisfy(x ->
                assertThat(x.getId().getTags()).extracting(Tag::getKey).containsExactlyInAnyOrder("stage", "cu_result"));
    }

    // ---- counters and histogram -----------------------------------------------------------------------------

    @Test
    void aPairsFirstProbeShowsBothVerdictsTheOtherAtZeroSoIncreaseCountsAFirstFailure() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ImexprobeMetrics m = metrics(registry, false);
        boolean firstPasses = new java.util.Random().nextBoolean();
        record(m, firstPasses ? pass() : importNotPermitted());
        String labels = "{domain=\"unknown\",source_gpu=\"GPU-a0\",source_node=\"node-a\",target_gpu=\"GPU-b0\","
                + "target_node=\"node-b\",verdict=";

        assertThat(registry.scrape().lines().filter(l -> l.startsWith("imexprobe_probes_total{")).toList())
                .as("first probe %s", firstPasses ? "passed" : "failed").containsExactlyInAnyOrder(
                        "imexprobe_probes_total" + labels + "\"pass\"} " + (firstPasses ? "1.0" : "0.0"),
                        "imexprobe_probes_total" + labels + "\"fail\"} " + (firstPasses ? "0.0" : "1.0"));
    }

    @Test
    void eachResultCountsItsVerdictAndEveryStageThatRan() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ImexprobeMetrics m = metrics(registry, false);
        record(m, pass());
        record(m, importNotPermitted());
        record(m, importNotPermitted());

        assertThat(registry.get("imexprobe.probes").tag("verdict", "pass").counter().count()).isEqualTo(1);
        assertThat(registry.get("imexprobe.probes").tag("verdict", "fail").tag("target_node", "node-b").counter()
                .count()).isEqualTo(2);
        assertThat(stageCount(registry, "create", "CUDA_SUCCESS")).isEqualTo(3);
        assertThat(stageCount(registry, "transfer", "none")).isEqualTo(3);
        assertThat(stageCount(registry, "import", "CUDA_SUCCESS")).isEqualTo(1);
        assertThat(stageCount(registry, "import", "CUDA_ERROR_NOT_PERMITTED")).isEqualTo(2);
        assertThat(stageCount(registry, "map", "CUDA_SUCCESS")).as("skipped stages are not counted").isEqualTo(1);
        assertThat(stageCount(registry, "release", "CUDA_SUCCESS")).isEqualTo(3);
        Timer create = registry.get("imexprobe.stage.duration").tag("stage", "create").timer();
        assertThat(create.count()).isEqualTo(3);
        assertThat(create.totalTime(TimeUnit.SECONDS)).isCloseTo(3 * ProbeResults.STAGE_SECONDS, within(1e-9));
        assertThat(registry.get("imexprobe.stage.duration").tag("stage", "map").timer().count()).isEqualTo(1);
    }

    private static double stageCount(MeterRegistry registry, String stage, String cuResult) {
        Counter c = registry.find("imexprobe.stage.results").tag("stage", stage).tag("cu_result", cuResult).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void stuckDriverCallsAreReadAtEachScrape() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        metrics(registry, false);
        assertThat(registry.scrape()).contains("imexprobe_driver_calls_stuck 0.0");
        int n = 1 + new java.util.Random().nextInt(15);
        stuck.set(n);
        assertThat(registry.scrape()).contains("imexprobe_driver_calls_stuck " + n + ".0");
        stuck.set(0);
        assertThat(registry.scrape()).contains("imexprobe_driver_calls_stuck 0.0");
    }

    /**
     * The agent hands the metrics method references made for them alone (executor::stuck, node::report): a gauge
     * must hold them, or it reads NaN after a GC. Here the metrics object itself is dropped at once, as this class's
     * other tests do; one of 22 unit runs read NaN for the stuck calls that way.
     */
    @Test
    void gaugesOutliveTheObjectsThatMadeThem() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        metrics(registry, false);
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        int n = 1 + new java.util.Random().nextInt(15);
        stuck.set(n);
        String scrape = registry.scrape();
        assertThat(scrape).contains("imexprobe_driver_calls_stuck " + n + ".0").doesNotContain("NaN");
        stuck.set(0);
    }

    @Test
    void histogramBucketsSpanDriverCallsToThePeerDeadline() {
        assertThat(ImexprobeMetrics.BUCKETS[0]).isEqualTo(Duration.ofNanos(50_000));
        assertThat(ImexprobeMetrics.BUCKETS[ImexprobeMetrics.BUCKETS.length - 1]).isEqualTo(Duration.ofSeconds(10));
        assertThat(Arrays.stream(ImexprobeMetrics.BUCKETS).sorted().toList()).containsExactly(ImexprobeMetrics.BUCKETS);
    }

    // ---- pair gauges follow the mesh state --------------------------------------------------------------------

    @Test
    void pairGaugesFollowThePairsState() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ImexprobeMetrics m = metrics(registry, false);

        mesh.expect(new PairKey(PAIR[0], PAIR[1], PAIR[2], PAIR[3]));
        m.refreshGauges();
        assertThat(registry.find("imexprobe.pair.up").gauges()).as("unknown pairs have no series yet").isEmpty();

        clock.advance(Duration.ofSeconds(10));
        record(m, pass());
        assertThat(pairGauge(registry, "imexprobe.pair.up")).isEqualTo(1);
        assertThat(pairGauge(registry, "imexprobe.pair.last.cu.result")).isZero();
        double passedAt = T0.plusSeconds(10).getEpochSecond();
        assertThat(pairGauge(registry, "imexprobe.pair.last.success.timestamp")).isEqualTo(passedAt);

        clock.advance(Duration.ofSeconds(30));
        record(m, importNotPermitted());
        assertThat(pairGauge(registry, "imexprobe.pair.up")).isZero();
        assertThat(pairGauge(registry, "imexprobe.pair.last.cu.result")).isEqualTo(800);
        assertThat(pairGauge(registry, "imexprobe.pair.last.success.timestamp")).isEqualTo(passedAt);

        record(m, ProbeResults.unreachable(PAIR[0], PAIR[1], "10.0.0.2:8080", PAIR[2], PAIR[3]));
        assertThat(pairGauge(registry, "imexprobe.pair.up")).isZero();
        assertThat(pairGauge(registry, "imexprobe.pair.last.cu.result")).as("transfer: no driver call").isZero();

        clock.advance(Duration.ofSeconds(30));
        record(m, pass());
        assertThat(pairGauge(registry, "imexprobe.pair.up")).isEqualTo(1);
        assertThat(pairGauge(registry, "imexprobe.pair.last.success.timestamp")).isEqualTo(passedAt + 60);
    }

    @Test
    void aPairThatNeverPassedHasALastSuccessOfZero() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ImexprobeMetrics m = metrics(registry, false);
        record(m, importNotPermitted());

        assertThat(pairGauge(registry, "imexprobe.pair.last.success.timestamp")).isZero();
    }

    @Test
    void aForgottenPairLosesItsSeriesAtTheEndOfTheRound() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ImexprobeMetrics m = metrics(registry, false);
        record(m, pass());
        record(m, ProbeResults.pass(PAIR[0], PAIR[1], "node-c", "GPU-c0"));
        clock.advance(Duration.ofMinutes(10));
        mesh.expect(new PairKey(PAIR[0], PAIR[1], "node-c", "GPU-c0"));
        mesh.forgetOlderThan(Duration.ofMinutes(5));
        assertThat(registry.find("imexprobe.pair.up").gauges()).hasSize(2);
        assertThat(registry.find("imexprobe.probes").counters()).as("pass and fail of each pair").hasSize(4);

        m.onCycleFinished();

        assertThat(registry.find("imexprobe.pair.up").gauges()).singleElement()
                .satisfies(g -> assertThat(g.getId().getTag("target_node")).isEqualTo("node-c"));
        assertThat(registry.find("imexprobe.probes").counters()).as("the forgotten pair's probe counters too")
                .hasSize(2).allSatisfy(c -> {
                    assertThat(c.getId().getTag("target_node")).isEqualTo("node-c");
                    assertThat(c.count()).isEqualTo(c.getId().getTag("verdict").equals("pass") ? 1.0 : 0.0);
                });
        assertThat(registry.find("imexprobe.pair.last.cu.result").gauges()).hasSize(1);
        assertThat(registry.find("imexprobe.pair.last.success.timestamp").gauges()).hasSize(1);
    }

    /**
     * Rows are handed to the MultiGauge only when a label set came or went: whatever the sequence of refreshes,
     * the registry holds exactly the last refresh's label sets, each reading its last value.
     */
    @Test
    void liveRowsHoldExactlyTheLastRefreshsSeriesOverRandomRefreshes() {
        long seed = System.nanoTime();
        java.util.Random random = new java.util.Random(seed);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ImexprobeMetrics.LiveRows rows = new ImexprobeMetrics.LiveRows(
                io.micrometer.core.instrument.MultiGauge.builder("test.rows").register(registry));
        List<io.micrometer.core.instrument.Tags> universe = java.util.stream.IntStream.range(0, 6)
                .mapToObj(i -> io.micrometer.core.instrument.Tags.of("pair", "p" + i)).toList();
        for (int round = 0; round < 300; round++) {
            Map<io.micrometer.core.instrument.Tags, Double> now = new java.util.HashMap<>();
            for (io.micrometer.core.instrument.Tags t : universe) {
                // often the same label sets as before (values only), sometimes one more or one fewer
                if (random.nextInt(4) > 0 || round == 0) {
                    now.put(t, (double) random.nextInt(1000));
                }
            }
            rows.set(now);
            Map<String, Double> seen = registry.find("test.rows").gauges().stream().collect(Collectors.toMap(
                    g -> g.getId().getTag("pair"), Gauge::value));
            Map<String, Double> expected = now.entrySet().stream().collect(Collectors.toMap(
                    e -> e.getKey().stream().findFirst().orElseThrow().getValue(), Map.Entry::getValue));
            assertThat(seen).as("round %d, seed %d", round, seed).isEqualTo(expected);
        }
    }

    private static double pairGauge(MeterRegistry registry, String name) {
        return registry.get(name).tag("source_node", PAIR[0]).tag("source_gpu", PAIR[1]).tag("target_node", PAIR[2])
                .tag("target_gpu", PAIR[3]).gauge().value();
    }

    // ---- node gauges ----------------------------------------------------------------------------------------

    @Test
    void nodeGaugesReadTheCurrentNodeReport() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ImexprobeMetrics m = metrics(registry, false);

        assertThat(registry.get("imexprobe.imex.channels").gauge().value()).isEqualTo(1);
        assertThat(registry.get("imexprobe.imex.daemon.ready").gauge().value()).isEqualTo(1);
        assertThat(registry.get("imexprobe.gpus.visible").gauge().value()).isEqualTo(2);
        assertThat(registry.get("imexprobe.gpus.fabric.capable").gauge().value()).isEqualTo(2);
        assertThat(registry.get("imexprobe.peers").gauge().value()).isEqualTo(3);
        assertThat(registry.get("imexprobe.fabric.state").tag("UUID", NodeReports.GPU0).tag("gpu", "0").gauge().value()).isEqualTo(3);
        assertThat(registry.get("imexprobe.fabric.healthy").tag("UUID", NodeReports.GPU0).tag("gpu", "0").gauge().value()).isEqualTo(1);
        assertThat(registry.get("imexprobe.fabric.healthy").tag("UUID", NodeReports.GPU1).tag("gpu", "1").gauge().value()).isZero();
        assertThat(registry.find("imexprobe.allocations.live").gauges()).extracting(g -> g.getId().getTag("kind"))
                .containsExactlyInAnyOrder("created", "imported", "mapping");
        Gauge build = registry.get("imexprobe.build.info").gauge();
        assertThat(build.value()).isEqualTo(1);
        assertThat(build.getId().getTags()).extracting(Tag::getKey, Tag::getValue).containsExactlyInAnyOrder(
                org.assertj.core.groups.Tuple.tuple("version", "1.2.3"),
                org.assertj.core.groups.Tuple.tuple("driver_version", "580.159.04"),
                org.assertj.core.groups.Tuple.tuple("cuda_version", "13.0"));

        // The channel vanishes and the daemon stops: plain gauges follow at once, per-GPU ones at the refresh.
        node.set(NodeReports.oneGpuWithoutNvml());
        peers.set(1);
        m.refreshGauges();

        assertThat(registry.get("imexprobe.imex.channels").gauge().value()).isEqualTo(1);
        assertThat(registry.get("imexprobe.imex.daemon.ready").gauge().value()).isZero();
        assertThat(registry.get("imexprobe.gpus.visible").gauge().value()).isEqualTo(1);
        assertThat(registry.get("imexprobe.peers").gauge().value()).isEqualTo(1);
        assertThat(registry.get("imexprobe.fabric.state").tag("UUID", NodeReports.GPU0).tag("gpu", "0").gauge().value()).isZero();
        assertThat(registry.get("imexprobe.fabric.healthy").tag("UUID", NodeReports.GPU0).tag("gpu", "0").gauge().value()).isZero();
        assertThat(registry.find("imexprobe.fabric.state").tag("UUID", NodeReports.GPU1).tag("gpu", "1").gauge()).isNull();

        node.set(NodeReports.twoGpus(0, ImexDaemonState.NOT_READY));
        assertThat(registry.get("imexprobe.imex.channels").gauge().value()).isZero();

        // GPUs that read FABRIC handles or VMM as 0 cannot make fabric memory; one the driver could not read can
        List<GpuDevice> gpus = List.of(attributes(0, Map.of("fabric", 0)), attributes(1, Map.of("fabric", 1,
                "virtualMemoryManagement", 0)), attributes(2, Map.of("fabric", "CUDA_ERROR_INVALID_VALUE")),
                attributes(3, Map.of("fabric", 1, "virtualMemoryManagement", 1)));
        node.set(NodeReports.report(gpus, 0, ImexDaemonState.NOT_INSTALLED));
        assertThat(registry.get("imexprobe.gpus.visible").gauge().value()).isEqualTo(4);
        assertThat(registry.get("imexprobe.gpus.fabric.capable").gauge().value()).isEqualTo(2);
    }

    private static GpuDevice attributes(int index, Map<String, Object> attributes) {
        GpuDevice g = NodeReports.gpu(index, "GPU-3333333" + index + "-0000-0000-0000-000000000000", null);
        return new GpuDevice(g.index(), g.uuid(), g.name(), g.pciBusId(), attributes, g.granularityBytes(), null,
                g.fabricResult(), g.memoryFreeBytes(), g.memoryTotalBytes());
    }

    @Test
    void theMeshCycleGaugeIsTheLastFinishedRound() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        metrics(registry, false);
        clock.advance(Duration.ofSeconds(42));
        mesh.cycleFinished();

        assertThat(registry.get("imexprobe.mesh.last.cycle.timestamp").gauge().value())
                .isEqualTo(T0.getEpochSecond() + 42.0);
    }

    @Test
    void resultsBeforeBindingAreIgnoredQuietly() {
        ImexprobeMetrics m = new ImexprobeMetrics(node::get, mesh, peers::get, stuck::get, false, "1.2.3");
        m.onResult(pass());
        m.onResult(importNotPermitted());
        m.refreshGauges();

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        m.bindTo(registry);
        assertThat(registry.find("imexprobe.stage.results").counters()).as("nothing counted before binding")
                .isNotEmpty().allSatisfy(c -> assertThat(c.count()).isZero());
        assertThat(registry.find("imexprobe.stage.duration").timers())
                .isNotEmpty().allSatisfy(t -> assertThat(t.count()).isZero());

        m.onResult(pass());
        assertThat(registry.get("imexprobe.stage.results").tag("stage", Stage.CREATE.label())
                .tag("cu_result", "CUDA_SUCCESS").counter().count()).as("counting starts at binding").isEqualTo(1.0);
    }

    private static Set<String> union(Set<String> a, String... more) {
        return java.util.stream.Stream.concat(a.stream(), Arrays.stream(more)).collect(Collectors.toSet());
    }

    static List<String> lines(String text, String prefix) {
        return text.lines().filter(l -> l.startsWith(prefix)).toList();
    }
}
