package dev.imexprobe.condition;

import dev.imexprobe.kubernetes.KubernetesApi;
import dev.imexprobe.testing.FakeKubernetesApi;
import dev.imexprobe.testing.MutableClock;

import com.github.tomakehurst.wiremock.verification.LoggedRequest;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.patch;
import static com.github.tomakehurst.wiremock.client.WireMock.patchRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

/** The writer against WireMock: when it patches, what it patches, what it does when the API refuses. */
class NodeConditionWriterTest {

    static final String NODE_PATH = "/api/v1/nodes/node-a";
    static final String EVENTS_PATH = "/apis/events.k8s.io/v1/namespaces/default/events";
    static final JsonMapper JSON = JsonMapper.builder().build();
    // Long enough that a loaded machine's slow answer is not taken for an unreachable API (a second patch).
    static final Duration API_TIMEOUT = Duration.ofSeconds(3);
    @RegisterExtension
    static final FakeKubernetesApi api = FakeKubernetesApi.resetBeforeEachTest();

    final MutableClock clock = new MutableClock(Instant.parse("2026-12-04T00:00:00Z"));
    final List<String> results = new ArrayList<>();
    NodeConditionWriter writer;
    NodeEvents events;

    static final NodeJudge.Verdict TRUE = new NodeJudge.Verdict(NodeJudge.Status.TRUE, "ImportsPass", "2 of 2 pass");
    static final NodeJudge.Verdict FALSE = new NodeJudge.Verdict(NodeJudge.Status.FALSE, "CreateNotPermitted", "bad");

    @BeforeEach
    void stubTheNodeAndItsEvents() {
        api.stubFor(get(urlPathEqualTo(NODE_PATH)).willReturn(okJson("{\"kind\":\"Node\",\"status\":{}}")));
        api.stubFor(patch(urlPathEqualTo(NODE_PATH + "/status")).willReturn(okJson("{\"kind\":\"Node\"}")));
        api.stubFor(post(urlPathEqualTo(EVENTS_PATH)).willReturn(aResponse().withStatus(201).withBody("{}")));
        KubernetesApi client = api.client(API_TIMEOUT, 0, Duration.ZERO);
        events = new NodeEvents(client, "node-a", "default", "imexprobe-x", 3, Duration.ofMinutes(1), clock);
        writer = new NodeConditionWriter(client, "node-a", Duration.ofMinutes(5), events, results::add, clock);
    }

    List<JsonNode> patches() {
        return api.findAll(patchRequestedFor(urlPathEqualTo(NODE_PATH + "/status"))).stream()
                .map(r -> JSON.readTree(r.getBodyAsString())).toList();
    }

    List<LoggedRequest> eventRequests() {
        return api.findAll(postRequestedFor(urlPathEqualTo(EVENTS_PATH)));
    }

    @Test
    void patchesOnChangeAndHeartbeatOnlyAndMovesTheTransitionTimeOnlyOnTransitions() {
        writer.offer(TRUE);
        clock.advance(Duration.ofSeconds(30));
        writer.offer(TRUE);
        clock.advance(Duration.ofSeconds(30));
        writer.offer(TRUE);
        assertThat(patches()).as("one patch while nothing changes").hasSize(1);
        JsonNode c = patches().getFirst().path("status").path("conditions").get(0);
        assertThat(c.path("type").asString()).isEqualTo("ImexFabricImport");
        assertThat(c.path("status").asString()).isEqualTo("True");
        assertThat(c.path("lastTransitionTime").asString()).isEqualTo("2026-12-04T00:00:00Z");
        assertThat(api.findAll(patchRequestedFor(urlPathEqualTo(NODE_PATH + "/status"))).getFirst()
                .getHeader("Content-Type")).startsWith("application/strategic-merge-patch+json");

        clock.advance(Duration.ofMinutes(5));
        writer.offer(TRUE);
        assertThat(patches()).as("heartbeat").hasSize(2);
        JsonNode beat = patches().get(1).path("status").path("conditions").get(0);
        assertThat(beat.path("lastTransitionTime").asString()).isEqualTo("2026-12-04T00:00:00Z");
        assertThat(beat.path("lastHeartbeatTime").asString()).isEqualTo("2026-12-04T00:06:00Z");

        clock.advance(Duration.ofSeconds(10));
        writer.offer(FALSE);
        JsonNode f = patches().get(2).path("status").path("conditions").get(0);
        assertThat(f.path("status").asString()).isEqualTo("False");
        assertThat(f.path("reason").asString()).isEqualTo("CreateNotPermitted");
        assertThat(f.path("lastTransitionTime").asString()).isEqualTo("2026-12-04T00:06:10Z");
        assertThat(eventRequests()).as("one Event per transition: the first verdict, then False").hasSize(2);
        JsonNode e = JSON.readTree(eventRequests().get(1).getBodyAsString());
        assertThat(e.path("reason").asString()).isEqualTo("CreateNotPermitted");
        assertThat(e.path("type").asString()).isEqualTo("Warning");
        assertThat(e.path("regarding").path("kind").asString()).isEqualTo("Node");
        assertThat(e.path("regarding").path("name").asString()).isEqualTo("node-a");
        assertThat(e.path("eventTime").asString()).matches("2026-12-04T00:06:10\\.\\d{6}Z");
        assertThat(results).containsExactly("ok", "ok", "ok");
    }

