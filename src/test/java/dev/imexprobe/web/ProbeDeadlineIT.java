package dev.imexprobe.web;

import com.github.tomakehurst.wiremock.WireMockServer;

import dev.imexprobe.testing.AgentProcess;
import dev.imexprobe.testing.FakeMachine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * /probe keeps its own deadline, whatever the target does: Prometheus' scrape timeout header (less blackbox's
 * 0.5 s offset), a {@code timeout=} parameter, capped by imexprobe.probe.maxtimeout. Past it, the pairs not yet
 * done are timeouts and the answer is still 200. Each peer call keeps its own deadline too, also against a body
 * that trickles in. The target is WireMock standing in for an agent; the prober is a real agent on the fake driver.
 */
class ProbeDeadlineIT {

    /** Each peer call's own deadline: longer than the probe budgets below, so only those can explain the times. */
    private static final Duration PEER_TIMEOUT = Duration.ofSeconds(10);

    @TempDir
    static Path dir;

    static FakeMachine machine;
    static AgentProcess agent;
    static AgentProcess capped;
    static WireMockServer peer;
    static String peerNode;
    private final Random random = new Random();

    @BeforeAll
    static void start() {
        machine = FakeMachine.h200(dir.resolve("machine"));
        agent = AgentProcess.start("agent", dir.resolve("a"), machine.env(), "node-a", Map.of(
                "IMEXPROBE_PROBE_TIMEOUT", PEER_TIMEOUT.toSeconds() + "s"));
        capped = AgentProcess.start("capped", dir.resolve("c"), machine.env(), "node-c", Map.of(
                "IMEXPROBE_PROBE_TIMEOUT", PEER_TIMEOUT.toSeconds() + "s",
                "IMEXPROBE_PROBE_MAXTIMEOUT", "2s"));
        peer = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1").containerThreads(40));
        peer.start();
        AgentProcess.awaitReady(agent, capped);
        ObjectNode node = (ObjectNode) agent.get("/v1/node").json();
        ((ObjectNode) node.get("agent")).put("node", "node-wiremock").put("id", "feedfacefeedface");
        peerNode = node.toString();
    }

    @AfterAll
    static void stop() {
        AgentProcess.closeAll(agent, capped);
        if (peer != null) {
            peer.stop();
        }
    }

