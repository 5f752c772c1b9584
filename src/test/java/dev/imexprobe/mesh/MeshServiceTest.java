package dev.imexprobe.mesh;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.peer.DiscoveryStatus;
import dev.imexprobe.peer.PeerAddress;
import dev.imexprobe.peer.PeerClient;
import dev.imexprobe.peer.PeerDiscovery;
import dev.imexprobe.peer.PeerHttp;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.testing.MutableClock;
import dev.imexprobe.testing.ProbeResults;

import com.github.tomakehurst.wiremock.WireMockServer;

import tools.jackson.databind.json.JsonMapper;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

/** The views of /v1/mesh: this agent's pairs, and the domain's, merged from peers served by WireMock. */
class MeshServiceTest {

    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final MutableClock clock = new MutableClock(T0);
    private final MeshState state = new MeshState(clock);
    private final WireMockServer peerB = new WireMockServer(options().dynamicPort());
    private final WireMockServer peerC = new WireMockServer(options().dynamicPort());
    private final WireMockServer broken = new WireMockServer(options().dynamicPort());
    private final Set<PeerAddress> peers = new LinkedHashSet<>();
    private MeshService service;

    @BeforeEach
    void start() {
        for (WireMockServer s : List.of(peerB, peerC, broken)) {
            s.start();
            peers.add(new PeerAddress("127.0.0.1", s.port()));
        }
        broken.stubFor(get(urlPathEqualTo("/v1/mesh")).willReturn(aResponse().withStatus(500).withBody("oops")));
        service = service(Duration.ofSeconds(2), Duration.ofSeconds(5));
    }

    /** The service of agent-a on node-a, asking {@link #peers} with a client of these timeouts. */
    private MeshService service(Duration connect, Duration timeout) {
        PeerDiscovery discovery = new PeerDiscovery() {
            @Override
            public Set<PeerAddress> peers() {
                return peers;
            }

            @Override
            public List<DiscoveryStatus> statuses() {
                return List.of();
            }
        };
        PeerClient client = new PeerClient(new PeerHttp(connect, timeout, PeerClient.MAX_REPLY), JSON,
                (method, path, body) -> null);
        return new MeshService(new AgentIdentity("agent-a", "node-a", "1.2.3"), () -> true, state, discovery,
                client, JSON, Duration.ofSeconds(30));
    }

