package dev.imexprobe.kubernetes;

import dev.imexprobe.testing.CapturedLogs;
import dev.imexprobe.testing.FakeKubernetesApi;
import dev.imexprobe.testing.MutableClock;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * This node's ComputeDomains from a fake API server answering as the NVIDIA DRA driver's CRD does (status.status,
 * status.nodes[] with name, ipAddress, cliqueID, index, status): only the entries of this node, at most one list
 * per interval, and a cluster without the CRD (404) said once, quietly.
 */
class ComputeDomainsTest {

    static final String NODE = "gb200-07";
    @RegisterExtension
    static final FakeKubernetesApi api = FakeKubernetesApi.resetBeforeEachTest();
    @RegisterExtension
    final CapturedLogs logs = new CapturedLogs(ComputeDomains.class);
    final MutableClock clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));

    ComputeDomains domains() {
        KubernetesApi client = api.client(Duration.ofSeconds(20), 0, Duration.ofMillis(10));
        return new ComputeDomains(client, NODE, Duration.ofSeconds(60), clock);
    }

    static String cd(String ns, String name, String status, String nodes) {
        return "{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"ComputeDomain\",\"metadata\":{\"name\":\""
                + name + "\",\"namespace\":\"" + ns + "\"},\"spec\":{\"numNodes\":0,\"channel\":{"
                + "\"resourceClaimTemplate\":{\"name\":\"" + name + "-channel\"}}},\"status\":{\"status\":\"" + status
                + "\",\"nodes\":[" + nodes + "]}}";
    }

    static String node(String name, String ip, String clique, int index, String status) {
        return "{\"name\":\"" + name + "\",\"ipAddress\":\"" + ip + "\",\"cliqueID\":\"" + clique + "\",\"index\":"
                + index + ",\"status\":\"" + status + "\"}";
    }

    @Test
    void theEntriesOfThisNodeAreShownWithTheDomainsStatus() {
        String clique = "6a1c7b2e-5d0f-4c3b-9a8e-00000000c0de.7";
        api.stubFor(get(urlPathEqualTo(ComputeDomains.PATH)).willReturn(okJson("{\"kind\":\"ComputeDomainList\","
                + "\"metadata\":{},\"items\":[" + cd("train", "job-b", "NotReady", node(NODE, "10.1.0.7", clique, 3,
                "NotReady") + "," + node("gb200-08", "10.1.0.8", clique, 4, "Ready")) + ","
                + cd("canary", "imexprobe", "Ready", node(NODE, "10.1.0.7", clique, 0, "Ready")) + ","
                + cd("other", "elsewhere", "Ready", node("gb200-09", "10.1.0.9", clique, 0, "Ready")) + "]}")));

        ComputeDomainStatus s = domains().get();

        assertThat(s.state()).isEqualTo("ok");
        assertThat(s.detail()).isNull();
        assertThat(s.computeDomains()).containsExactly(
                new ComputeDomainStatus.Entry("canary", "imexprobe", "Ready", "Ready", "10.1.0.7", clique, 0,
                        List.of(new ComputeDomainStatus.Member(NODE, "Ready"))),
                new ComputeDomainStatus.Entry("train", "job-b", "NotReady", "NotReady", "10.1.0.7", clique, 3,
                        List.of(new ComputeDomainStatus.Member(NODE, "NotReady"),
                                new ComputeDomainStatus.Member("gb200-08", "Ready"))));
        ComputeDomainStatus.Entry jobB = s.computeDomains().get(1);
        assertThat(jobB.saysReady("gb200-08")).as("its own entry says Ready").isTrue();
        assertThat(jobB.saysReady(NODE)).isFalse();
        assertThat(jobB.saysReady("gb200-09")).as("not a member").isNull();
        api.verify(1, getRequestedFor(urlPathEqualTo(ComputeDomains.PATH)).withQueryParam("limit", equalTo("500")));
    }

    @Test
    void theListIsAskedAtMostOncePerIntervalAndPagedToTheEnd() {
        api.stubFor(get(urlPathEqualTo(ComputeDomains.PATH)).withQueryParam("continue", equalTo("page-2"))
                .atPriority(1).willReturn(okJson("{\"metadata\":{},\"items\":[" + cd("b", "two", "Ready",
                        node(NODE, "10.0.0.1", "c.1", 0, "Ready")) + "]}")));
        api.stubFor(get(urlPathEqualTo(ComputeDomains.PATH)).atPriority(5).willReturn(okJson(
                "{\"metadata\":{\"continue\":\"page-2\"},\"items\":[" + cd("a", "one", "Ready",
                        node(NODE, "10.0.0.1", "c.1", 0, "Ready")) + "]}")));
        ComputeDomains d = domains();

        ComputeDomainStatus first = d.get();
        assertThat(first.state()).as(first.detail()).isEqualTo("ok");
        assertThat(first.computeDomains()).extracting(ComputeDomainStatus.Entry::name).containsExactly("one", "two");
        clock.advance(Duration.ofSeconds(59));
        d.get();
        api.verify(2, getRequestedFor(urlPathEqualTo(ComputeDomains.PATH)));
        clock.advance(Duration.ofSeconds(1));
        d.get();
        api.verify(4, getRequestedFor(urlPathEqualTo(ComputeDomains.PATH)));
    }

    @Test
    void aClusterWithoutTheCrdIsAbsentAndSaidOnceQuietly() {
        api.stubFor(get(urlPathEqualTo(ComputeDomains.PATH)).willReturn(aResponse().withStatus(404)
                .withHeader("Content-Type", "application/json").withBody("{\"kind\":\"Status\",\"status\":\"Failure\","
                        + "\"message\":\"the server could not find the requested resource\",\"code\":404}")));
        ComputeDomains d = domains();

        for (int i = 0; i < 5; i++) {
            ComputeDomainStatus s = d.get();
            assertThat(s.state()).isEqualTo("absent");
            assertThat(s.detail()).contains("404", "NVIDIA DRA driver is not installed");
            assertThat(s.computeDomains()).isEmpty();
            clock.advance(Duration.ofSeconds(60));
        }
        api.verify(5, getRequestedFor(urlPathEqualTo(ComputeDomains.PATH)));
        assertThat(logs.list).as("one line for five 404s, at INFO, never WARN or ERROR").hasSize(1)
                .allSatisfy(e -> assertThat(e.getLevel().toString()).isEqualTo("INFO"));
    }

    @Test
    void aRefusalNamesTheRbacAndAnUnreachableApiIsAnError() {
        api.stubFor(get(urlPathEqualTo(ComputeDomains.PATH)).willReturn(aResponse().withStatus(403)
                .withHeader("Content-Type", "application/json").withBody("{\"kind\":\"Status\",\"message\":"
                        + "\"computedomains.resource.nvidia.com is forbidden\",\"code\":403}")));
        ComputeDomainStatus s = domains().get();
        assertThat(s.state()).isEqualTo("forbidden");
        assertThat(s.detail()).contains("HTTP 403", "is forbidden", "get/list on computedomains.resource.nvidia.com",
                "computeDomainStatus.enabled=true");

        KubernetesApi nowhere = new KubernetesApi(new KubernetesApi.Settings(URI.create("http://127.0.0.1:9"),
                null, null, Duration.ofSeconds(1), 0, Duration.ofMillis(10)));
        ComputeDomainStatus e = new ComputeDomains(nowhere, NODE, Duration.ofSeconds(60), clock).get();
        assertThat(e.state()).isEqualTo("error");
        assertThat(e.detail()).contains("cannot connect");
    }
}
