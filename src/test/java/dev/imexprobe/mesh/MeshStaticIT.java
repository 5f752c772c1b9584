package dev.imexprobe.mesh;

import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import tools.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.imexprobe.testing.MeshAgents.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Four agents on the fake driver, four "nodes" of one NVLink domain, finding each other through one static list
 * (self included) and probing every 2 s: the mesh as an operator sees it through /v1/mesh, /v1/node, the HTML
 * matrix and /actuator/prometheus, with faults injected into one agent at a time. The agents start once for the
 * whole class; each test leaves the mesh healthy again.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MeshStaticIT {

    static final Duration INTERVAL = Duration.ofSeconds(2);
    /** Long enough for a change to show on a loaded machine; a healthy run needs a few seconds. */
    static final Duration SETTLE = Duration.ofSeconds(60);
    static final List<String> NODES = List.of("node-a", "node-b", "node-c", "node-d");

    static MeshAgents mesh;
    static final Map<String, Agent> AGENTS = new LinkedHashMap<>();

    @BeforeAll
    static void startTheDomain() {
        mesh = MeshAgents.forTest(MeshStaticIT.class);
        for (String n : NODES) {
            AGENTS.put(n, mesh.add(n, Map.of(
                    "IMEXPROBE_MESH_INTERVAL", INTERVAL.toSeconds() + "s",
                    "IMEXPROBE_MESH_JITTER", "0.1",
                    "IMEXPROBE_MESH_MAXBACKOFF", "8s")));
        }
        for (Agent a : AGENTS.values()) {
            a.env("IMEXPROBE_PEERS_STATIC", mesh.staticList()); // every agent, self included
        }
        mesh.startAll(true);
    }

    @AfterAll
    static void stopTheDomain() {
        if (mesh != null) {
            mesh.close();
        }
    }

    static Agent agent(String node) {
        return AGENTS.get(node);
    }

    // ---- the healthy mesh -----------------------------------------------------------------------------------

    @Test
    @Order(1)
    void peersFindEachOtherThroughTheStaticListAndEveryPairPasses() {
        for (Agent a : AGENTS.values()) {
            JsonNode view = eventually(SETTLE, a.node() + " measures its 3 peers", () -> a.mesh(false),
                    v -> pairs(v).size() == 3 && allOk(v));
            assertThat(pairs(view).keySet()).containsExactlyInAnyOrderElementsOf(NODES.stream()
                    .filter(n -> !n.equals(a.node())).map(n -> a.node() + ">" + n).toList());
            assertThat(view.path("agent").path("node").asString()).isEqualTo(a.node());
            assertThat(view.path("scope").asString()).isEqualTo("agent");
            assertThat(view.path("fake").asBoolean()).isTrue();
            assertThat(a.metric("imexprobe_peers")).as("self is skipped").isEqualTo(3.0);
        }
        JsonNode domain = eventually(SETTLE, "the domain view holds all 12 pairs, ok",
                () -> agent("node-b").mesh(true), v -> pairs(v).size() == 12 && allOk(v));
        assertThat(texts(domain.path("agents"))).containsExactlyInAnyOrderElementsOf(NODES);
        assertThat(domain.path("unreachableAgents")).isEmpty();
        assertThat(domain.path("findings")).isEmpty();
    }

    @Test
    @Order(2)
    void probesRunOnScheduleNotAsAStorm() {
        Agent a = agent("node-a");
        double before = probesOf(a);
        long start = System.nanoTime();
        double cycleBefore = a.metric("imexprobe_mesh_last_cycle_timestamp_seconds");
        MeshAgents.sleepFor(Duration.ofSeconds(8));
        double after = probesOf(a);
        double seconds = (System.nanoTime() - start) / 1e9;

        // 3 pairs, one probe each per 2 s round (jitter ±10 %): about 12 in 8 s (3 to 5 rounds: 0.75-1.25 per
        // pair per interval); a storm would be hundreds.
        double perPairPerInterval = (after - before) / 3 / (seconds / INTERVAL.toSeconds());
        assertThat(perPairPerInterval).as("probes per pair per interval").isBetween(0.5, 1.3);
        assertThat(a.metric("imexprobe_mesh_last_cycle_timestamp_seconds")).isGreaterThan(cycleBefore);
        assertThat(a.metric("imexprobe_mesh_last_cycle_timestamp_seconds"))
                .isCloseTo(Instant.now().getEpochSecond(), org.assertj.core.api.Assertions.within(10.0));
        JsonNode view = a.mesh(false);
        assertThat(view.path("intervalSeconds").asDouble()).isEqualTo(2.0);
        for (JsonNode p : view.path("pairs")) {
            assertThat(p.path("ageSeconds").asDouble()).as("pair %s", p).isLessThan(3 * INTERVAL.toSeconds());
        }
    }

    private static double probesOf(Agent a) {
        return MeshAgents.samples(a.scrape()).stream().filter(s -> s.name().equals("imexprobe_probes_total"))
                .mapToDouble(MeshAgents.Sample::value).sum();
    }

    @Test
    @Order(3)
    void aRealScrapePassesPromtool() throws Exception {
        Path promtool = Path.of("/usr/bin/promtool");
        assumeTrue(Files.isExecutable(promtool) || onPath("promtool"),
                "promtool is not installed (apt-get install -y --no-install-recommends prometheus); CI installs it");
        String scrape = agent("node-a").scrape();
        StringBuilder ours = new StringBuilder();
        for (String line : scrape.split("\n")) {
            if (line.startsWith("imexprobe_") || line.startsWith("# HELP imexprobe_")
                    || line.startsWith("# TYPE imexprobe_")) {
                ours.append(line).append('\n');
            }
        }
        assertThat(ours.toString()).contains("# TYPE imexprobe_pair_up gauge", "imexprobe_stage_duration_seconds_bucket",
                "imexprobe_probes_total{");
        Path file = mesh.dir().resolve("scrape-imexprobe.txt");
        Files.writeString(file, ours, StandardCharsets.UTF_8);

        ProcessBuilder pb = new ProcessBuilder(Files.isExecutable(promtool) ? promtool.toString() : "promtool",
                "check", "metrics").redirectInput(file.toFile()).redirectErrorStream(true);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(out).as("promtool check metrics on %s", file).isEmpty();
        assertThat(p.exitValue()).isZero();
    }

    private static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    // ---- faults and blame ------------------------------------------------------------------------------------

    @Test
    @Order(4)
    void aTargetThatCannotImportFailsEveryPairIntoItAndIsBlamed() {
        agent("node-c").machine().fault("cuMemImportFromShareableHandle=800");
        try {
            JsonNode domain = eventually(SETTLE, "pairs into node-c fail, TARGET_FAILING blames node-c",
                    () -> agent("node-a").mesh(true), v -> failedPairs(v).size() == 3 && hasFinding(v, "TARGET_FAILING")
                            && pairs(v).size() == 12);

            for (String source : List.of("node-a", "node-b", "node-d")) {
                JsonNode p = pairs(domain).get(source + ">node-c");
                assertThat(p.path("state").asString()).isEqualTo("failed");
                assertThat(p.path("stage").asString()).isEqualTo("import");
                assertThat(p.path("cuResult").asInt()).isEqualTo(800);
                assertThat(p.path("cuResultName").asString()).isEqualTo("CUDA_ERROR_NOT_PERMITTED");
                assertThat(p.path("finding").path("code").asString()).isEqualTo("IMPORT_NOT_PERMITTED");
                assertThat(p.path("finding").path("blame").asString()).isEqualTo("target");
            }
            assertThat(failedPairs(domain)).containsExactlyInAnyOrder("node-a>node-c", "node-b>node-c", "node-d>node-c");
            assertThat(domain.path("findings")).hasSize(1);
            JsonNode f = domain.path("findings").get(0);
            assertThat(f.path("code").asString()).isEqualTo("TARGET_FAILING");
            assertThat(f.path("blame").asString()).isEqualTo("target");
            assertThat(f.path("evidence").path("targetNode").asString()).isEqualTo("node-c");
            // Sources are named node/GPU: one agent per GPU is one witness.
            assertThat(texts(f.path("evidence").path("failingFrom")).stream().map(x -> x.split("/")[0]).toList())
                    .containsExactly("node-a", "node-b", "node-d");

            // The exporter's metrics say the same, at the same pair.
            Agent a = agent("node-a");
            String scrape = a.scrape();
            assertThat(MeshAgents.metric(scrape, "imexprobe_pair_up", "target_node", "node-c")).isEqualTo(0.0);
            assertThat(MeshAgents.metric(scrape, "imexprobe_pair_last_cu_result", "target_node", "node-c"))
                    .isEqualTo(800.0);
            assertThat(MeshAgents.metric(scrape, "imexprobe_pair_up", "target_node", "node-b")).isEqualTo(1.0);
            assertThat(MeshAgents.metric(scrape, "imexprobe_pair_up", "target_node", "node-d")).isEqualTo(1.0);
            assertThat(MeshAgents.metric(scrape, "imexprobe_pair_last_cu_result", "target_node", "node-b"))
                    .isEqualTo(0.0);
            assertThat(MeshAgents.metric(scrape, "imexprobe_stage_results_total", "stage", "import", "cu_result",
                    "CUDA_ERROR_NOT_PERMITTED")).isGreaterThanOrEqualTo(1.0);
            assertThat(MeshAgents.metric(scrape, "imexprobe_probes_total", "target_node", "node-c", "verdict", "fail"))
                    .isGreaterThanOrEqualTo(1.0);
            double lastSuccess = MeshAgents.metric(scrape, "imexprobe_pair_last_success_timestamp_seconds",
                    "target_node", "node-c");
            assertThat(lastSuccess).as("the pair passed before the fault").isGreaterThan(0.0);

            // The matrix shows it too.
            String html = a.get("/").body();
            assertThat(html).contains("TARGET_FAILING", "IMPORT_NOT_PERMITTED", "class=\"failed\"",
                    "data-target=\"node-c / ");
            java.util.regex.Matcher cells = java.util.regex.Pattern
                    .compile("<td class=\"failed\" data-source=\"([^\"]*)\" data-target=\"([^\"]*)\"").matcher(html);
            List<String> failedCells = new ArrayList<>();
            while (cells.find()) {
                failedCells.add(cells.group(1).split(" ")[0] + ">" + cells.group(2).split(" ")[0]);
            }
            assertThat(failedCells).as("red cells of the matrix")
                    .containsExactlyInAnyOrder("node-a>node-c", "node-b>node-c", "node-d>node-c");
        } finally {
            agent("node-c").machine().clearFaults();
        }
        eventually(SETTLE, "the mesh heals once the fault is cleared", () -> agent("node-a").mesh(true),
                v -> pairs(v).size() == 12 && allOk(v) && v.path("findings").isEmpty());
    }

    @Test
    @Order(5)
    void aSourceThatCannotCreateFailsEveryPairFromItAndIsBlamed() {
        agent("node-b").machine().fault("cuMemCreate=2");
        try {
            JsonNode domain = eventually(SETTLE, "pairs from node-b fail, SOURCE_FAILING blames node-b",
                    () -> agent("node-d").mesh(true), v -> failedPairs(v).size() == 3 && hasFinding(v, "SOURCE_FAILING")
                            && pairs(v).size() == 12);

            assertThat(failedPairs(domain)).containsExactlyInAnyOrder("node-b>node-a", "node-b>node-c", "node-b>node-d");
            for (String target : List.of("node-a", "node-c", "node-d")) {
                JsonNode p = pairs(domain).get("node-b>" + target);
                assertThat(p.path("stage").asString()).isEqualTo("create");
                assertThat(p.path("cuResult").asInt()).isEqualTo(2);
                assertThat(p.path("cuResultName").asString()).isEqualTo("CUDA_ERROR_OUT_OF_MEMORY");
                assertThat(p.path("finding").path("code").asString()).isEqualTo("DRIVER_ERROR");
                assertThat(p.path("finding").path("blame").asString()).isEqualTo("source");
            }
            assertThat(domain.path("findings")).hasSize(1);
            JsonNode f = domain.path("findings").get(0);
            assertThat(f.path("code").asString()).isEqualTo("SOURCE_FAILING");
            assertThat(f.path("blame").asString()).isEqualTo("source");
            assertThat(f.path("evidence").path("sourceNode").asString()).isEqualTo("node-b");
            assertThat(texts(f.path("evidence").path("failingTo")).stream().map(x -> x.split("/")[0]).toList())
                    .containsExactly("node-a", "node-c", "node-d");

            String scrape = agent("node-b").scrape();
            assertThat(MeshAgents.metric(scrape, "imexprobe_pair_up", "source_node", "node-b", "target_node", "node-a"))
                    .isEqualTo(0.0);
            assertThat(MeshAgents.metric(scrape, "imexprobe_pair_last_cu_result", "target_node", "node-d"))
                    .isEqualTo(2.0);
            assertThat(MeshAgents.metric(scrape, "imexprobe_stage_results_total", "stage", "create", "cu_result",
                    "CUDA_ERROR_OUT_OF_MEMORY")).isGreaterThanOrEqualTo(1.0);
            // Another agent's pair into node-b is fine: node-b still imports.
            assertThat(agent("node-a").metric("imexprobe_pair_up", "target_node", "node-b")).isEqualTo(1.0);
        } finally {
            agent("node-b").machine().clearFaults();
        }
        eventually(SETTLE, "the mesh heals once the fault is cleared", () -> agent("node-d").mesh(true),
                v -> pairs(v).size() == 12 && allOk(v) && v.path("findings").isEmpty());
    }

    // ---- a peer dies and comes back --------------------------------------------------------------------------

    @Test
    @Order(6)
    void aPeerThatDiesGoesDownAndComesBackWhenRestarted() {
        Agent d = agent("node-d");
        Agent a = agent("node-a");
        double successBefore = a.metric("imexprobe_pair_last_success_timestamp_seconds", "target_node", "node-d");
        d.kill();

        JsonNode view = eventually(SETTLE, "node-a sees node-d unreachable", () -> a.mesh(false),
                v -> "failed".equals(pairs(v).get("node-a>node-d").path("state").asString()));
        JsonNode p = pairs(view).get("node-a>node-d");
        assertThat(p.path("stage").asString()).isEqualTo("transfer");
        assertThat(p.has("cuResult")).as("no driver call failed").isFalse();
        assertThat(p.path("finding").path("code").asString()).isEqualTo("PEER_UNREACHABLE");
        assertThat(p.path("finding").path("blame").asString()).isEqualTo("target");
        assertThat(p.path("targetGpu").asString()).as("still named after the node it was").startsWith("GPU-");
        assertThat(a.metric("imexprobe_pair_up", "target_node", "node-d")).isEqualTo(0.0);
        assertThat(a.metric("imexprobe_pair_last_cu_result", "target_node", "node-d")).isEqualTo(0.0);
        assertThat(a.metric("imexprobe_pair_last_success_timestamp_seconds", "target_node", "node-d"))
                .as("the last success is kept").isGreaterThanOrEqualTo(successBefore);
        assertThat(pairs(view).get("node-a>node-b").path("state").asString()).isEqualTo("ok");

        JsonNode domain = eventually(SETTLE, "the domain blames node-d", () -> a.mesh(true),
                v -> hasFinding(v, "TARGET_FAILING"));
        assertThat(texts(domain.path("unreachableAgents"))).containsExactly(d.hostPort());
        assertThat(domain.path("findings").get(0).path("evidence").path("targetNode").asString()).isEqualTo("node-d");

        d.start().awaitReady();
        Instant restarted = Instant.now();
        eventually(Duration.ofSeconds(90), "node-a's pair into node-d passes again",
                () -> a.metric("imexprobe_pair_up", "target_node", "node-d"), v -> v != null && v == 1.0);
        assertThat(a.metric("imexprobe_pair_last_success_timestamp_seconds", "target_node", "node-d"))
                .isGreaterThanOrEqualTo(restarted.getEpochSecond() - 1.0);
        eventually(SETTLE, "the restarted node-d measures its peers again under the same name", () -> d.mesh(false),
                v -> pairs(v).size() == 3 && allOk(v));
        eventually(SETTLE, "the whole domain is healthy again", () -> a.mesh(true),
                v -> pairs(v).size() == 12 && allOk(v) && v.path("findings").isEmpty()
                        && v.path("unreachableAgents").isEmpty());
    }

    // ---- the IMEX channel at run time -------------------------------------------------------------------------

    @Test
    @Order(7)
    void anImexChannelRemovedAndRestoredAtRunTimeShowsWithinTwoIntervals() throws IOException {
        Agent a = agent("node-a");
        Path channel = a.machine().channelDir().resolve("channel0");
        Duration twoIntervals = INTERVAL.multipliedBy(2);
        eventually(SETTLE, "node-a healthy", () -> a.mesh(false), v -> pairs(v).size() == 3 && allOk(v));

        Files.delete(channel);
        long removed = System.nanoTime();
        eventually(twoIntervals, "NO_IMEX_CHANNEL in /v1/node and node-a's pairs failing",
                () -> List.of(a.json("/v1/node"), a.mesh(false)),
                v -> findingCodes(v.get(0)).contains("NO_IMEX_CHANNEL") && failedPairs(v.get(1)).size() == 3);
        double tookSeconds = (System.nanoTime() - removed) / 1e9;
        JsonNode p = pairs(a.mesh(false)).get("node-a>node-b");
        assertThat(p.path("stage").asString()).isEqualTo("create");
        assertThat(p.path("cuResult").asInt()).isEqualTo(800);
        assertThat(p.path("finding").path("code").asString()).isEqualTo("CREATE_NOT_PERMITTED");
        assertThat(a.metric("imexprobe_imex_channels")).isEqualTo(0.0);
        assertThat(a.get("/actuator/health/readiness").status()).as("no channel: still ready, it serves")
                .isEqualTo(200);
        assertThat(a.get("/actuator/health/liveness").status()).as("but alive").isEqualTo(200);

        Files.writeString(channel, "");
        long restored = System.nanoTime();
        eventually(twoIntervals, "NO_IMEX_CHANNEL gone and node-a's pairs passing",
                () -> List.of(a.json("/v1/node"), a.mesh(false)),
                v -> !findingCodes(v.get(0)).contains("NO_IMEX_CHANNEL") && allOk(v.get(1)) && pairs(v.get(1)).size() == 3);
        double recoveredSeconds = (System.nanoTime() - restored) / 1e9;
        assertThat(a.metric("imexprobe_imex_channels")).isEqualTo(1.0);
        assertThat(a.get("/actuator/health/readiness").status()).isEqualTo(200);
        System.out.printf("channel removed: failing after %.2f s; restored: passing after %.2f s (interval %s)%n",
                tookSeconds, recoveredSeconds, INTERVAL);
    }

    // ---- reading the documents --------------------------------------------------------------------------------

    /** Pairs by "sourceNode>targetNode" (one GPU per node here). */
    static Map<String, JsonNode> pairs(JsonNode view) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        for (JsonNode p : view.path("pairs")) {
            out.put(p.path("sourceNode").asString() + ">" + p.path("targetNode").asString(), p);
        }
        return out;
    }

    static boolean allOk(JsonNode view) {
        return pairs(view).values().stream().allMatch(p -> "ok".equals(p.path("state").asString()));
    }

    static List<String> failedPairs(JsonNode view) {
        return pairs(view).entrySet().stream().filter(e -> "failed".equals(e.getValue().path("state").asString()))
                .map(Map.Entry::getKey).toList();
    }

    static boolean hasFinding(JsonNode view, String code) {
        return findingCodes(view).contains(code);
    }

    static List<String> findingCodes(JsonNode doc) {
        List<String> out = new ArrayList<>();
        doc.path("findings").forEach(f -> out.add(f.path("code").asString()));
        return out;
    }

    static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asString()));
        return out;
    }
}
