package dev.imexprobe.bench;


import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The benchmark harness runs in CI: {@code bash bench/run.sh --quick} on the fake driver prints its one table and
 * writes its figures. No thresholds: numbers from a shared CI machine prove nothing (docs/performance.md holds
 * the judged runs); this keeps the harness from rotting.
 */
class BenchQuickIT {

    /** Rows every quick run prints, one per measured section. */
    private static final List<String> ROWS = List.of("driver floor p50 / p99", "HTTP floor p50 / p99",
            "probe p50 / p99 (push, write-back, 2 MiB)", "probe p50 / (driver floor + HTTP floor)",
            "largest share of a probe", "copy via imported mapping", "agent CPU, 71 peers out + 71 in",
            "/actuator/prometheus p50 / p99", "agent RSS", "agent start → ready", "agent cost per GPU, idle",
            "agent cost per GPU, in rounds");

    @TempDir
    Path tmp;

    /** {@code --copy-gpus 0,1}: the worker exports on GPU 0, the bench copies on GPU 1, against a peer copy. */
    @Test
    void copyAcrossTwoGpusIsComparedWithAPeerCopyInOneProcess() throws Exception {
        Path out = tmp.resolve("copy.json");
        String printed = quick(out, tmp.resolve("copy.log"), "--sections", "copy", "--copy-gpus", "0,1");
        assertThat(printed).contains("| copy via imported mapping, GPU 0 → 1, 16 MiB").contains("peer");
        JsonNode copy = new JsonMapper().readTree(out.toFile()).path("copy");
        assertThat(copy.path("exporterGpu").asInt()).isZero();
        assertThat(copy.path("importerGpu").asInt()).isEqualTo(1);
        assertThat(copy.path("reference").asString()).startsWith("peer copy");
        for (JsonNode size : copy.path("sizes")) {
            double peerRead = size.path("peerToLocalGBps").asDouble();
            double peerWrite = size.path("localToPeerGBps").asDouble();
            assertThat(peerRead).isPositive();
            assertThat(peerWrite).isPositive();
            // the ratios are against the peer copy, not against a copy within one GPU
            assertThat(size.path("readRatio").asDouble())
                    .isCloseTo(size.path("importedToLocalGBps").asDouble() / peerRead, within(0.01));
            assertThat(size.path("writeRatio").asDouble())
                    .isCloseTo(size.path("localToImportedGBps").asDouble() / peerWrite, within(0.01));
        }
    }

