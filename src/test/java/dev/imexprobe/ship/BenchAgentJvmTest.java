package dev.imexprobe.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * bench/run.sh starts its agents with the JVM flags a pod of the chart gets: the image's JAVA_TOOL_OPTIONS (the
 * Dockerfile's ENV, which the chart leaves untouched by default), then the pod's memory limit as MaxRAM. When the
 * chart's agent.javaToolOptions became empty, the benchmark fell back to -XX:MaxRAMPercentage=60 alone, so its
 * agents ran G1 and C2 instead of SerialGC and C1 (docs/performance.md: the scale agent's RSS 234 → 353 MiB on the
 * H200 came from that, not from the agent).
 */
class BenchAgentJvmTest {

    @Test
    void agentsGetTheImageFlagsAndThePodsMemoryLimit() throws Exception {
        Matcher m = Pattern.compile("ENV JAVA_TOOL_OPTIONS=\"([^\"]*)\"").matcher(Files.readString(Project.DOCKERFILE));
        assertThat(m.find()).as("JAVA_TOOL_OPTIONS in the Dockerfile").isTrue();
        String image = m.group(1);
        assertThat(image).contains("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:MaxRAMPercentage=60");

        assertThat(printAgentJvm()).isEqualTo(image + " -XX:MaxRAM=512m -XX:+ExitOnOutOfMemoryError");
    }

    private static String printAgentJvm() throws Exception {
        Process p = new ProcessBuilder("bash", Project.ROOT.resolve("bench/run.sh").toString(), "--print-agent-jvm")
                .directory(Project.ROOT.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("bench/run.sh --print-agent-jvm: %s", out).isZero();
        return out.strip();
    }
}
