package dev.imexprobe.preflight;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.NativeBuild;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The preflight as a job runs it: real processes on the fake driver, two instances on one simulated host (each
 * seeing one of its two GPUs, as two pods of one node) and one on another host of the same NVLink domain (fabric
 * COMPLETED, one cluster UUID and clique), all finding each other through one static list. Each case checks the
 * exit codes, what the JSON says, and that no allocation outlives the run.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PreflightIT {

    /** Covers three JVMs starting Spring at once on a loaded two-core machine. */
    static final String DEADLINE = "240s";
    static final Duration EXIT_WAIT = Duration.ofSeconds(600);
    /**
     * The deadline of the case with a peer that never starts: the two that do must find each other before it, counted
     * from each JVM's start. 25 s failed once beside a loaded machine's other builds (load 24 on two cores: one
     * instance found only itself); 35 s is seven times what a quiet two-core machine takes to start such a JVM
     * (2.5-5 s), all of it waited out: that case starts before the others, in its own folders, and is checked last,
     * so that the other cases run within its wait.
     */
    static final Duration SHORT_DEADLINE = Duration.ofSeconds(35);
    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    Path sharedState;
    final List<Process> started = new ArrayList<>();

    /** The case with a never-started peer: its folder, its instances (started before every case), their start. */
    @TempDir
    static Path waitingDir;
    static Map<Spec, Process> waiting;
    static long waitingSince;

    @BeforeAll
    static void startTheCaseThatWaitsOutItsDeadline() throws Exception {
        FakeMachine a = nodeA(waitingDir);
        FakeMachine b = nodeB(waitingDir);
        Spec never = spec("a1", a, "1", "node-a");
        waitingSince = System.nanoTime();
        waiting = launch(waitingDir, Files.createDirectories(waitingDir.resolve("shared-state")), 3,
                SHORT_DEADLINE.toSeconds() + "s", List.of(spec("a0", a, "0", "node-a"), spec("b0", b, "0", "node-b")),
                List.of(never));
    }

    @AfterAll
    static void stopTheCaseThatWaits() {
        waiting.values().forEach(Process::destroyForcibly);
    }

    @BeforeEach
    void folders() throws IOException {
        sharedState = Files.createDirectories(dir.resolve("shared-state"));
    }

    @AfterEach
    void stopLeftovers() {
        started.forEach(Process::destroyForcibly);
    }

    /** node-a with two GPUs, node-b with one, every GPU registered with the one fabric. */
    FakeMachine nodeA() {
        return nodeA(dir);
    }

    static FakeMachine nodeA(Path dir) {
        return FakeMachine.h200(dir.resolve("node-a")).host("node-a").gpus(2)
                .fabric(0, 3, MeshAgents.CLUSTER, MeshAgents.CLIQUE).fabric(1, 3, MeshAgents.CLUSTER, MeshAgents.CLIQUE);
    }

    FakeMachine nodeB() {
        return nodeB(dir);
    }

    static FakeMachine nodeB(Path dir) {
        return FakeMachine.h200(dir.resolve("node-b")).host("node-b").fabric(0, 3, MeshAgents.CLUSTER, MeshAgents.CLIQUE);
    }

    /** One instance to start: its name in the test, its environment, its port. */
    record Spec(String name, Map<String, String> env, int port) {
    }

    record Outcome(String name, int port, int exitCode, JsonNode report, String stderr) {
        String instanceName() {
            return report.path("instances").get(0).path("name").asString();
        }
    }

    static Spec spec(String name, FakeMachine machine, String visible, String node) {
        Map<String, String> env = new LinkedHashMap<>(machine.env());
        env.put("CUDA_VISIBLE_DEVICES", visible);
        env.put("IMEXPROBE_NODE_NAME", node);
        return new Spec(name, env, AgentProcess.freePort());
    }

    /** An instance in a container given only GPU {@code gpu} of {@code machine} (its device node alone). */
    static Spec containerSpec(String name, FakeMachine machine, int gpu, String node) {
        Map<String, String> env = new LinkedHashMap<>(machine.containerEnv(gpu));
        env.put("IMEXPROBE_NODE_NAME", node);
        return new Spec(name, env, AgentProcess.freePort());
    }

    /** Starts every spec as {@code preflight --expect N --json} with one static list of all of them, waits for all. */
    List<Outcome> run(int expect, String deadline, List<Spec> specs, List<Spec> listedButNeverStarted) throws Exception {
        Map<Spec, Process> processes = launch(dir, sharedState, expect, deadline, specs, listedButNeverStarted);
        started.addAll(processes.values());
        return outcomes(dir, processes);
    }

    static Map<Spec, Process> launch(Path dir, Path sharedState, int expect, String deadline, List<Spec> specs,
                                     List<Spec> listedButNeverStarted) throws IOException {
        String list = java.util.stream.Stream.concat(specs.stream(), listedButNeverStarted.stream())
                .map(s -> "127.0.0.1:" + s.port()).collect(Collectors.joining(","));
        AgentProcess.Launch launch = AgentProcess.Launch.standard();
        Map<Spec, Process> processes = new LinkedHashMap<>();
        for (Spec s : specs) {
            List<String> cmd = new ArrayList<>(List.of(NativeBuild.java()));
            cmd.addAll(launch.jvmFlags());
            cmd.addAll(List.of("-jar", launch.jar().toString(), "preflight", "--expect", Integer.toString(expect),
                    "--deadline", deadline, "--json"));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().keySet().removeIf(k -> k.startsWith("IMEXPROBE_") || k.startsWith("FAKECUDA_")
                    || k.startsWith("SERVER_") || k.startsWith("MANAGEMENT_") || k.startsWith("SPRING_")
                    || k.equals("CUDA_VISIBLE_DEVICES"));
            pb.environment().putAll(s.env());
            pb.environment().put("FAKECUDA_STATE_DIR", sharedState.toString());
            pb.environment().put("IMEXPROBE_AUTH_TOKEN", AgentProcess.TOKEN);
            pb.environment().put("IMEXPROBE_PEERS_STATIC", list);
            pb.environment().put("SERVER_PORT", Integer.toString(s.port()));
            pb.environment().put("SERVER_ADDRESS", "127.0.0.1");
            pb.environment().put("LOGGING_LEVEL_ROOT", "WARN");
            pb.environment().put("LOGGING_LEVEL_DEV_IMEXPROBE", "INFO");
            pb.redirectOutput(dir.resolve(s.name() + ".json").toFile());
            pb.redirectError(dir.resolve(s.name() + ".log").toFile());
            processes.put(s, pb.start());
        }
        return processes;
    }

    static List<Outcome> outcomes(Path dir, Map<Spec, Process> processes) throws Exception {
        List<Outcome> outcomes = new ArrayList<>();
        for (Map.Entry<Spec, Process> e : processes.entrySet()) {
            Spec s = e.getKey();
            assertThat(e.getValue().waitFor(EXIT_WAIT.toSeconds(), TimeUnit.SECONDS)).as("%s exits", s.name()).isTrue();
            String log = Files.readString(dir.resolve(s.name() + ".log"));
            String out = Files.readString(dir.resolve(s.name() + ".json"));
            assertThat(out).as("%s printed a report; its log:\n%s", s.name(), tail(log)).isNotBlank();
            outcomes.add(new Outcome(s.name(), s.port(), e.getValue().exitValue(), JSON.readTree(out), log));
        }
        return outcomes;
    }

    private static String tail(String log) {
        return log.length() > 4000 ? log.substring(log.length() - 4000) : log;
    }

    private void assertNothingLeft() {
        assertNothingLeft(sharedState);
    }

    private static void assertNothingLeft(Path sharedState) {
        try (var files = Files.list(sharedState)) {
            // not the fake's EXCLUSIVE_PROCESS lock files (exclusive-*): they stay, unlocked, after their owner exits
            assertThat(files.filter(p -> !p.getFileName().toString().startsWith("exclusive-")).toList())
                    .as("allocations outliving the preflight").isEmpty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<JsonNode> pairs(JsonNode report) {
        List<JsonNode> list = new ArrayList<>();
        report.path("pairs").forEach(list::add);
        return list;
    }

    private static boolean sameNode(JsonNode pair) {
        return pair.path("result").path("sourceNode").asString().equals(pair.path("result").path("targetNode").asString());
    }

    private static JsonNode firstFailure(JsonNode pair) {
        for (JsonNode s : pair.path("result").path("stages")) {
            if (!s.path("status").asString().equals("ok") && !s.path("status").asString().equals("skipped")) {
                return s;
            }
        }
        return null;
    }

    @Test
    void threeInstancesOnTwoHostsOfOneDomainPassAllToAll() throws Exception {
        FakeMachine a = nodeA();
        FakeMachine b = nodeB();
        List<Outcome> outcomes = run(3, DEADLINE, List.of(spec("a0", a, "0", "node-a"), spec("a1", a, "1", "node-a"),
                spec("b0", b, "0", "node-b")), List.of());
        Set<String> gpus = new HashSet<>();
        for (Outcome o : outcomes) {
            assertThat(o.exitCode()).as("%s: %s", o.name(), o.report()).isZero();
            assertThat(o.report().path("result").asString()).isEqualTo("pass");
            assertThat(o.report().path("instances")).hasSize(3);
            List<JsonNode> pairs = pairs(o.report());
            assertThat(pairs).as("every ordered pair of 3 one-GPU instances").hasSize(6);
            assertThat(pairs).allMatch(p -> p.path("result").path("verdict").asString().equals("pass"));
            assertThat(pairs.stream().filter(PreflightIT::sameNode).count()).as("same-node pairs included").isEqualTo(2);
            for (JsonNode p : pairs) {
                assertThat(p.path("exporter").asString()).isNotEqualTo(p.path("importer").asString());
                assertThat(p.path("result").path("stages").findValuesAsString("name"))
                        .contains("create", "export", "import", "map", "verify", "writeback", "release");
                gpus.add(p.path("result").path("sourceGpu").asString());
            }
            assertThat(o.report().has("verdict")).isFalse();
        }
        assertThat(gpus).as("three distinct GPUs exported").hasSize(3);
        assertNothingLeft();
    }

    /**
     * An instance found (it answers /v1/preflight and /v1/node) that then exports nothing in time: one exchange waits
     * out the peer timeout, the instance's other pairs are not tried but carry that timeout, and the run ends by its
     * deadlines, where every pair waited its own timeout before.
     */
    @Test
    void anInstanceThatStopsAnsweringCostsOneTimeoutNotOnePerPair() throws Exception {
        com.github.tomakehurst.wiremock.WireMockServer silent = new com.github.tomakehurst.wiremock.WireMockServer(
                com.github.tomakehurst.wiremock.core.WireMockConfiguration.options().dynamicPort()
                        .bindAddress("127.0.0.1"));
        silent.start();
        try {
            int theirGpus = 3 + new java.util.Random().nextInt(3);
            StringBuilder gpus = new StringBuilder();
            List<String> uuids = new ArrayList<>();
            for (int i = 0; i < theirGpus; i++) {
                uuids.add("GPU-silent-" + i);
                gpus.append(i == 0 ? "" : ",").append("{\"index\":").append(i).append(",\"uuid\":\"GPU-silent-")
                        .append(i).append("\"}");
            }
            silent.stubFor(com.github.tomakehurst.wiremock.client.WireMock.get("/v1/preflight").willReturn(
                    com.github.tomakehurst.wiremock.client.WireMock.okJson("{\"instance\":{\"id\":\"silent-id\","
                            + "\"name\":\"silent\",\"node\":\"node-s\",\"gpus\":" + JSON.writeValueAsString(uuids)
                            + "},\"phase\":\"gathering\"}")));
            silent.stubFor(com.github.tomakehurst.wiremock.client.WireMock.get("/v1/node").willReturn(
                    com.github.tomakehurst.wiremock.client.WireMock.okJson("{\"agent\":{\"node\":\"node-s\","
                            + "\"id\":\"silent-id\"},\"gpus\":[" + gpus + "]}")));
            silent.stubFor(com.github.tomakehurst.wiremock.client.WireMock.post("/v1/exports").willReturn(
                    com.github.tomakehurst.wiremock.client.WireMock.okJson("{}").withFixedDelay(30_000)));
            Spec a0 = spec("a0", nodeA(), "0,1", "node-a");
            a0.env().put("IMEXPROBE_PROBE_TIMEOUT", "2s");
            String deadline = "8s";
            long since = System.nanoTime();
            Map<Spec, Process> processes = launch(dir, sharedState, 2, deadline, List.of(a0),
                    List.of(new Spec("silent", Map.of(), silent.port())));
            started.addAll(processes.values());
            Outcome o = outcomes(dir, processes).getFirst();
            double seconds = (System.nanoTime() - since) / 1e9;

            List<JsonNode> pairs = pairs(o.report());
            assertThat(pairs).as("%s", o.report()).hasSize(2 * theirGpus);
            assertThat(silent.findAll(com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor(
                    com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo("/v1/exports"))))
                    .as("one export asked of the silent instance").hasSize(1);
            assertThat(pairs).allSatisfy(p -> {
                assertThat(p.path("result").path("verdict").asString()).isEqualTo("fail");
                assertThat(p.path("result").path("finding").path("code").asString()).isEqualTo("TIMEOUT");
            });
            assertThat(pairs.stream().filter(p -> p.path("result").path("finding").path("evidence").path("detail")
                    .asString().startsWith("not tried: the target did not answer"))).hasSize(2 * theirGpus - 1);
            assertThat(o.exitCode()).as("%s", o.report()).isEqualTo(1);
            assertThat(seconds).as("within the two deadlines and the start").isLessThan(60);
        } finally {
            silent.stop();
        }
    }

    @Test
    void theSeedsPatternSameNodePairsFailWith801AndTheVerdictNamesIt() throws Exception {
        FakeMachine a = nodeA();
        FakeMachine b = nodeB();
        List<Outcome> outcomes = run(3, DEADLINE, List.of(containerSpec("a0", a, 0, "node-a"),
                containerSpec("a1", a, 1, "node-a"), spec("b0", b, "0", "node-b")), List.of());
        for (Outcome o : outcomes) {
            assertThat(o.exitCode()).as("%s: %s", o.name(), o.report()).isEqualTo(1);
            assertThat(o.report().path("result").asString()).isEqualTo("fail");
            assertThat(o.report().path("verdict").path("code").asString()).isEqualTo("SAME_NODE_EXPORTER_GPU_HIDDEN");
            List<JsonNode> pairs = pairs(o.report());
            assertThat(pairs).hasSize(6);
            for (JsonNode p : pairs) {
                if (sameNode(p)) {
                    assertThat(p.path("result").path("verdict").asString()).isEqualTo("fail");
                    JsonNode failed = firstFailure(p);
                    assertThat(failed.path("name").asString()).isEqualTo("import");
                    assertThat(failed.path("cuResult").asInt()).as("as on two H200s").isEqualTo(801);
                    assertThat(p.path("result").path("finding").path("code").asString())
                            .isEqualTo("SAME_NODE_EXPORTER_GPU_HIDDEN");
                } else {
                    assertThat(p.path("result").path("verdict").asString()).as("cross-host %s", p).isEqualTo("pass");
                }
            }
            String next = o.report().path("nextSteps").toString();
            assertThat(next).contains("Next on node node-a").contains("ladder").contains("4 cross-node pair(s) passed")
                    .doesNotContain("node node-b");
        }
        assertNothingLeft();
    }

    @Test
    void anInstanceWithoutTheChannelIsBlamedForEveryFailingPair() throws Exception {
        FakeMachine a = nodeA();
        FakeMachine b = nodeB();
        Spec b0 = spec("b0", b, "0", "node-b");
        b0.env().put("FAKECUDA_CHANNEL_DIR", b.channelView("none").toString());
        List<Outcome> outcomes = run(3, DEADLINE, List.of(spec("a0", a, "0", "node-a"), spec("a1", a, "1", "node-a"),
                b0), List.of());
        String blamed = outcomes.stream().filter(o -> o.name().equals("b0")).findFirst().orElseThrow().instanceName();
        for (Outcome o : outcomes) {
            assertThat(o.exitCode()).as("%s: %s", o.name(), o.report()).isEqualTo(1);
            JsonNode findings = o.report().path("findings");
            assertThat(findings).isNotEmpty();
            Set<String> codes = new HashSet<>();
            int failedPairs = 0;
            for (JsonNode f : findings) {
                assertThat(f.path("instance").asString()).as("%s", f).isEqualTo(blamed);
                assertThat(f.path("node").asString()).isEqualTo("node-b");
                codes.add(f.path("finding").path("code").asString());
                failedPairs += f.path("pairs").asInt();
            }
            assertThat(codes).containsExactlyInAnyOrder("CREATE_NOT_PERMITTED", "IMPORT_NOT_PERMITTED");
            assertThat(failedPairs).as("the four pairs with b0 on either side").isEqualTo(4);
            for (JsonNode p : pairs(o.report())) {
                boolean involvesB = p.path("result").path("sourceNode").asString().equals("node-b")
                        || p.path("result").path("targetNode").asString().equals("node-b");
                assertThat(p.path("result").path("verdict").asString()).as("%s", p).isEqualTo(involvesB ? "fail" : "pass");
                if (involvesB) {
                    assertThat(firstFailure(p).path("cuResult").asInt()).isEqualTo(800);
                }
            }
            assertThat(o.report().path("verdict").path("code").asString())
                    .isIn("CREATE_NOT_PERMITTED", "IMPORT_NOT_PERMITTED");
        }
        assertNothingLeft();
    }

    /**
     * The job's GPUs in EXCLUSIVE_PROCESS: a preflight runs before the job, so it takes their one context by default
     * (a0's GPU); an instance told not to (b0, IMEXPROBE_DRIVER_PROBEEXCLUSIVEPROCESS=false) probes none of its pairs,
     * and every instance says it could not tell (exit 2), blaming b0, rather than that a pair failed.
     */
    @Test
    void exclusiveProcessGpusAreTheJobsOwnAndProbedUnlessTurnedOffThenCouldNotTell() throws Exception {
        FakeMachine a = nodeA().config("gpu.0.compute_mode", "3");
        FakeMachine b = nodeB().config("gpu.0.compute_mode", "3");
        Spec b0 = spec("b0", b, "0", "node-b");
        b0.env().put("IMEXPROBE_DRIVER_PROBEEXCLUSIVEPROCESS", "false");
        List<Outcome> outcomes = run(3, DEADLINE, List.of(spec("a0", a, "0", "node-a"), spec("a1", a, "1", "node-a"),
                b0), List.of());
        String blamed = outcomes.stream().filter(o -> o.name().equals("b0")).findFirst().orElseThrow().instanceName();
        for (Outcome o : outcomes) {
            assertThat(o.exitCode()).as("%s: %s", o.name(), o.report()).isEqualTo(2);
            assertThat(o.report().path("result").asString()).isEqualTo("unknown");
            assertThat(o.report().path("verdict").path("code").asString()).isEqualTo("COMPUTE_MODE_EXCLUSIVE_PROCESS");
            JsonNode findings = o.report().path("findings");
            assertThat(findings).hasSize(1);
            assertThat(findings.get(0).path("instance").asString()).isEqualTo(blamed);
            assertThat(findings.get(0).path("pairs").asInt()).as("b0's four pairs, as exporter and as importer")
                    .isEqualTo(4);
            List<JsonNode> pairs = pairs(o.report());
            assertThat(pairs).hasSize(6);
            for (JsonNode p : pairs) {
                boolean involvesB = p.path("result").path("sourceNode").asString().equals("node-b")
                        || p.path("result").path("targetNode").asString().equals("node-b");
                assertThat(p.path("result").path("verdict").asString()).as("%s", p)
                        .isEqualTo(involvesB ? "not_probed" : "pass");
            }
        }
        assertNothingLeft();
    }

    @Test
    @Order(Integer.MAX_VALUE) // started before the class's first case: see SHORT_DEADLINE
    void aPeerThatNeverStartsMeansCouldNotTellAtTheDeadline() throws Exception {
        List<Outcome> outcomes = outcomes(waitingDir, waiting);
        double seconds = (System.nanoTime() - waitingSince) / 1e9;
        for (Outcome o : outcomes) {
            assertThat(o.exitCode()).as("%s: %s", o.name(), o.report()).isEqualTo(2);
            assertThat(o.report().path("result").asString()).isEqualTo("unknown");
            JsonNode v = o.report().path("verdict");
            assertThat(v.path("code").asString()).isEqualTo("PREFLIGHT_PEERS_MISSING");
            assertThat(v.path("evidence").path("found").asInt()).isEqualTo(2);
            assertThat(v.path("evidence").path("expected").asInt()).isEqualTo(3);
            assertThat(o.report().path("pairs")).isEmpty();
            assertThat(o.report().path("durationSeconds").asDouble()).as("waited for the deadline").isGreaterThanOrEqualTo((double) SHORT_DEADLINE.toSeconds());
        }
        assertThat(seconds).as("not long past the deadline").isLessThan(400);
        assertNothingLeft(waitingDir.resolve("shared-state"));
    }
}