    @Test
    void quickRunPrintsTheTableAndWritesTheFigures() throws Exception {
        Path out = tmp.resolve("figures.json");
        long start = System.nanoTime();
        String printed = quick(out, tmp.resolve("bench.log"));
        System.out.printf("BenchQuickIT: bench/run.sh --quick took %.1f s%n", (System.nanoTime() - start) / 1e9);

        assertThat(printed).contains("| metric", "| value", "| goal", "| verdict", "driver: FAKE");
        for (String row : ROWS) {
            assertThat(printed).as("row '%s' in:%n%s", row, printed).contains("| " + row);
        }
        assertThat(printed).contains("figures: " + out);

        JsonNode f = JsonMapper.builder().build().readTree(out.toFile());
        assertThat(f.path("machine").path("quick").asBoolean()).isTrue();
        assertThat(f.has("partial")).as("the final file, not one written between sections").isFalse();
        assertThat(f.path("machine").path("cpus").asInt()).isPositive();
        JsonNode floor = f.path("driverFloor");
        assertThat(floor.path("fake").asBoolean()).isTrue();
        assertPercentiles("driver floor", floor.path("total"));
        // Run before and after the probes; the floor the ratio uses is their mean.
        assertThat(floor.path("runs").size()).isEqualTo(2);
        for (JsonNode run : floor.path("runs")) {
            assertPercentiles("driver floor run", run.path("total"));
        }
        assertThat(floor.path("total").path("p50").asDouble()).isCloseTo((floor.path("runs").get(0).path("total")
                .path("p50").asDouble() + floor.path("runs").get(1).path("total").path("p50").asDouble()) / 2,
                within(0.001));
        for (String stage : List.of("create", "export", "import", "verify", "writeback_write", "release_exporter")) {
            assertThat(floor.path("stages").path(stage).path("p50").asDouble()).as("floor stage %s", stage).isPositive();
        }
        assertThat(floor.path("cpuMsPerIteration").path("exporter").asDouble()).isPositive();
        JsonNode http = f.path("httpFloor");
        assertPercentiles("HTTP floor", http);
        JsonNode probe = f.path("probe");
        assertThat(probe.path("failures").asInt()).as("every probe passed: %s", probe.path("failureSamples")).isZero();
        assertPercentiles("probe", probe.path("wall"));
        assertThat(probe.path("wall").path("n").asInt()).isPositive();
        assertThat(probe.path("stages").path("import").path("p50").asDouble()).isPositive();
        // The ratio is the probe's median over the floors measured in this same run.
        double expected = probe.path("wall").path("p50").asDouble()
                / (floor.path("total").path("p50").asDouble() + http.path("p50").asDouble());
        assertThat(f.path("ratio").path("value").asDouble()).isPositive().isCloseTo(expected, within(0.002));
        assertThat(f.path("ratio").path("goal").asDouble()).isEqualTo(1.5);
        JsonNode breakdown = f.path("breakdown");
        assertThat(breakdown.path("sharesMs").size()).isPositive();
        assertThat(breakdown.path("sharesMs").path("driver (C floor)").asDouble())
                .isEqualTo(floor.path("total").path("p50").asDouble(), within(0.001));
        assertThat(breakdown.path("largest").asString()).isNotBlank();
        JsonNode micro = f.path("micro");
        assertThat(micro.path("driverPoolHopUs").asDouble()).isPositive();
        assertThat(micro.path("metrics").path("default").path("scrapesFailedWhileRecording").asInt()).isZero();
        assertThat(micro.path("metrics").path("pairLabels").path("series").asLong())
                .isGreaterThan(micro.path("metrics").path("default").path("series").asLong());
        JsonNode copy = f.path("copy").path("sizes");
        assertThat(copy.size()).isPositive();
        for (JsonNode size : copy) {
            for (String k : List.of("importedToLocalGBps", "localToImportedGBps", "localToLocalGBps", "readRatio",
                    "writeRatio")) {
                assertThat(size.path(k).asDouble()).as("copy %s", k).isPositive();
            }
        }
        JsonNode cost = f.path("cost");
        assertThat(cost.path("gpusPerAgent").asInt()).isEqualTo(1);
        assertThat(cost.path("idle").path("agents").size()).isEqualTo(2);
        for (JsonNode a : cost.path("idle").path("agents")) {
            // mesh interval 1 h: after the first round the idle agent probes nothing and retains no context
            assertThat(a.path("probes").asDouble()).as("idle agent %s", a).isZero();
            assertThat(a.path("contextsCreated").asDouble()).as("idle agent %s", a).isZero();
            assertThat(a.path("cpuMsPerSecondPerGpu").asDouble()).isNotNegative();
        }
        for (JsonNode a : cost.path("rounds").path("agents")) {
            assertThat(a.path("probes").asDouble()).as("agent in rounds %s", a).isPositive();
            assertThat(a.path("cpuMsPerRoundPerGpu").asDouble()).as("agent in rounds %s", a).isPositive();
        }
        JsonNode scale = f.path("scale").path(0);
        assertThat(scale.path("peers").asInt()).isEqualTo(71);
        assertThat(scale.path("outboundFailed").asInt()).as("mesh probes of the simulated peers: %s",
                scale.path("failureSamples")).isZero();
        assertThat(scale.path("inboundFailed").asInt()).as("pushes of the simulated peers: %s",
                scale.path("failureSamples")).isZero();
        // The window holds the agent's own rounds whole: each of its rounds probes every peer once.
        assertThat(scale.path("windowRoundsWhole").asBoolean()).as("window ended with its last round").isTrue();
        assertThat(scale.path("windowRounds").asInt()).isPositive();
        assertThat(scale.path("outboundProbesInWindow").asLong()).as("mesh probes in the window")
                .isEqualTo(71L * scale.path("windowRounds").asInt());
        assertThat(scale.path("inboundPushesInWindow").asLong()).isPositive();
        assertThat(scale.path("cpuShare").asDouble()).isPositive();
        // Where the window's CPU went: the rest is what the named threads (ended ones included) leave of the
        // process's CPU. They may exceed it only by /proc's per-thread rounding to clock ticks (under 10 ms each).
        double agentCpu = scale.path("agentCpuSeconds").asDouble();
        double byThread = 0;
        for (JsonNode v : scale.path("cpuSecondsByThread")) {
            byThread += v.asDouble();
        }
        assertThat(byThread).as("threads and rest: %s", scale.path("cpuSecondsByThread"))
                .isGreaterThanOrEqualTo(agentCpu - 0.001)
                .isLessThanOrEqualTo(agentCpu + 0.01 * scale.path("threads").asInt());
        assertThat(scale.path("compilerCpuSeconds").isNumber()).isTrue();
        assertThat(scale.path("compilerCpuSeconds").asDouble()).isBetween(0.0, agentCpu);
        JsonNode jvm = scale.path("jvmMemoryMiB");
        assertThat(jvm.path("heapUsed").asDouble()).as("%s", jvm).isPositive()
                .isLessThanOrEqualTo(jvm.path("heapCommitted").asDouble());
        assertThat(jvm.path("nonHeapUsed").asDouble()).as("%s", jvm).isPositive()
                .isLessThanOrEqualTo(jvm.path("nonHeapCommitted").asDouble());
        assertThat(scale.path("readySeconds").asDouble()).isPositive();
        assertThat(scale.path("rssMiB").asDouble()).isPositive();
        JsonNode scrape = scale.path("scrape");
        assertThat(scrape.path("errors").asInt()).as("failed scrapes: %s", scrape.path("lastError")).isZero();
        assertPercentiles("scrape", scrape);
        assertThat(scrape.path("pairSeries").asLong()).as("pair series in the scrape").isPositive();
        assertThat(f.path("table").size()).isGreaterThanOrEqualTo(ROWS.size());
        // Every agent, worker and simulated peer is gone, and nothing was left in the fake driver's state.
        try (var left = Files.list(tmp)) {
            assertThat(left.map(Path::getFileName).map(Path::toString).filter(n -> n.startsWith("imexprobe-bench")))
                    .as("the work folder is removed after a run that measured").isEmpty();
        }
    }

    private static void assertPercentiles(String what, JsonNode stats) {
        double p50 = stats.path("p50").asDouble();
        assertThat(p50).as("%s p50", what).isPositive();
        assertThat(stats.path("p99").asDouble()).as("%s p99 ≥ p50", what).isGreaterThanOrEqualTo(p50);
    }

    /** Runs {@code bash bench/run.sh --quick} on the fake with {@code extra}; what it printed, once it passed. */
    private String quick(Path out, Path log, String... extra) throws Exception {
        return QuickBench.run(tmp, out, log, Duration.ofMinutes(5), extra);
    }
}
