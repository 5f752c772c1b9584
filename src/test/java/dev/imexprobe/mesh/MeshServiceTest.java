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
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
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
        broken.stubFor(get("/v1/mesh").willReturn(aResponse().withStatus(500).withBody("oops")));
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
        PeerClient client = new PeerClient(new PeerHttp(Duration.ofSeconds(2), Duration.ofSeconds(5),
                PeerClient.MAX_REPLY), JSON, (method, path, body) -> null);
        service = new MeshService(new AgentIdentity("agent-a", "node-a", "1.2.3"), () -> true, state, discovery,
                client, JSON, Duration.ofSeconds(30));
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

        MeshView v = service.local();

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

        MeshView v = service.domain();

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
        peerB.stubFor(get("/v1/mesh").willReturn(okJson("{\"hello\": \"world\"}")));
        peerC.stubFor(get("/v1/mesh").willReturn(okJson("[1, 2]")));

        MeshView v = service.domain();

        assertThat(v.agents()).containsExactly("node-a");
        assertThat(v.unreachableAgents()).hasSize(3);
    }

    private static void serve(WireMockServer server, String node, List<String> pairs) {
        server.stubFor(get("/v1/mesh").willReturn(okJson("{\"agent\": {\"id\": \"x\", \"node\": \"" + node
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
