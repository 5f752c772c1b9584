package dev.imexprobe.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * No image can be built here (no container engine): the Dockerfile is linted with dockerfilelint 1.8.0 and its
 * structure is checked — two stages, the shim built for the target architecture, non-root, read-only friendly.
 */
class DockerfileTest {

    record Instruction(String keyword, String args) {
    }

    /** Instructions per stage, continuation lines joined, comments dropped. */
    static List<List<Instruction>> stages() throws Exception {
        List<List<Instruction>> stages = new ArrayList<>();
        StringBuilder pending = new StringBuilder();
        for (String raw : Files.readAllLines(Project.DOCKERFILE)) {
            String line = raw.strip();
            if (line.startsWith("#") || (line.isEmpty() && pending.isEmpty())) {
                continue;
            }
            if (line.endsWith("\\")) {
                pending.append(line, 0, line.length() - 1).append(' ');
                continue;
            }
            pending.append(line);
            String full = pending.toString().strip();
            pending.setLength(0);
            if (full.isEmpty()) {
                continue;
            }
            String[] parts = full.split("\\s+", 2);
            Instruction i = new Instruction(parts[0].toUpperCase(Locale.ROOT), parts.length > 1 ? parts[1].strip() : "");
            if (i.keyword().equals("FROM")) {
                stages.add(new ArrayList<>());
            }
            if (!stages.isEmpty()) {
                stages.getLast().add(i);
            }
        }
        return stages;
    }

    static List<String> args(List<Instruction> stage, String keyword) {
        return stage.stream().filter(i -> i.keyword().equals(keyword)).map(Instruction::args).toList();
    }

    @Test
    void buildStageCompilesTheShimForTheTargetArchitecture() throws Exception {
        List<List<Instruction>> stages = stages();
        assertThat(stages).hasSize(2);
        List<Instruction> build = stages.getFirst();
        String from = build.getFirst().args();
        assertThat(from).matches("eclipse-temurin:25-jdk-\\S+ AS build");
        // A stage pinned to $BUILDPLATFORM would compile an amd64 shim into the arm64 image.
        for (List<Instruction> stage : stages) {
            assertThat(stage.getFirst().args()).doesNotContain("BUILDPLATFORM");
        }
        String runs = String.join(" ", args(build, "RUN"));
        assertThat(runs).contains("gcc").contains("make").contains("--no-install-recommends")
                .contains("./mvnw -B -DskipTests package");
        assertThat(args(build, "COPY")).contains("native/ native/", "src/main/ src/main/", "mvnw pom.xml ./");
    }

    @Test
    void runtimeStageIsTheJreWithTheJarAndItsAotCacheRunningAsNonRoot() throws Exception {
        List<Instruction> runtime = stages().get(1);
        assertThat(runtime.getFirst().args()).matches("eclipse-temurin:25-jre-\\S+");
        assertThat(args(runtime, "COPY")).containsExactly("--from=build /imexprobe.jar /tmp/imexprobe.jar",
                "src/main/docker/aot-cache.sh /tmp/aot-cache.sh");
        // The one RUN lays out /app and trains the AOT cache with this stage's JRE (AotCacheIT runs the same
        // script); nothing is installed, and what it used in /tmp is gone.
        assertThat(args(runtime, "RUN").stream().map(r -> r.replaceAll("\\s+", " "))).containsExactly(
                "sh /tmp/aot-cache.sh /tmp/imexprobe.jar /app && rm -rf /tmp/* /root/.cache");
        // The training start must see production's JVM flags: the ENV comes first.
        assertThat(indexOf(runtime, "ENV")).isLessThan(indexOf(runtime, "RUN"));
        assertThat(args(runtime, "WORKDIR")).containsExactly("/app");
        List<String> user = args(runtime, "USER");
        assertThat(user).hasSize(1);
        assertThat(user.getFirst()).matches("[0-9]+(:[0-9]+)?");
        assertThat(Integer.parseInt(user.getFirst().split(":")[0])).isNotZero();
        // USER comes after the COPY and the RUN: what they make stays root's, read-only to the agent.
        assertThat(indexOf(runtime, "USER")).isGreaterThan(indexOf(runtime, "COPY")).isGreaterThan(indexOf(runtime, "RUN"));
        assertThat(String.join(" ", args(runtime, "ENV"))).contains("JAVA_TOOL_OPTIONS=\"-Djava.io.tmpdir=/tmp")
                // one CUDA work queue: 46 MiB less host memory mapped by the driver (docs/performance.md)
                .contains("CUDA_DEVICE_MAX_CONNECTIONS=1").contains("MALLOC_ARENA_MAX=2")
                // the fill kernel's JIT cache where the agent can write (the root filesystem is read-only)
                .contains("CUDA_CACHE_PATH=/tmp/");
        assertThat(args(runtime, "ENTRYPOINT")).containsExactly("[\"java\",\"-XX:+ExitOnOutOfMemoryError\","
                + "\"-XX:AOTCache=/app/imexprobe.aot\",\"-jar\",\"/app/imexprobe.jar\"]");
        assertThat(args(runtime, "CMD")).containsExactly("[\"serve\"]");
        assertThat(args(runtime, "HEALTHCHECK")).containsExactly("NONE");
        assertThat(args(runtime, "EXPOSE")).containsExactly("8080");
        assertThat(String.join(" ", args(runtime, "LABEL"))).contains("org.opencontainers.image.title=\"imexprobe\"")
                .contains("org.opencontainers.image.version=").contains("org.opencontainers.image.source=");
    }

    private static int indexOf(List<Instruction> stage, String keyword) {
        return stage.indexOf(stage.stream().filter(i -> i.keyword().equals(keyword)).findFirst().orElseThrow());
    }

    @Test
    void dockerignoreLetsThroughExactlyWhatTheBuildCopies() throws Exception {
        List<String> ignore = Files.readAllLines(Project.ROOT.resolve(".dockerignore")).stream()
                .filter(l -> !l.isBlank() && !l.startsWith("#")).toList();
        assertThat(ignore.getFirst()).isEqualTo("*");
        assertThat(ignore).contains("!.mvn/", "!mvnw", "!pom.xml", "!native/", "!src/main/");
    }

    @Test
    void dockerfilelintFindsNothing(@TempDir Path work) throws Exception {
        JsonNode report = lint(work, Project.DOCKERFILE);
        assertThat(report.get("totalIssues").asInt()).as(report.toString()).isZero();
    }

    @Test
    void dockerfilelintDoesComplainAboutABadDockerfile(@TempDir Path work) throws Exception {
        Path bad = work.resolve("Dockerfile.bad");
        Files.writeString(bad, "FROM ubuntu\nRUN apt-get install curl\nADD . /app\n");
        JsonNode report = lint(work, bad);
        assertThat(report.get("totalIssues").asInt()).isPositive();
    }

    private static JsonNode lint(Path work, Path dockerfile) throws Exception {
        var npx = Tools.onPath("npx");
        assumeTrue(npx.isPresent(), "npx not installed (Node.js/npm): dockerfilelint skipped");
        // Run outside the project so npx never picks up a package.json of ours; the exit code is 1 on issues.
        Tools.Result r = Tools.run(work, 300, List.of(npx.get().toString(), "--yes", "dockerfilelint@1.8.0", "-o", "json",
                dockerfile.toAbsolutePath().toString()));
        String out = r.output().strip();
        int start = out.indexOf("{\"files\"");
        assertThat(start).as("dockerfilelint JSON report in: %s", out).isNotNegative();
        return JsonMapper.builder().build().readTree(out.substring(start));
    }
}