    /**
     * One HTTP server answering /v1/mesh with {@code handler}, and n peers on it: every 127.0.0.x reaches it (the
     * loopback /8). Stop it when done.
     */
    private com.sun.net.httpserver.HttpServer loopbackPeers(int n, com.sun.net.httpserver.HttpHandler handler)
            throws java.io.IOException {
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("0.0.0.0", 0), 128);
        server.setExecutor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/v1/mesh", handler);
        server.start();
        peers.clear();
        for (int i = 0; i < n; i++) {
            peers.add(new PeerAddress("127.0.0." + (2 + i), server.getAddress().getPort()));
        }
        return server;
    }

    @AfterEach
    void stop() {
        peerB.stop();
        peerC.stop();
        broken.stop();
    }

    @Test
    void theAgentViewHoldsItsOwnPairsOnly() {
        state.record(ProbeResults.pass("node-a", "GPU-a", "node-b", "GPU-b"));
        state.expect(new PairKey("node-a", "GPU-a", "node-c", "GPU-c"));

        MeshView v = service.local(true);

        assertThat(v.scope()).isEqualTo("agent");
        assertThat(v.agents()).containsExactly("node-a");
        assertThat(v.fake()).isTrue();
        assertThat(v.intervalSeconds()).isEqualTo(30.0);
        assertThat(v.pairs()).extracting(PairState::targetNode, p -> p.state().label())
                .containsExactly(org.assertj.core.groups.Tuple.tuple("node-b", "ok"),
                        org.assertj.core.groups.Tuple.tuple("node-c", "unknown"));
        assertThat(v.findings()).isEmpty();
    }

    @Test
    void theDomainViewMergesEveryAnsweringPeerAndNamesTheOthers() {
        state.record(ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "node-a", "GPU-a", "node-d", "GPU-d"));
        state.record(ProbeResults.pass("node-a", "GPU-a", "node-b", "GPU-b"));
        serve(peerB, "node-b", List.of(
                pair("node-b", "GPU-b", "node-d", "GPU-d", "failed", "2026-12-01T09:59:50Z"),
                pair("node-b", "GPU-b", "node-a", "GPU-a", "ok", "2026-12-01T09:59:50Z"),
                "{\"sourceNode\": 7}"));
        serve(peerC, "node-c", List.of(
                pair("node-c", "GPU-c", "node-d", "GPU-d", "failed", "2026-12-01T09:59:55Z"),
                // node-c also saw node-a → node-b (an on-demand probe), later than node-a's own result
                pair("node-a", "GPU-a", "node-b", "GPU-b", "failed", "2026-12-01T10:00:05Z")));

        MeshView v = service.domain(true);

        assertThat(v.scope()).isEqualTo("domain");
        assertThat(v.agents()).startsWith("node-a").containsExactlyInAnyOrder("node-a", "node-b", "node-c");
        assertThat(v.unreachableAgents()).containsExactly("127.0.0.1:" + broken.port());
        Map<String, PairState> byNodes = v.pairs().stream()
                .collect(Collectors.toMap(p -> p.sourceNode() + ">" + p.targetNode(), p -> p));
        assertThat(byNodes).containsOnlyKeys("node-a>node-d", "node-a>node-b", "node-b>node-d", "node-b>node-a",
                "node-c>node-d");
        assertThat(byNodes.get("node-a>node-b").state()).as("the newest result of a pair wins")
                .isEqualTo(PairState.State.FAILED);

        assertThat(v.findings()).singleElement().satisfies(f -> {
            assertThat(f.code()).isEqualTo("TARGET_FAILING");
            assertThat(f.evidence()).containsEntry("targetNode", "node-d");
        });
        PairState intoD = byNodes.get("node-c>node-d");
        assertThat(intoD.finding().blame().label()).as("re-labelled by the mesh").isEqualTo("target");
        assertThat(intoD.finding().code()).isEqualTo("HANDLE_REJECTED");
        assertThat(intoD.finding().cause()).endsWith("Most sources fail on this target: blame the target.");
    }

    @Test
    void aPeerAnsweringGarbageIsUnreachableNotAPairSource() {
        peerB.stubFor(get(urlPathEqualTo("/v1/mesh")).willReturn(okJson("{\"hello\": \"world\"}")));
        peerC.stubFor(get(urlPathEqualTo("/v1/mesh")).willReturn(okJson("[1, 2]")));

        MeshView v = service.domain(true);

        assertThat(v.agents()).containsExactly("node-a");
        assertThat(v.unreachableAgents()).hasSize(3);
    }

    @Test
    void peersAreAskedWithoutTheirPairsApartByDesignAndAnOlderPeerForAllOfThem() {
        String apart = across("node-b", "GPU-b", "node-x", "GPU-x", "DIFFERENT_IMEX_DOMAIN");
        String notIsolated = across("node-b", "GPU-b", "node-y", "GPU-y", "IMEX_DOMAINS_NOT_ISOLATED");
        // node-b answers as this version does: what it was asked for
        peerB.stubFor(get(urlEqualTo("/v1/mesh?across=false")).willReturn(okJson(mesh("node-b", List.of(
                pair("node-b", "GPU-b", "node-a", "GPU-a", "ok", "2026-12-01T09:59:50Z"), notIsolated)))));
        // node-c is older: it refuses the parameter, and without it answers everything
        peerC.stubFor(get(urlEqualTo("/v1/mesh?across=false")).willReturn(aResponse().withStatus(400)
                .withHeader("Content-Type", "application/problem+json")
                .withBody("{\"detail\": \"query parameter 'across' is not taken here\"}")));
        peerC.stubFor(get(urlEqualTo("/v1/mesh")).willReturn(okJson(mesh("node-c", List.of(
                pair("node-c", "GPU-c", "node-a", "GPU-a", "ok", "2026-12-01T09:59:50Z"),
                across("node-c", "GPU-c", "node-x", "GPU-x", "DIFFERENT_IMEX_DOMAIN"), apart.replace("node-b", "node-c"))))));
        MeshView v = service.acrossFromPeersUpTo(peers.size() - 1).domain(true);

        assertThat(v.agents()).containsExactlyInAnyOrder("node-a", "node-b", "node-c");
        assertThat(v.pairs()).extracting(p -> p.sourceNode() + ">" + p.targetNode())
                .containsExactlyInAnyOrder("node-b>node-a", "node-c>node-a", "node-b>node-y");
        assertThat(v.findings()).extracting(dev.imexprobe.finding.Finding::code).contains("IMEX_DOMAINS_NOT_ISOLATED");
        peerB.verify(1, getRequestedFor(urlPathEqualTo("/v1/mesh")));
        peerC.verify(1, getRequestedFor(urlEqualTo("/v1/mesh")));
    }

    @Test
    void upToTheLimitPeersAreAskedForAllTheirPairsAcrossDomainsIncluded() {
        String apart = across("node-b", "GPU-b", "node-x", "GPU-x", "DIFFERENT_IMEX_DOMAIN");
        peerB.stubFor(get(urlEqualTo("/v1/mesh")).willReturn(okJson(mesh("node-b", List.of(
                pair("node-b", "GPU-b", "node-a", "GPU-a", "ok", "2026-12-01T09:59:50Z"), apart)))));
        serve(peerC, "node-c", List.of());

        MeshView v = service.acrossFromPeersUpTo(peers.size()).domain(true);

        assertThat(v.pairs()).extracting(p -> p.sourceNode() + ">" + p.targetNode())
                .containsExactlyInAnyOrder("node-b>node-a", "node-b>node-x");
        peerB.verify(1, getRequestedFor(urlEqualTo("/v1/mesh")));
        peerB.verify(0, getRequestedFor(urlEqualTo("/v1/mesh?across=false")));
    }

    @Test
    void aPeerWhoseAnswerWithItsPairsAcrossDomainsPassesTheCapIsAskedAgainWithoutThem() {
        List<String> many = new java.util.ArrayList<>();
        many.add(pair("node-b", "GPU-b", "node-a", "GPU-a", "ok", "2026-12-01T09:59:50Z"));
        String apart = across("node-b", "GPU-b", "node-x", "GPU-x", "DIFFERENT_IMEX_DOMAIN");
        while (many.size() * apart.length() < PeerClient.MAX_REPLY) {
            many.add(apart.replace("GPU-x", "GPU-x" + many.size()));
        }
        peerB.stubFor(get(urlEqualTo("/v1/mesh")).willReturn(okJson(mesh("node-b", many))));
        peerB.stubFor(get(urlEqualTo("/v1/mesh?across=false")).willReturn(okJson(mesh("node-b", many.subList(0, 1)))));
        serve(peerC, "node-c", List.of());

        MeshView v = service.acrossFromPeersUpTo(peers.size()).domain(true);

        assertThat(v.unreachableAgents()).containsExactly("127.0.0.1:" + broken.port());
        assertThat(v.pairs()).extracting(p -> p.sourceNode() + ">" + p.targetNode()).containsExactly("node-b>node-a");
    }

    @Test
    void viewersThatComeWhileTheDomainViewIsBuiltShareIt() throws Exception {
        serve(peerB, "node-b", List.of(pair("node-b", "GPU-b", "node-a", "GPU-a", "ok", "2026-12-01T09:59:50Z")));
        peerB.stubFor(get(urlPathEqualTo("/v1/mesh")).willReturn(okJson(mesh("node-b", List.of(
                pair("node-b", "GPU-b", "node-a", "GPU-a", "ok", "2026-12-01T09:59:50Z")))).withFixedDelay(1000)));
        serve(peerC, "node-c", List.of());
        int viewers = 3 + new java.util.Random().nextInt(5);
        List<java.util.concurrent.Future<MeshView>> views = new java.util.ArrayList<>();
        try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < viewers; i++) {
                views.add(pool.submit(() -> service.domain(true)));
                Thread.sleep(20);
            }
        }

        MeshView first = views.getFirst().get();
        assertThat(first.pairs()).extracting(PairState::sourceNode).containsExactly("node-b");
        for (var f : views) {
            assertThat(f.get()).as("%d viewers, one view", viewers).isSameAs(first);
        }
        peerB.verify(1, getRequestedFor(urlPathEqualTo("/v1/mesh")));
        MeshView later = service.domain(true);
        assertThat(later).as("a viewer after it gets a view of its own").isNotSameAs(first);
        peerB.verify(2, getRequestedFor(urlPathEqualTo("/v1/mesh")));
    }

    @Test
    void peersThatDoNotAnswerHoldTheViewTwoPeerTimeoutsAtMost() throws Exception {
        int n = MeshService.FAN_OUT * 5; // 5 timeouts, one after the other, without the bound
        com.sun.net.httpserver.HttpServer server = loopbackPeers(n, x -> {
            try {
                Thread.sleep(10_000); // answers nothing within the 1 s peer timeout
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                x.close();
            }
        });
        try {
            MeshService s = service(Duration.ofSeconds(1), Duration.ofSeconds(1));

            long start = System.nanoTime();
            MeshView v = s.domain(true);
            double seconds = (System.nanoTime() - start) / 1e9;

            assertThat(v.unreachableAgents()).hasSize(n);
            assertThat(seconds).as("two peer timeouts of 1 s, and a margin").isLessThan(3.5);
        } finally {
            server.stop(0);
        }
    }

    @Test
    void withoutAcrossTheAgentViewLeavesOutOnlyPairsApartByDesign() {
        state.learnDomain("GPU-a", "fabric:one/1");
        state.learnDomain("GPU-x", "fabric:two/1");
        state.learnDomain("GPU-b", "fabric:one/1");
        state.record(ProbeResults.pass("node-a", "GPU-a", "node-b", "GPU-b"));
        state.notProbed(new PairKey("node-a", "GPU-a", "node-x", "GPU-x"),
                dev.imexprobe.finding.FindingCode.DIFFERENT_IMEX_DOMAIN.finding(Map.of()));
        // an on-demand probe across the domains: it tells something
        state.record(ProbeResults.failAt(Stage.IMPORT, CuResult.of(801), "node-a", "GPU-a", "node-x", "GPU-x"));

        assertThat(service.local(true).pairs()).hasSize(2);
        assertThat(service.local(false).pairs()).extracting(PairState::targetNode).containsExactlyInAnyOrder("node-b", "node-x");
        state.notProbed(new PairKey("node-a", "GPU-a", "node-x", "GPU-x"),
                dev.imexprobe.finding.FindingCode.DIFFERENT_IMEX_DOMAIN.finding(Map.of()));
        assertThat(service.local(false).pairs()).extracting(PairState::targetNode).containsExactly("node-b");
        assertThat(service.local(true).pairs()).extracting(PairState::targetNode).containsExactlyInAnyOrder("node-b", "node-x");
    }

    @Test
    void peersAreAskedAFewAtATime() throws Exception {
        java.util.concurrent.atomic.AtomicInteger now = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger most = new java.util.concurrent.atomic.AtomicInteger();
        int n = MeshService.FAN_OUT * 3 + new java.util.Random().nextInt(MeshService.FAN_OUT);
        com.sun.net.httpserver.HttpServer server = loopbackPeers(n, x -> {
            most.accumulateAndGet(now.incrementAndGet(), Math::max);
            try {
                Thread.sleep(100);
                byte[] body = mesh("node-" + x.getLocalAddress().getAddress().getHostAddress(), List.of())
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
                x.getResponseHeaders().add("Content-Type", "application/json");
                x.sendResponseHeaders(200, body.length);
                x.getResponseBody().write(body);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                now.decrementAndGet();
                x.close();
            }
        });
        try {
            MeshView v = service.domain(true);

            assertThat(v.unreachableAgents()).isEmpty();
            assertThat(v.agents()).hasSize(n + 1);
            assertThat(most.get()).as("peers asked at once, of %d", n).isBetween(2, MeshService.FAN_OUT);
        } finally {
            server.stop(0);
        }
    }

    private static String mesh(String node, List<String> pairs) {
        return "{\"agent\": {\"id\": \"x\", \"node\": \"" + node + "\", \"version\": \"1.2.3\"}, \"scope\": \"agent\", "
                + "\"pairs\": [" + String.join(",", pairs) + "]}";
    }

    /** A pair across IMEX domains, not probed, with the finding given (its evidence left empty). */
    private static String across(String sn, String sg, String tn, String tg, String code) {
        return "{\"sourceNode\": \"" + sn + "\", \"sourceGpu\": \"" + sg + "\", \"targetNode\": \"" + tn
                + "\", \"targetGpu\": \"" + tg + "\", \"domain\": \"fabric:one/1\", \"targetDomain\": \"fabric:two/1\", "
                + "\"state\": \"not_probed\", \"finding\": {\"code\": \"" + code + "\", \"severity\": \"info\", "
                + "\"blame\": \"target\", \"cause\": \"apart.\", \"remedy\": \"none\", \"evidence\": {}}, "
                + "\"lastProbe\": \"2026-12-01T09:59:50Z\", \"consecutiveFailures\": 0}";
    }

    private static void serve(WireMockServer server, String node, List<String> pairs) {
        server.stubFor(get(urlPathEqualTo("/v1/mesh")).willReturn(okJson("{\"agent\": {\"id\": \"x\", \"node\": \"" + node
                + "\", \"version\": \"1.2.3\"}, \"scope\": \"agent\", \"pairs\": [" + String.join(",", pairs) + "]}")));
    }

    /** A pair as /v1/mesh renders it; a failed one carries an 801 import finding blaming the source. */
    private static String pair(String sn, String sg, String tn, String tg, String state, String lastProbe) {
        String failure = "failed".equals(state)
                ? ", \"stage\": \"import\", \"cuResult\": 801, \"cuResultName\": \"CUDA_ERROR_NOT_SUPPORTED\", "
                + "\"finding\": {\"code\": \"HANDLE_REJECTED\", \"severity\": \"error\", \"blame\": \"source\", "
                + "\"cause\": \"rejected.\", \"remedy\": \"export afresh\", \"evidence\": {\"stage\": \"import\"}}"
                : ", \"lastSuccess\": \"" + lastProbe + "\"";
        return "{\"sourceNode\": \"" + sn + "\", \"sourceGpu\": \"" + sg + "\", \"targetNode\": \"" + tn
                + "\", \"targetGpu\": \"" + tg + "\", \"state\": \"" + state + "\"" + failure + ", \"ageSeconds\": 1.0, "
                + "\"lastProbe\": \"" + lastProbe + "\", \"durationSeconds\": 0.01, \"consecutiveFailures\": "
                + ("failed".equals(state) ? 1 : 0) + "}";
    }
}