    @AfterEach
    void releasedWhatItExported() {
        peer.resetAll();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                assertThat(machine.stateFiles()).as("allocations of the fake host").isEmpty());
    }

    private static String target() {
        return "127.0.0.1:" + peer.port();
    }

    private record Timed(AgentProcess.Reply reply, long millis) {
        JsonNode json() {
            return reply.json();
        }
    }

    private static Timed probe(AgentProcess a, String query, String scrapeTimeout) {
        HttpRequest.Builder b = HttpRequest.newBuilder(a.uri("/probe?target=" + target() + query)).GET();
        if (scrapeTimeout != null) {
            b.header("X-Prometheus-Scrape-Timeout-Seconds", scrapeTimeout);
        }
        long start = System.nanoTime();
        AgentProcess.Reply r = a.send(b, Duration.ofSeconds(60));
        return new Timed(r, (System.nanoTime() - start) / 1_000_000);
    }

    private static List<String> transferStatuses(JsonNode report) {
        List<String> out = new ArrayList<>();
        for (JsonNode pair : report.get("results")) {
            for (JsonNode s : pair.get("stages")) {
                if (s.get("name").asString().equals("transfer")) {
                    out.add(s.get("status").asString());
                }
            }
        }
        return out;
    }

    @Test
    void aTargetThatNeverAnswersIsA200FailWithinTheScrapeTimeout() {
        peer.stubFor(any(anyUrl()).willReturn(aResponse().withFixedDelay(30_000).withStatus(200)));
        Timed t = probe(agent, "", "3");
        assertThat(t.reply().status()).isEqualTo(200);
        assertThat(t.millis()).as("3 s scrape timeout less the 0.5 s offset").isBetween(2_400L, 3_500L);
        assertThat(t.json().get("verdict").asString()).isEqualTo("fail");
        assertThat(transferStatuses(t.json())).containsOnly("timeout");
    }

    @Test
    void pairsTheDeadlineLeftNoTimeForAreTimeoutsNotMissing() {
        // identity at once, then the import hangs: push times out at the deadline, pull is never started
        peer.stubFor(get("/v1/node").willReturn(okJson(peerNode)));
        peer.stubFor(post("/v1/imports").willReturn(aResponse().withFixedDelay(30_000).withStatus(200)));
        peer.stubFor(post("/v1/exports").willReturn(aResponse().withFixedDelay(30_000).withStatus(200)));
        double seconds = 1.5 + random.nextInt(10) / 10.0;
        Timed t = probe(agent, "&direction=both&timeout=" + seconds + "s", null);
        assertThat(t.reply().status()).isEqualTo(200);
        assertThat(t.millis()).isBetween((long) (seconds * 1000) - 100, (long) (seconds * 1000) + 500);
        JsonNode results = t.json().get("results");
        assertThat(results).hasSize(2);
        assertThat(transferStatuses(t.json())).containsExactly("timeout", "timeout");
        assertThat(results.get(1).get("finding").get("code").asString()).isEqualTo("TIMEOUT");
        assertThat(results.get(1).toString()).contains("not started: the probe's deadline had passed");
    }

    @Test
    void aBodyThatTricklesIsCutAtTheProbesDeadline() {
        peer.stubFor(get("/v1/node").willReturn(okJson(peerNode)));
        // headers at once, then the body one piece at a time, each well within any read timeout
        peer.stubFor(post("/v1/imports").willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json").withBody("{\"stages\":[" + " ".repeat(4000) + "]}")
                .withChunkedDribbleDelay(200, 40_000)));
        Timed t = probe(agent, "&direction=push", "2");
        assertThat(t.reply().status()).isEqualTo(200);
        assertThat(t.millis()).isBetween(1_400L, 2_000L);
        assertThat(transferStatuses(t.json())).containsExactly("timeout");
    }

    @Test
    void aLocalDriverCallThatHangsIsCutAtTheProbesDeadline() {
        peer.stubFor(get("/v1/node").willReturn(okJson(peerNode)));
        agent.faults("cuMemCreate=hang");
        try {
            double seconds = 1.5 + random.nextInt(10) / 10.0;
            Timed t = probe(agent, "&direction=push&timeout=" + seconds + "s", null);
            assertThat(t.reply().status()).isEqualTo(200);
            assertThat(t.millis()).as("the probe's deadline, not the driver's 5 s")
                    .isBetween((long) (seconds * 1000) - 100, (long) (seconds * 1000) + 700);
            JsonNode create = t.json().get("results").get(0).get("stages").get(0);
            assertThat(create.get("name").asString()).isEqualTo("create");
            assertThat(create.get("status").asString()).isEqualTo("timeout");
            assertThat(create.get("detail").asString()).startsWith("no answer from the driver before the probe's deadline");
            assertThat(t.json().get("results").get(0).get("finding").get("code").asString()).isEqualTo("TIMEOUT");
            assertThat(agent.metric("imexprobe_driver_calls_stuck")).as("not stuck before the driver's own 5 s")
                    .isZero();
        } finally {
            agent.clearFaults();
        }
    }

    @Test
    void aPullWhoseDeadlineTheWriteBackCheckUsedUpStillHasTheExporterRelease() {
        // A WireMock of its own (an address the agent never identified) in front of a real exporter, the capped
        // agent: everything passes through but the exporter's check of the write-back, which hangs and uses up the
        // probe's deadline before the exporter is asked to release.
        WireMockServer front = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
        front.start();
        try {
            front.stubFor(get("/v1/node").willReturn(okJson(capped.get("/v1/node").json().toString())));
            front.stubFor(any(urlPathMatching("/v1/exports.*")).atPriority(10)
                    .willReturn(aResponse().proxiedFrom(capped.baseUrl())));
            front.stubFor(post(urlPathMatching("/v1/exports/.+/verify")).atPriority(1)
                    .willReturn(okJson("{}").withFixedDelay(30_000)));
            double seconds = 1.5 + random.nextInt(10) / 10.0;
            HttpRequest.Builder b = HttpRequest.newBuilder(agent.uri("/probe?target=127.0.0.1:" + front.port()
                    + "&direction=pull&timeout=" + seconds + "s")).GET();
            long start = System.nanoTime();
            AgentProcess.Reply r = agent.send(b, Duration.ofSeconds(60));
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertThat(r.status()).isEqualTo(200);
            assertThat(millis).as("ends by the probe's deadline").isLessThan((long) (seconds * 1000) + 700);
            JsonNode release = null;
            for (JsonNode s : r.json().get("results").get(0).get("stages")) {
                if (s.get("name").asString().equals("release")) {
                    release = s;
                }
            }
            assertThat(release).as("%s", r.json()).isNotNull();
            assertThat(release.get("detail").asString()).as("%s", r.json())
                    .contains("exporter: deferred: the probe's deadline had passed");
            // asked after the answer: the export goes now, not at its TTL (60 s)
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100)).untilAsserted(() ->
                    assertThat(capped.metric("imexprobe_allocations_live", "kind", "created")).isZero());
            assertThat(front.findAll(com.github.tomakehurst.wiremock.client.WireMock.deleteRequestedFor(
                    urlPathMatching("/v1/exports/.+")))).hasSize(1);
        } finally {
            front.stop();
        }
    }

    @Test
    void theConfiguredMaximumCapsWhatTheCallerAsks() {
        peer.stubFor(any(anyUrl()).willReturn(aResponse().withFixedDelay(30_000).withStatus(200)));
        Timed t = probe(capped, "&timeout=20s", "30");
        assertThat(t.reply().status()).isEqualTo(200);
        assertThat(t.millis()).as("imexprobe.probe.maxtimeout=2s").isBetween(1_900L, 2_600L);
        assertThat(t.json().get("verdict").asString()).isEqualTo("fail");
    }

    @Test
    void aTimeoutThatIsNotADurationIsRefusedBeforeAnyPeerIsAsked() {
        for (String bad : List.of("abc", "-1s", "0", "1h", "0.0001ms")) {
            AgentProcess.Reply r = agent.get("/probe?target=" + target() + "&timeout=" + bad);
            assertThat(r.status()).as(bad).isEqualTo(400);
            assertThat(r.json().get("detail").asString()).as(bad).contains("timeout must be");
        }
        assertThat(peer.getAllServeEvents()).isEmpty();
    }
}
