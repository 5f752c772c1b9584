package dev.imexprobe.bench;

import dev.imexprobe.testing.NativeBuild;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmark is not part of the product: {@code target/imexprobe.jar} holds no class of it, and
 * {@code target/imexprobe-bench.jar} holds nothing else, yet runs with only a Java runtime beside the product jar.
 */
class BenchJarIT {

    private static final String BENCH = "dev/imexprobe/bench/";

    @TempDir
    Path tmp;

    private static Path benchJar() {
        Path p = NativeBuild.jar().resolveSibling("imexprobe-bench.jar");
        assertThat(p).as("the bench jar beside the product jar").isRegularFile();
        return p;
    }

    private static List<String> entries(Path jar) throws IOException {
        try (JarFile j = new JarFile(jar.toFile())) {
            return j.stream().map(JarEntry::getName).toList();
        }
    }

    @Test
    void theProductJarHoldsNoBenchmarkClass() throws IOException {
        List<String> product = entries(NativeBuild.jar());
        assertThat(product).as("the product jar's own classes are there").contains(
                "BOOT-INF/classes/dev/imexprobe/cli/Main.class");
        assertThat(product).filteredOn(n -> n.contains(BENCH)).as("benchmark entries in the product jar").isEmpty();
    }

    @Test
    void theBenchJarHoldsOnlyTheBenchmark() throws IOException {
        List<String> bench = entries(benchJar());
        assertThat(bench).contains(BENCH + "Bench.class", BENCH + "AgentJvm.class");
        assertThat(bench).filteredOn(n -> n.endsWith(".class")).allSatisfy(n -> assertThat(n).startsWith(BENCH));
    }

    @Test
    void withoutTheBenchJarTheProductJarCannotRunTheBench() throws Exception {
        Process p = new ProcessBuilder(NativeBuild.java(), "-Dloader.main=dev.imexprobe.bench.Bench", "-cp",
                NativeBuild.jar().toString(), "org.springframework.boot.loader.launch.PropertiesLauncher", "--help")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isNotZero();
        assertThat(out).contains("dev.imexprobe.bench.Bench");
    }

    @Test
    void theBenchJarRunsAQuickSectionOnTheFake() throws Exception {
        Path out = tmp.resolve("figures.json");
        Path log = tmp.resolve("bench.log");
        String printed = QuickBench.run(tmp, out, log, Duration.ofMinutes(4), "--sections", "http",
                "--bench-jar", benchJar().toString());
        assertThat(printed).contains("| HTTP floor p50 / p99", "driver: FAKE");
        JsonNode f = JsonMapper.builder().build().readTree(out.toFile());
        double p50 = f.path("httpFloor").path("p50").asDouble();
        assertThat(p50).as("HTTP floor p50 (ms)").isPositive();
        assertThat(f.path("httpFloor").path("p99").asDouble()).isGreaterThanOrEqualTo(p50);
    }
}
