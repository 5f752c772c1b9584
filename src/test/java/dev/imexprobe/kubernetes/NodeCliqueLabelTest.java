package dev.imexprobe.kubernetes;

import dev.imexprobe.testing.CapturedLogs;
import dev.imexprobe.testing.FakeKubernetesApi;
import dev.imexprobe.testing.MutableClock;

import ch.qos.logback.classic.Level;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

/** The agent's own Node's nvidia.com/gpu.clique from a fake API server: read, cached, and quiet when refused. */
class NodeCliqueLabelTest {

    static final String NODE = "gb200-07";
    static final String PATH = "/api/v1/nodes/" + NODE;
    static final String CLUSTER = "6a1c7b2e-5d0f-4c3b-9a8e-00000000c0de";
    @RegisterExtension
    static final FakeKubernetesApi api = FakeKubernetesApi.resetBeforeEachTest();
    @RegisterExtension
    final CapturedLogs logs = new CapturedLogs(NodeCliqueLabel.class);
    final MutableClock clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));

    NodeCliqueLabel label() {
        KubernetesApi client = api.client(Duration.ofSeconds(20), 0, Duration.ofMillis(10));
        return new NodeCliqueLabel(client, NODE, Duration.ofSeconds(60), clock);
    }

    static String node(String labels) {
        return "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" + NODE + "\",\"labels\":{"
                + labels + "}}}";
    }

    @Test
    void theLabelIsReadAsGpuFeatureDiscoveryWritesItAndAskedOncePerInterval() {
        api.stubFor(get(urlPathEqualTo(PATH)).willReturn(okJson(node("\"kubernetes.io/hostname\":\"" + NODE
                + "\",\"nvidia.com/gpu.clique\":\"" + CLUSTER + ".7\""))));
        NodeCliqueLabel l = label();

        CliqueLabel first = l.get();
        assertThat(first.state()).isEqualTo("ok");
        assertThat(first.value()).isEqualTo(CLUSTER + ".7");
        assertThat(first.domain()).isEqualTo("fabric:" + CLUSTER + "/7");
        clock.advance(Duration.ofSeconds(59));
        assertThat(l.get()).isSameAs(first);
        api.verify(1, getRequestedFor(urlPathEqualTo(PATH)));
        clock.advance(Duration.ofSeconds(1));
        l.get();
        api.verify(2, getRequestedFor(urlPathEqualTo(PATH)));
    }

    @Test
    void aNodeWithoutTheLabelIsUnset() {
        api.stubFor(get(urlPathEqualTo(PATH)).willReturn(okJson(node("\"kubernetes.io/hostname\":\"" + NODE + "\""))));

        CliqueLabel l = label().get();

        assertThat(l.state()).isEqualTo("unset");
        assertThat(l.domain()).isNull();
        assertThat(l.detail()).contains("has no label nvidia.com/gpu.clique");
    }

    @Test
    void aRefusalAndAnUnknownNodeAreSaidOnceAtInfo() {
        api.stubFor(get(urlPathEqualTo(PATH)).willReturn(aResponse().withStatus(403)
                .withHeader("Content-Type", "application/json")
                .withBody("{\"kind\":\"Status\",\"message\":\"nodes \\\"" + NODE + "\\\" is forbidden\"}")));
        NodeCliqueLabel l = label();

        CliqueLabel forbidden = l.get();
        clock.advance(Duration.ofSeconds(60));
        l.get();
        clock.advance(Duration.ofSeconds(60));
        l.get();

        assertThat(forbidden.state()).isEqualTo("forbidden");
        assertThat(forbidden.detail()).contains("HTTP 403").contains("grant get on nodes");
        assertThat(logs.list).hasSize(1);
        assertThat(logs.list.get(0).getLevel()).isEqualTo(Level.INFO);
        assertThat(logs.list.get(0).getFormattedMessage()).contains("no nvidia.com/gpu.clique label for this agent")
                .contains("from NVML alone");

        api.stubFor(get(urlPathEqualTo(PATH)).willReturn(aResponse().withStatus(404)));
        clock.advance(Duration.ofSeconds(60));
        CliqueLabel absent = l.get();
        assertThat(absent.state()).isEqualTo("absent");
        assertThat(absent.detail()).contains("IMEXPROBE_NODE_NAME");
        assertThat(logs.list).hasSize(2);
        assertThat(logs.list.get(1).getLevel()).isEqualTo(Level.INFO);
    }
}
