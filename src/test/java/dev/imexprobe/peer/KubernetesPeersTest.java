package dev.imexprobe.peer;

import dev.imexprobe.testing.FakeKubernetesApi;
import dev.imexprobe.testing.MutableClock;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.MappingBuilder;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.http.Fault;
import dev.imexprobe.peer.PodFixtures.Pod;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KubernetesPeersTest {

    private static final String NAMESPACE = "gpu-ops";
    // A set-based selector: spaces, parentheses and commas must survive URL encoding.
    private static final String SELECTOR = "app.kubernetes.io/name=imexprobe,tier in (agent, probe)";
    private static final String PODS = "/api/v1/namespaces/" + NAMESPACE + "/pods";

    @RegisterExtension
    static final FakeKubernetesApi api = FakeKubernetesApi.resetBeforeEachTest();

    @TempDir
    Path dir;
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

    @BeforeEach
    void writeTheToken() throws IOException {
        Files.writeString(dir.resolve("token"), "token-1\n");
    }

    private KubernetesPeers.Settings settings(Duration timeout, int pageSize) {
        return new KubernetesPeers.Settings(URI.create(api.baseUrl() + "/"), dir.resolve("token"),
                dir.resolve("ca.crt"), NAMESPACE, SELECTOR, 8080, null, timeout, pageSize);
    }

    private KubernetesPeers peers() {
        return new KubernetesPeers(settings(Duration.ofSeconds(5), 500), clock);
    }

    private static MappingBuilder page(String continueToken, int limit) {
        return get(urlPathEqualTo(PODS))
                .withQueryParam("labelSelector", equalTo(SELECTOR))
                .withQueryParam("limit", equalTo(Integer.toString(limit)))
                .withQueryParam("continue", continueToken == null ? absent() : equalTo(continueToken));
    }

    private static void serve(List<Pod> pods) {
        api.stubFor(page(null, 500).willReturn(okJson(PodFixtures.podList(pods, null))));
    }

    @Test
    void keepsOnlyRunningReadyPodsWithAnIpThatAreNotBeingDeleted() {
        serve(List.of(
                Pod.runningReady("imexprobe-a", "node-a", "10.0.0.1"),
                Pod.runningReady("imexprobe-b", "node-b", "fd00:0:0:0:0:0:0:2"),
                Pod.runningReady("imexprobe-c", "node-c", "10.0.0.3").httpPort(9090),
                Pod.runningReady("pending", "node-d", "10.0.0.4").phase("Pending"),
                Pod.runningReady("not-ready", "node-e", "10.0.0.5").ready("False"),
                Pod.runningReady("no-ready-condition", "node-e", "10.0.0.6").ready(null),
                Pod.runningReady("terminating", "node-f", "10.0.0.7").beingDeleted(),
                Pod.runningReady("no-ip", "node-g", null).withoutIp(),
                Pod.runningReady("succeeded", "node-h", "10.0.0.8").phase("Succeeded"),
                Pod.runningReady("bad-ip", "node-i", "not-an-ip")));
        try (KubernetesPeers kubernetes = peers()) {
            Set<PeerAddress> found = kubernetes.peers();
            assertThat(found).extracting(PeerAddress::hostPort)
                    .containsExactly("10.0.0.1:8080", "[fd00::2]:8080", "10.0.0.3:9090");
            assertThat(found).extracting(PeerAddress::podName)
                    .containsExactly("imexprobe-a", "imexprobe-b", "imexprobe-c");
            assertThat(found).extracting(PeerAddress::nodeName).containsExactly("node-a", "node-b", "node-c");
            assertThat(found).allSatisfy(p -> assertThat(p.source()).isEqualTo("kubernetes"));
            assertThat(kubernetes.statuses()).singleElement().satisfies(s -> {
                assertThat(s.source()).isEqualTo("kubernetes");
                assertThat(s.peerCount()).isEqualTo(3);
                assertThat(s.lastSuccess()).isEqualTo(clock.instant());
                assertThat(s.failing()).isFalse();
            });
        }
        api.verify(getRequestedFor(urlPathEqualTo(PODS))
                .withHeader("Authorization", equalTo("Bearer token-1"))
                .withHeader("Accept", equalTo("application/json")));
        String sent = api.getAllServeEvents().getFirst().getRequest().getUrl();
        assertThat(sent).isEqualTo(PODS + "?labelSelector=app.kubernetes.io%2Fname%3Dimexprobe%2Ctier%20in%20"
                + "%28agent%2C%20probe%29&limit=500");
    }

    @Test
    void followsContinueTokensAcrossPages() {
        String token = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzfQ+/=";
        api.stubFor(page(null, 2).willReturn(okJson(PodFixtures.podList(List.of(
                Pod.runningReady("a", "node-a", "10.0.0.1"), Pod.runningReady("b", "node-b", "10.0.0.2")), token))));
        api.stubFor(page(token, 2).willReturn(okJson(PodFixtures.podList(List.of(
                Pod.runningReady("c", "node-c", "10.0.0.3")), null))));
        try (KubernetesPeers kubernetes = new KubernetesPeers(settings(Duration.ofSeconds(5), 2), clock)) {
            assertThat(kubernetes.peers()).extracting(PeerAddress::podName).containsExactly("a", "b", "c");
        }
        api.verify(2, getRequestedFor(urlPathEqualTo(PODS)));
    }

    @Test
    void randomDomainsArePagedAndFilteredCompletely() {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        for (int round = 0; round < 5; round++) {
            api.resetAll();
            int nodes = 1 + random.nextInt(20);
            int count = random.nextInt(300);
            List<Pod> pods = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                Pod pod = Pod.runningReady("imexprobe-" + round + "-" + i, "node-" + random.nextInt(nodes),
                        randomIp(random, i));
                switch (random.nextInt(8)) {
                    case 0 -> pod = pod.phase(random.nextBoolean() ? "Pending" : "Failed");
                    case 1 -> pod = pod.ready("False");
                    case 2 -> pod = pod.beingDeleted();
                    case 3 -> pod = pod.withoutIp();
                    case 4 -> pod = pod.httpPort(1 + random.nextInt(65535));
                    default -> { }
                }
                pods.add(pod);
            }
            int pageSize = 1 + random.nextInt(50);
            String previous = null;
            for (int from = 0; from < pods.size() || from == 0; from += pageSize) {
                int to = Math.min(pods.size(), from + pageSize);
                String next = to < pods.size() ? "page-" + to : null;
                api.stubFor(page(previous, pageSize).willReturn(okJson(PodFixtures.podList(pods.subList(from, to),
                        next))));
                previous = next;
            }
            Map<String, Pod> expected = pods.stream().filter(Pod::isPeer)
                    .collect(Collectors.toMap(Pod::name, p -> p));
            try (KubernetesPeers kubernetes = new KubernetesPeers(settings(Duration.ofSeconds(5), pageSize), clock)) {
                Set<PeerAddress> found = kubernetes.peers();
                String context = "seed " + seed + ", round " + round;
                assertThat(found).as(context).extracting(PeerAddress::podName)
                        .containsExactlyInAnyOrderElementsOf(expected.keySet());
                assertThat(found).as(context).allSatisfy(p -> {
                    Pod pod = expected.get(p.podName());
                    assertThat(p.nodeName()).isEqualTo(pod.node());
                    assertThat(InetAddress.ofLiteral(p.host())).isEqualTo(InetAddress.ofLiteral(pod.ip()));
                    assertThat(p.port()).isEqualTo(pod.httpPort() > 0 ? pod.httpPort() : 8080);
                });
                assertThat(kubernetes.statuses().getFirst().failing()).as(context).isFalse();
            }
        }
    }

    private static String randomIp(Random random, int unique) {
        if (random.nextBoolean()) {
            return "10." + (unique >> 8 & 0xff) + "." + (unique & 0xff) + "." + (1 + random.nextInt(254));
        }
        return "fd00:" + Integer.toHexString(random.nextInt(0x10000)) + "::" + Integer.toHexString(unique + 1);
    }

    /** Ways the API server can let us down; each must leave the last known peers in place. */
    enum Failure {
        UNAUTHORIZED(aResponse().withStatus(401).withHeader("Content-Type", "application/json")
                .withBody(PodFixtures.status(401, "Unauthorized", "Unauthorized")),
                "401 Unauthorized", "token"),
        FORBIDDEN(aResponse().withStatus(403).withHeader("Content-Type", "application/json")
                .withBody(PodFixtures.status(403, "Forbidden", "pods is forbidden: User \"system:serviceaccount:"
                        + "gpu-ops:default\" cannot list resource \"pods\"")),
                "403 Forbidden", "cannot list resource", "Role"),
        SERVER_ERROR(aResponse().withStatus(500).withBody("etcdserver: request timed out"),
                "HTTP 500", "etcdserver: request timed out"),
        GONE(aResponse().withStatus(410).withBody(PodFixtures.status(410, "Expired", "continue expired")),
                "410 Gone"),
        GARBAGE(okJson("{\"items\": [ {\"metadata\": "), "not a PodList", "not JSON"),
        HTML(aResponse().withStatus(200).withHeader("Content-Type", "text/html").withBody("<html>login</html>"),
                "not a PodList"),
        NOT_A_POD_LIST(okJson("{\"kind\":\"Status\",\"status\":\"Success\"}"), "not a PodList", "kind Status"),
        EMPTY_BODY(aResponse().withStatus(200), "not a PodList"),
        SLOW(okJson(PodFixtures.podList(List.of(), null)).withFixedDelay(2_000), "did not answer within 300 ms"),
        TRICKLING_BODY(okJson(PodFixtures.podList(List.of(Pod.runningReady("x", "n", "10.9.9.9")), null))
                .withChunkedDribbleDelay(20, 2_000), "did not answer within 300 ms"),
        CONNECTION_RESET(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER), "request failed");

        final ResponseDefinitionBuilder response;
        final String[] expectedError;

        Failure(ResponseDefinitionBuilder response, String... expectedError) {
            this.response = response;
            this.expectedError = expectedError;
        }
    }

    @ParameterizedTest
    @EnumSource(Failure.class)
    void failureKeepsLastKnownPeersAndRecordsTheError(Failure failure) {
        serve(List.of(Pod.runningReady("a", "node-a", "10.0.0.1"), Pod.runningReady("b", "node-b", "10.0.0.2")));
        try (KubernetesPeers kubernetes = new KubernetesPeers(settings(Duration.ofMillis(300), 500), clock)) {
            Set<PeerAddress> known = kubernetes.peers();
            assertThat(known).hasSize(2);
            Instant success = clock.instant();

            clock.advance(Duration.ofSeconds(30));
            api.stubFor(page(null, 500).willReturn(failure.response));
            long start = System.nanoTime();
            assertThat(kubernetes.peers()).isEqualTo(known);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1_500));

            DiscoveryStatus status = kubernetes.statuses().getFirst();
            assertThat(status.failing()).isTrue();
            assertThat(status.consecutiveFailures()).isEqualTo(1);
            assertThat(status.lastSuccess()).isEqualTo(success);
            assertThat(status.lastErrorAt()).isEqualTo(clock.instant());
            assertThat(status.peerCount()).isEqualTo(2);
            assertThat(status.lastError()).contains(failure.expectedError).doesNotContain("token-1");

            serve(List.of(Pod.runningReady("c", "node-c", "10.0.0.3")));
            assertThat(kubernetes.peers()).extracting(PeerAddress::podName).containsExactly("c");
            assertThat(kubernetes.statuses().getFirst().failing()).isFalse();
        }
    }

    @Test
    void failureOnALaterPageDoesNotPublishAPartialList() {
        api.stubFor(page(null, 1).willReturn(okJson(PodFixtures.podList(List.of(
                Pod.runningReady("a", "node-a", "10.0.0.1")), "more"))));
        api.stubFor(page("more", 1).willReturn(okJson(PodFixtures.podList(List.of(
                Pod.runningReady("b", "node-b", "10.0.0.2")), null))));
        try (KubernetesPeers kubernetes = new KubernetesPeers(settings(Duration.ofSeconds(5), 1), clock)) {
            assertThat(kubernetes.peers()).hasSize(2);
            api.stubFor(page(null, 1).willReturn(okJson(PodFixtures.podList(List.of(
                    Pod.runningReady("z", "node-z", "10.0.0.26")), "more"))));
            api.stubFor(page("more", 1).willReturn(aResponse().withStatus(500)));
            assertThat(kubernetes.peers()).extracting(PeerAddress::podName).containsExactly("a", "b");
            assertThat(kubernetes.statuses().getFirst().lastError()).contains("HTTP 500");
        }
    }

    @Test
    void repeatedContinueTokenStopsPaging() {
        api.stubFor(page(null, 500).willReturn(okJson(PodFixtures.podList(List.of(), "same"))));
        api.stubFor(page("same", 500).willReturn(okJson(PodFixtures.podList(List.of(), "same"))));
        try (KubernetesPeers kubernetes = peers()) {
            assertThat(kubernetes.peers()).isEmpty();
            assertThat(kubernetes.statuses().getFirst().lastError()).contains("same continue token twice");
        }
    }

    @Test
    void apiServerDownIsRecorded() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        KubernetesPeers.Settings down = settings(Duration.ofSeconds(2), 500)
                .withApiServer(URI.create("http://127.0.0.1:" + closedPort));
        try (KubernetesPeers kubernetes = new KubernetesPeers(down, clock)) {
            assertThat(kubernetes.peers()).isEmpty();
            assertThat(kubernetes.statuses().getFirst())
                    .returns(true, DiscoveryStatus::failing)
                    .returns(null, DiscoveryStatus::lastSuccess)
                    .satisfies(s -> assertThat(s.lastError()).contains("cannot connect", "NetworkPolicy"));
        }
    }

    @Test
    void readsTheTokenAgainOnEveryCallBecauseItRotates() throws IOException {
        serve(List.of(Pod.runningReady("a", "node-a", "10.0.0.1")));
        try (KubernetesPeers kubernetes = peers()) {
            kubernetes.peers();
            Files.writeString(dir.resolve("token"), "token-2");
            kubernetes.peers();
        }
        api.verify(1, getRequestedFor(urlPathEqualTo(PODS)).withHeader("Authorization", equalTo("Bearer token-1")));
        api.verify(1, getRequestedFor(urlPathEqualTo(PODS)).withHeader("Authorization", equalTo("Bearer token-2")));
    }

    @Test
    void sendsNoTokenWhenThereIsNoTokenFile() throws IOException {
        Files.delete(dir.resolve("token"));
        serve(List.of(Pod.runningReady("a", "node-a", "10.0.0.1")));
        try (KubernetesPeers kubernetes = peers()) {
            assertThat(kubernetes.peers()).hasSize(1);
        }
        api.verify(getRequestedFor(urlPathEqualTo(PODS)).withoutHeader("Authorization"));
    }

    @Test
    void emptyListWithoutItemsIsASuccess() {
        api.stubFor(page(null, 500).willReturn(okJson("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{}}")));
        try (KubernetesPeers kubernetes = peers()) {
            assertThat(kubernetes.peers()).isEmpty();
            assertThat(kubernetes.statuses().getFirst().failing()).isFalse();
        }
    }

    @Test
    void inClusterDefaultsReadTheNamespaceFile() throws IOException {
        Files.writeString(dir.resolve("namespace"), "gpu-ops\n");
        KubernetesPeers.Settings s = KubernetesPeers.Settings.inCluster(SELECTOR, null, dir);
        assertThat(s.apiServer()).isEqualTo(URI.create("https://kubernetes.default.svc"));
        assertThat(s.namespace()).isEqualTo("gpu-ops");
        assertThat(s.tokenFile()).isEqualTo(dir.resolve("token"));
        assertThat(s.caFile()).isEqualTo(dir.resolve("ca.crt"));
        assertThat(s.agentPort()).isEqualTo(8080);
        assertThat(s.portName()).isEqualTo("http");
        assertThat(s.timeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(KubernetesPeers.Settings.inCluster(SELECTOR, "other", dir).namespace()).isEqualTo("other");
    }

    @Test
    void settingsAreValidatedWithTheirPropertyNamed() {
        assertThatThrownBy(() -> KubernetesPeers.Settings.inCluster(SELECTOR, null, dir))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("imexprobe.peers.kubernetes.namespace is empty");
        assertThatThrownBy(() -> KubernetesPeers.Settings.inCluster(" ", "gpu-ops", dir))
                .hasMessageContaining("imexprobe.peers.kubernetes.selector is empty");
        assertThatThrownBy(() -> settings(Duration.ZERO, 500)).hasMessageContaining("timeout must be positive");
        assertThatThrownBy(() -> settings(Duration.ofSeconds(1), 0)).hasMessageContaining("page size");
        assertThatThrownBy(() -> settings(Duration.ofSeconds(1), 1).withAgentPort(70000))
                .hasMessageContaining("1..65535");
    }

    @Test
    void unusableCaFileFailsAtConstruction() throws IOException {
        Files.writeString(dir.resolve("ca.crt"), "not a certificate");
        assertThatThrownBy(this::peers)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Kubernetes CA file " + dir.resolve("ca.crt"))
                .hasMessageContaining("PEM bundle");
    }

    @Test
    void trustsTheMountedCaOverTls() throws Exception {
        Path keystore = dir.resolve("api.p12");
        keytool("-genkeypair", "-alias", "api", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=kubernetes", "-ext", "san=dns:localhost,ip:127.0.0.1", "-validity", "2",
                "-keystore", keystore.toString(), "-storetype", "PKCS12", "-storepass", "changeit",
                "-keypass", "changeit");
        keytool("-exportcert", "-rfc", "-alias", "api", "-keystore", keystore.toString(), "-storepass", "changeit",
                "-file", dir.resolve("ca.crt").toString());
        WireMockServer tls = new WireMockServer(options().httpDisabled(true).dynamicHttpsPort()
                .keystorePath(keystore.toString()).keystoreType("PKCS12").keystorePassword("changeit")
                .keyManagerPassword("changeit"));
        tls.start();
        try {
            tls.stubFor(page(null, 500).willReturn(okJson(PodFixtures.podList(List.of(
                    Pod.runningReady("a", "node-a", "10.0.0.1")), null))));
            KubernetesPeers.Settings withCa = settings(Duration.ofSeconds(5), 500)
                    .withApiServer(URI.create("https://localhost:" + tls.httpsPort()));
            try (KubernetesPeers kubernetes = new KubernetesPeers(withCa, clock)) {
                assertThat(kubernetes.peers()).extracting(PeerAddress::podName).containsExactly("a");
            }
            KubernetesPeers.Settings withoutCa = new KubernetesPeers.Settings(withCa.apiServer(), withCa.tokenFile(),
                    null, NAMESPACE, SELECTOR, 8080, null, Duration.ofSeconds(5), 500);
            try (KubernetesPeers kubernetes = new KubernetesPeers(withoutCa, clock)) {
                assertThat(kubernetes.peers()).isEmpty();
                assertThat(kubernetes.statuses().getFirst().lastError()).contains("TLS to the Kubernetes API failed");
            }
        } finally {
            tls.stop();
        }
    }

    private static void keytool(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
    }
}
