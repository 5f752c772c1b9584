package dev.imexprobe.bench;

import dev.imexprobe.testing.NativeBuild;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code bench/driver_floor.c} built as the bench builds it ({@code bench/build-floor.sh}, warnings as errors) and
 * run on the fake driver, in its own order and in the agents' ({@code FLOOR_ORDER=agents}: the importer's release
 * is sent in a second message after the exporter's check), with the context bound before every call
 * ({@code FLOOR_SET_CURRENT=1}), and as a JNI library inside a JVM ({@code FloorInJvm}, the importer a fork of that
 * JVM): every stage is timed, and each iteration's total is the sum of its stages, which a message read out of step
 * between the two processes would break.
 */
class DriverFloorIT {

    private static final List<String> STAGES = List.of("create", "export", "import", "reserve", "map", "access",
            "verify", "writeback_write", "release_importer", "writeback_check", "release_exporter");

    @TempDir
    Path tmp;

    @ParameterizedTest
    @CsvSource({"own, binary, 0", "agents, binary, 0", "own, binary, 1", "agents, jvm, 0"})
    void everyStageIsTimedAndTheTotalIsTheirSum(String order, String how, String setCurrent) throws Exception {
        boolean jvm = how.equals("jvm");
        Path built = tmp.resolve(jvm ? "libfloor.so" : "driver_floor");
        run(List.of("bash", "bench/build-floor.sh", built.toString(), "-Werror"), null, null);
        int iterations = ThreadLocalRandom.current().nextInt(5, 16);
        Path out = tmp.resolve("floor.json");
        Files.createDirectories(tmp.resolve("state"));
        Files.createDirectories(tmp.resolve("channels"));
        Files.writeString(tmp.resolve("channels/channel0"), "");
        List<String> args = List.of("--iterations", Integer.toString(iterations), "--warmup", "2", "--out",
                out.toString());
        List<String> cmd = new ArrayList<>();
        if (jvm) {
            cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED", "-XX:-UsePerfData", "-cp",
                    Path.of("target", "imexprobe-bench.jar").toString(), FloorInJvm.class.getName(),
                    built.toString()));
        } else {
            cmd.add(built.toString());
        }
        cmd.addAll(args);
        run(cmd, order, setCurrent);

        JsonNode f = JsonMapper.builder().build().readTree(out.toFile());
        assertThat(f.path("fake").asBoolean()).isTrue();
        assertThat(f.path("iterations").asInt()).isEqualTo(iterations);
        double sumOfMeans = 0;
        for (String stage : STAGES) {
            JsonNode s = f.path("stages").path(stage);
            assertThat(s.isObject()).as("stage %s in %s", stage, f).isTrue();
            assertThat(s.path("min").asDouble()).as(stage).isGreaterThanOrEqualTo(0);
            assertThat(s.path("max").asDouble()).as(stage).isGreaterThanOrEqualTo(s.path("p50").asDouble());
            sumOfMeans += s.path("mean").asDouble();
        }
        // Every process's release does real work on the fake (its files), so a stage that was never read reads 0.
        assertThat(f.path("stages").path("release_importer").path("min").asDouble()).isPositive();
        assertThat(f.path("stages").path("release_exporter").path("min").asDouble()).isPositive();
        assertThat(f.path("total").path("mean").asDouble()).isCloseTo(sumOfMeans, within(1e-4));
    }

    private void run(List<String> cmd, String order, String setCurrent) throws Exception {
        Path log = tmp.resolve("run.log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home")); // the JNI library's headers: this JDK's
        if (order != null) {
            Path fake = NativeBuild.fakeDir();
            pb.environment().put("IMEXPROBE_CUDA_LIBRARY", fake.resolve("libcuda.so.1").toString());
            pb.environment().put("FAKECUDA_GPUS", "1");
            pb.environment().put("FAKECUDA_STATE_DIR", tmp.resolve("state").toString());
            pb.environment().put("FAKECUDA_CHANNEL_DIR", tmp.resolve("channels").toString());
            pb.environment().put("FLOOR_ORDER", order);
            pb.environment().put("FLOOR_SET_CURRENT", setCurrent);
            pb.environment().remove("FAKECUDA_FAULTS");
            pb.environment().remove("CUDA_VISIBLE_DEVICES");
        }
        Process p = pb.start();
        boolean finished = p.waitFor(60, TimeUnit.SECONDS);
        if (!finished) {
            p.destroyForcibly();
        }
        String printed = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(finished).as("%s finished; output:%n%s", cmd, printed).isTrue();
        assertThat(p.exitValue()).as("exit code of %s; output:%n%s", cmd, printed).isZero();
    }
}
