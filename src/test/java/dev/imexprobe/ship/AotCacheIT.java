package dev.imexprobe.ship;

import static org.assertj.core.api.Assertions.assertThat;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.NativeBuild;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The image's start layout, made here exactly as the Dockerfile makes it (no image can be built here):
 * src/main/docker/aot-cache.sh extracts the jar and records the AOT cache from a training start with the image's
 * JAVA_TOOL_OPTIONS and no driver; an agent then starts from it with {@code -XX:AOTMode=on}, under which the JVM
 * refuses to start at all unless it maps the cache, and probes itself on the fake driver.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AotCacheIT {

    private static final Path SCRIPT = Project.ROOT.resolve("src/main/docker/aot-cache.sh");

    private Path work;
    private Path app;
    private Path tmp;
    private String toolOptions;
    private Tools.Result training;
    private AgentProcess cached;
    private AgentProcess mismatched;

    @BeforeAll
    void trainAsTheImageDoes(@TempDir Path dir) throws Exception {
        work = dir;
        app = work.resolve("app");
        tmp = Files.createDirectories(work.resolve("tmp"));
        toolOptions = imageToolOptions().replace("-Djava.io.tmpdir=/tmp", "-Djava.io.tmpdir=" + tmp);
        training = Tools.run(work, 300, List.of("sh", SCRIPT.toString(), NativeBuild.jar().toString(), app.toString()),
                Map.of("JAVA_HOME", Path.of(NativeBuild.java()).getParent().getParent().toString(),
                        "JAVA_TOOL_OPTIONS", toolOptions, "TMPDIR", tmp.toString(),
                        // as in the image build: no driver and nothing of a test machine's
                        "IMEXPROBE_CUDA_LIBRARY", "", "IMEXPROBE_NVML_LIBRARY", "", "IMEXPROBE_PEERS_STATIC", ""));
    }

    @AfterAll
    void stop() {
        AgentProcess.closeAll(cached, mismatched);
    }

    @Test
    void trainingLeavesTheExtractedJarItsLibrariesAndTheCacheAndNothingElse() throws Exception {
        assertThat(training.exitCode()).as(training.output()).isZero();
        assertThat(training.output()).contains("imexprobe.aot (");
        try (Stream<Path> s = Files.list(app)) {
            assertThat(s.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactly("imexprobe.aot", "imexprobe.jar", "lib");
        }
        try (Stream<Path> s = Files.list(app.resolve("lib"))) {
            assertThat(s.map(p -> p.getFileName().toString()).toList())
                    .anyMatch(n -> n.matches("spring-boot-\\d.*\\.jar")).anyMatch(n -> n.startsWith("tomcat-embed-core-"));
        }
        // The cache holds the classes of Spring, Tomcat and the agent: tens of MiB, not an empty shell.
        assertThat(Files.size(app.resolve("imexprobe.aot"))).isGreaterThan(20L << 20);
        // Only the JNI shim the training start unpacked may be left in java.io.tmpdir (the Dockerfile empties /tmp).
        try (Stream<Path> s = Files.walk(tmp)) {
            assertThat(s.filter(Files::isRegularFile).map(p -> p.getFileName().toString()).toList())
                    .allMatch(n -> n.endsWith(".so"), "only the extracted shim");
        }
    }

    @Test
    void anAgentStartsFromTheCacheAndProbesItself() throws Exception {
        assertThat(training.exitCode()).as(training.output()).isZero();
        FakeMachine machine = FakeMachine.h200(work.resolve("machine"));
        cached = AgentProcess.start("cached", work.resolve("agents"), machine.env(), "node-aot", Map.of(),
                new AgentProcess.Launch(app.resolve("imexprobe.jar"), jvmFlags(
                        "-XX:AOTCache=" + app.resolve("imexprobe.aot"), "-XX:AOTMode=on"))).awaitReady();
        assertThat(cached.logText()).doesNotContain("Unable to use AOT cache").doesNotContain("[error");
        JsonNode node = cached.get("/v1/node").json();
        assertThat(node.path("fake").asBoolean()).isTrue();
        assertThat(node.path("gpus")).hasSize(1);
        AgentProcess.Reply imported = cached.exchangeInItself(77); // export, import with the pattern, release
        assertThat(imported.json().path("verdict").asString()).as(imported.body()).isEqualTo("pass");
    }

    @Test
    void theChartsAppendedXmxKeepsTheCache() throws Exception {
        assertThat(training.exitCode()).as(training.output()).isZero();
        // JAVA_TOOL_OPTIONS exactly as the chart renders it for agent.javaToolOptions=-Xmx256m.
        java.util.List<java.util.Map<String, Object>> env = Chart.at(Chart.render(Chart.values("agent.javaToolOptions",
                "-Xmx256m")).one("DaemonSet"), "spec.template.spec.containers.0.env");
        String rendered = env.stream().filter(e -> "JAVA_TOOL_OPTIONS".equals(e.get("name"))).map(e -> (String) e.get("value"))
                .findFirst().orElseThrow().replace("-Djava.io.tmpdir=/tmp", "-Djava.io.tmpdir=" + tmp);
        assertThat(rendered).startsWith(toolOptions).endsWith(" -Xmx256m");
        List<String> flags = new java.util.ArrayList<>(List.of(rendered.split("\\s+")));
        flags.add("-XX:MaxRAM=512m");
        // AOTMode=on: the JVM refuses to start unless it maps the cache.
        flags.addAll(List.of("-XX:AOTCache=" + app.resolve("imexprobe.aot"), "-XX:AOTMode=on"));
        FakeMachine machine = FakeMachine.h200(work.resolve("machine-3"));
        AgentProcess xmx = AgentProcess.start("xmx", work.resolve("agents"), machine.env(), "node-aot-3", Map.of(),
                new AgentProcess.Launch(app.resolve("imexprobe.jar"), flags)).awaitReady();
        try {
            assertThat(xmx.logText()).doesNotContain("Unable to use AOT cache");
            assertThat(xmx.get("/v1/node").status()).isEqualTo(200);
        } finally {
            AgentProcess.closeAll(xmx);
        }
    }

    @Test
    void aCacheThatDoesNotFitIsSkippedWithAWarningAndTheAgentStillStarts() throws Exception {
        assertThat(training.exitCode()).as(training.output()).isZero();
        FakeMachine machine = FakeMachine.h200(work.resolve("machine-2"));
        // Trained with compressed oops; without them the JVM cannot map the cache (as with a JVM of another build).
        mismatched = AgentProcess.start("mismatched", work.resolve("agents"), machine.env(), "node-aot-2", Map.of(),
                new AgentProcess.Launch(app.resolve("imexprobe.jar"), jvmFlags(
                        "-XX:AOTCache=" + app.resolve("imexprobe.aot"), "-XX:-UseCompressedOops"))).awaitReady();
        assertThat(mismatched.logText()).contains("Unable to use AOT cache");
        assertThat(mismatched.get("/v1/node").status()).isEqualTo(200);
    }

    /** The image's JAVA_TOOL_OPTIONS as flags (the pod's memory limit given as MaxRAM), then {@code extra}. */
    private List<String> jvmFlags(String... extra) {
        List<String> flags = new java.util.ArrayList<>(List.of(toolOptions.split("\\s+")));
        flags.add("-XX:MaxRAM=512m");
        flags.addAll(List.of(extra));
        return flags;
    }

    private static String imageToolOptions() throws Exception {
        String env = String.join(" ", DockerfileTest.args(DockerfileTest.stages().get(1), "ENV"));
        Matcher m = Pattern.compile("JAVA_TOOL_OPTIONS=\"([^\"]*)\"").matcher(env);
        assertThat(m.find()).as("JAVA_TOOL_OPTIONS in the runtime stage: %s", env).isTrue();
        return m.group(1);
    }
}
