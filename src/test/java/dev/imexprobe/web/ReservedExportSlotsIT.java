package dev.imexprobe.web;

import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MeshAgents.Agent;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An operator's manual exports (POST /v1/exports, living their whole TTL) fill what they may of the export cap;
 * the slots kept for probes stay free, so the mesh keeps probing both ways and /probe works. A full cap is a 429
 * with Retry-After (the agent holds all it may now), never 413 (which is about a request's own size).
 */
class ReservedExportSlotsIT {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    /** 8 slots: a quarter (2) kept for probes, 6 for manual exports. */
    private static final int MAX = 8;

    static MeshAgents mesh;
    static Agent a;
    static Agent b;

    @BeforeAll
    static void start() {
        mesh = MeshAgents.forTest(ReservedExportSlotsIT.class);
        Map<String, String> env = Map.of("IMEXPROBE_MESH_INTERVAL", "1s", "IMEXPROBE_MESH_JITTER", "0.1",
                "IMEXPROBE_EXPORTS_MAX", Integer.toString(MAX), "IMEXPROBE_EXPORTS_TTL", "600s");
        a = mesh.add("node-a", env);
        b = mesh.add("node-b", env);
        a.env("IMEXPROBE_PEERS_STATIC", mesh.staticList());
        b.env("IMEXPROBE_PEERS_STATIC", mesh.staticList());
        mesh.startAll(true);
    }

    @AfterAll
    static void stop() {
        if (mesh != null) {
            mesh.close();
        }
    }

    private static HttpResponse<String> manualExport(Agent agent) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://" + agent.hostPort() + "/v1/exports"))
                .header("Authorization", "Bearer " + MeshAgents.TOKEN).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** An export marked as a probe's, as the agents mark theirs (a token holder can, the mark is no credential). */
    private static HttpResponse<String> markedExport(Agent agent) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://" + agent.hostPort() + "/v1/exports"))
                .header("Authorization", "Bearer " + MeshAgents.TOKEN).header("Content-Type", "application/json")
                .header("X-Imexprobe-Export-For", "probe")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static void release(Agent agent, List<String> ids) throws Exception {
        for (String id : ids) {
            HTTP.send(HttpRequest.newBuilder(URI.create("http://" + agent.hostPort() + "/v1/exports/" + id))
                    .header("Authorization", "Bearer " + MeshAgents.TOKEN).DELETE().timeout(Duration.ofSeconds(30))
                    .build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    /**
     * Every slot taken, the kept ones too: /probe, which needs one for its push, answers 429 with Retry-After and
     * the over-cap problem, not 413. The mesh's own exports live milliseconds, so one may free a slot between the
     * fill and the probe: then the probe passes, gives its slot back, and the fill is made again (3 tries).
     */
    @Test
    void aFullAgentAnswersProbeWith429AndRetryAfter() throws Exception {
        List<String> held = new ArrayList<>();
        try {
            HttpResponse<String> probe = null;
            for (int attempt = 0; attempt < 3; attempt++) {
                for (HttpResponse<String> r = manualExport(a); r.statusCode() == 201; r = manualExport(a)) {
                    held.add(JSON.readTree(r.body()).get("id").asString());
                }
                for (HttpResponse<String> r = markedExport(a); r.statusCode() == 201; r = markedExport(a)) {
                    held.add(JSON.readTree(r.body()).get("id").asString());
                }
                probe = HTTP.send(HttpRequest.newBuilder(URI.create("http://" + a.hostPort() + "/probe?target="
                        + b.hostPort() + "&direction=push")).timeout(Duration.ofSeconds(30)).GET().build(),
                        HttpResponse.BodyHandlers.ofString());
                if (probe.statusCode() != 200) {
                    break;
                }
            }
            assertThat(held).as("every slot of the agent taken").hasSizeLessThanOrEqualTo(MAX);
            assertThat(probe.statusCode()).as(probe.body()).isEqualTo(429);
            assertThat(probe.headers().firstValue("Retry-After")).isPresent();
            assertThat(Long.parseLong(probe.headers().firstValue("Retry-After").orElseThrow())).isPositive();
            JsonNode problem = JSON.readTree(probe.body());
            assertThat(problem.get("type").asString()).isEqualTo("urn:imexprobe:problem:over-cap");
            assertThat(problem.get("detail").asString()).contains("the most it allows")
                    .contains("this /probe can be retried");
        } finally {
            release(a, held);
        }
    }

    private static double probes(Agent agent) {
        return MeshAgents.samples(agent.scrape()).stream().filter(s -> s.name().equals("imexprobe_probes_total")
                && s.labels().getOrDefault("verdict", "").equals("pass")).mapToDouble(MeshAgents.Sample::value).sum();
    }

    @Test
    void manualExportsCannotStarveTheMeshOrProbe() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < MAX + new Random().nextInt(4); i++) {
            statuses.add(manualExport(a).statusCode());
        }
        int manual = MAX - MAX / 4;
        assertThat(statuses.subList(0, manual)).containsOnly(201);
        assertThat(statuses.subList(manual, statuses.size())).containsOnly(429);
        HttpResponse<String> refused = manualExport(a);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("600");
        JsonNode problem = JSON.readTree(refused.body());
        assertThat(problem.get("type").asString()).isEqualTo("urn:imexprobe:problem:over-cap");
        assertThat(problem.get("detail").asString()).contains("already holds " + manual + " manual exports")
                .contains("2 of its 8 slots are kept for probes");

        // both directions of the mesh go on: a's exports for b's pulls and its own pushes use the kept slots
        double aBefore = probes(a);
        double bBefore = probes(b);
        MeshAgents.eventually(Duration.ofSeconds(60), "both agents probe on after the fill",
                () -> new double[] {probes(a), probes(b)}, v -> v[0] >= aBefore + 6 && v[1] >= bBefore + 6);

        JsonNode report = b.json("/probe?target=" + a.hostPort() + "&direction=both");
        assertThat(report.get("verdict").asString()).as(report.toString()).isEqualTo("pass");
        report = a.json("/probe?target=" + b.hostPort() + "&direction=both");
        assertThat(report.get("verdict").asString()).as(report.toString()).isEqualTo("pass");
    }
}
