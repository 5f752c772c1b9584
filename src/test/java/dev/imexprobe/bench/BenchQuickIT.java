package dev.imexprobe.bench;

import dev.imexprobe.testing.NativeBuild;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

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
            "/actuator/prometheus p50 / p99", "agent RSS", "agent start → ready");

    @TempDir
    Path tmp;

    @Test
    void quickRunPrintsTheTableAndWritesTheFigures() throws Exception {
        Path out = tmp.resolve("figures.json");
        Path log = tmp.resolve("bench.log");
        ProcessBuilder pb = new ProcessBuilder("bash", "bench/run.sh", "--quick", "--driver", "fake",
                "--java", NativeBuild.java(), "--jar", NativeBuild.jar().toString(), "--out", out.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("TMPDIR", tmp.toString());
        Process p = pb.start();
        boolean finished = p.waitFor(10, TimeUnit.MINUTES);
        if (!finished) {
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroyForcibly();
        }
        String printed = read(log);
        assertThat(finished).as("bench/run.sh --quick finished; output:%n%s", printed).isTrue();
        assertThat(p.exitValue()).as("exit code; output:%n%s", printed).isZero();

        assertThat(printed).contains("| metric", "| value", "| goal", "| verdict", "driver: FAKE");
        for (String row : ROWS) {
            assertThat(printed).as("row '%s' in:%n%s", row, printed).contains("| " + row);
        }
        assertThat(printed).contains("figures: " + out);

        JsonNode f = JsonMapper.builder().build().readTree(out.toFile());
        assertThat(f.path("machine").path("quick").asBoolean()).isTrue();
        assertThat(f.path("driverFloor").path("fake").asBoolean()).isTrue();
        assertThat(f.path("driverFloor").path("total").path("p50").asDouble()).isPositive();
        assertThat(f.path("httpFloor").path("p50").asDouble()).isPositive();
        assertThat(f.path("probe").path("failures").asInt()).as("every probe passed").isZero();
        assertThat(f.path("probe").path("wall").path("p50").asDouble()).isPositive();
        assertThat(f.path("breakdown").path("sharesMs").size()).isPositive();
        assertThat(f.path("copy").path("sizes").size()).isPositive();
        JsonNode scale = f.path("scale").path(0);
        assertThat(scale.path("peers").asInt()).isEqualTo(71);
        assertThat(scale.path("outboundFailed").asInt()).as("mesh probes of the simulated peers").isZero();
        assertThat(scale.path("inboundFailed").asInt()).as("pushes of the simulated peers").isZero();
        assertThat(scale.path("scrape").path("errors").asInt()).as("failed scrapes").isZero();
        assertThat(scale.path("rssMiB").asDouble()).isPositive();
        assertThat(f.path("table").size()).isGreaterThanOrEqualTo(ROWS.size());
        // Every agent, worker and simulated peer is gone, and nothing was left in the fake driver's state.
        try (var left = Files.list(tmp)) {
            assertThat(left.map(Path::getFileName).map(Path::toString).filter(n -> n.startsWith("imexprobe-bench")))
                    .as("the work folder is removed after a run that measured").isEmpty();
        }
    }

    private static String read(Path log) throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }
}