    @Test
    void aFailedPatchIsSentAgainNextRoundAndCounted() {
        for (int status : new int[]{403, 409, 500}) {
            api.stubFor(patch(urlPathEqualTo(NODE_PATH + "/status")).willReturn(aResponse().withStatus(status)
                    .withBody("{\"kind\":\"Status\",\"message\":\"no\"}")));
            writer.offer(TRUE);
            clock.advance(Duration.ofSeconds(30));
        }
        api.stubFor(patch(urlPathEqualTo(NODE_PATH + "/status")).willReturn(okJson("{}")));
        writer.offer(TRUE);
        writer.offer(TRUE);
        assertThat(results).containsExactly("forbidden", "conflict", "error", "ok");
        assertThat(patches()).hasSize(4);
    }

    @Test
    void anApiThatDoesNotAnswerIsUnreachableAndRetried() {
        api.stubFor(any(urlPathEqualTo(NODE_PATH + "/status")).willReturn(okJson("{}").withFixedDelay(9000)));
        long t0 = System.nanoTime();
        writer.offer(FALSE);
        assertThat((System.nanoTime() - t0) / 1e9).as("bounded by the timeout").isLessThan(7.0);
        assertThat(results).containsExactly("unreachable");
        api.stubFor(patch(urlPathEqualTo(NODE_PATH + "/status")).willReturn(okJson("{}")));
        writer.offer(FALSE);
        assertThat(results).containsExactly("unreachable", "ok");
    }

    @Test
    void aRestartKeepsTheTransitionTimeOfTheConditionAlreadyThereAndSendsNoEvent() {
        api.stubFor(get(urlPathEqualTo(NODE_PATH)).willReturn(okJson("{\"kind\":\"Node\",\"status\":{\"conditions\":["
                + "{\"type\":\"Ready\",\"status\":\"True\"},"
                + "{\"type\":\"ImexFabricImport\",\"status\":\"True\",\"reason\":\"ImportsPass\",\"message\":\"old\","
                + "\"lastTransitionTime\":\"2026-12-01T10:00:00Z\",\"lastHeartbeatTime\":\"2026-12-03T23:58:00Z\"}]}}")));
        writer.offer(TRUE);
        JsonNode c = patches().getFirst().path("status").path("conditions").get(0);
        assertThat(c.path("lastTransitionTime").asString()).isEqualTo("2026-12-01T10:00:00Z");
        assertThat(eventRequests()).isEmpty();
        assertThat(patches().getFirst().path("status").path("conditions")).as("only our condition").hasSize(1);
    }

    @Test
    void notYetJudgedNeverReplacesAVerdictAndEventsAreRateLimited() {
        writer.offer(FALSE);
        writer.offer(new NodeJudge.Verdict(NodeJudge.Status.UNKNOWN, NodeJudge.REASON_SETTLING, "wait"));
        assertThat(writer.wanted()).isEqualTo(FALSE);
        for (int i = 0; i < 6; i++) {
            writer.offer(i % 2 == 0 ? TRUE : FALSE);
        }
        assertThat(eventRequests()).as("burst of 3, no time passed").hasSize(3);
        clock.advance(Duration.ofMinutes(1));
        writer.offer(TRUE);
        assertThat(eventRequests()).hasSize(4);
    }
}
