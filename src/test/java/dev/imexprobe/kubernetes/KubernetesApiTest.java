package dev.imexprobe.kubernetes;

import dev.imexprobe.testing.FakeKubernetesApi;

import com.github.tomakehurst.wiremock.http.Fault;
import com.github.tomakehurst.wiremock.stubbing.Scenario;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The one API client: retries and backoff, what is not retried, the timeout, the token. */
class KubernetesApiTest {

    @RegisterExtension
    static final FakeKubernetesApi api = FakeKubernetesApi.resetBeforeEachTest();
    @TempDir
    Path dir;

    KubernetesApi client(int retries, Duration timeout) {
        return new KubernetesApi(new KubernetesApi.Settings(URI.create(api.baseUrl() + "/"), dir.resolve("token"),
                null, timeout, retries, Duration.ofMillis(100)));
    }

    void failThenAnswer(int failures, com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder failure) {
        String state = Scenario.STARTED;
        for (int i = 0; i < failures; i++) {
            String next = "failed-" + i;
            api.stubFor(get(urlPathEqualTo("/x")).inScenario("s").whenScenarioStateIs(state).willReturn(failure)
                    .willSetStateTo(next));
            state = next;
        }
        api.stubFor(get(urlPathEqualTo("/x")).inScenario("s").whenScenarioStateIs(state).willReturn(okJson("{}")));
    }

    @Test
    void a5xxOr429IsRetriedWithDoublingBackoffAndTheAnswerReturned() throws Exception {
        failThenAnswer(2, aResponse().withStatus(503));
        try (KubernetesApi c = client(2, Duration.ofSeconds(2))) {
            long t0 = System.nanoTime();
            KubernetesApi.Response r = c.get("/x", "testing");
            double took = (System.nanoTime() - t0) / 1e9;
            assertThat(r.status()).isEqualTo(200);
            assertThat(took).as("100 ms then 200 ms of backoff").isBetween(0.29, 2.0);
        }
        api.verify(3, getRequestedFor(urlPathEqualTo("/x")));

        api.resetAll();
        failThenAnswer(1, aResponse().withStatus(429));
        try (KubernetesApi c = client(1, Duration.ofSeconds(2))) {
            assertThat(c.get("/x", "testing").status()).isEqualTo(200);
        }
    }

    @Test
    void retriesRunOutAndTheLastAnswerIsReturned() throws Exception {
        failThenAnswer(5, aResponse().withStatus(500).withBody("{\"kind\":\"Status\",\"message\":\"etcd down\"}"));
        try (KubernetesApi c = client(1, Duration.ofSeconds(10))) {
            KubernetesApi.Response r = c.get("/x", "testing");
            assertThat(r.status()).isEqualTo(500);
            assertThat(r.apiMessage()).isEqualTo(" (etcd down)");
        }
        // Two of ours; on a loaded machine the JDK client may itself resend a GET once over a broken connection.
        assertThat(api.findAll(getRequestedFor(urlPathEqualTo("/x")))).hasSizeBetween(2, 3);
    }

    @Test
    void refusalsAreNotRetried() throws Exception {
        for (int status : new int[]{401, 403, 404, 409, 422}) {
            api.resetAll();
            api.stubFor(get(urlPathEqualTo("/x")).willReturn(aResponse().withStatus(status)));
            try (KubernetesApi c = client(3, Duration.ofSeconds(10))) {
                assertThat(c.get("/x", "testing").status()).isEqualTo(status);
            }
            api.verify(1, getRequestedFor(urlPathEqualTo("/x")));
        }
    }

    @Test
    void noAnswerIsRetriedThenThrownNamingTheCauseAndTheNextStep() {
        api.stubFor(get(urlPathEqualTo("/x")).willReturn(okJson("{}").withFixedDelay(1500)));
        try (KubernetesApi c = client(1, Duration.ofMillis(300))) {
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> c.get("/x", "reading node a")).isInstanceOf(KubernetesApiException.class)
                    .hasMessageContaining("did not answer within 300 ms while reading node a")
                    .hasMessageContaining("check the API server's health");
            assertThat((System.nanoTime() - t0) / 1e9).as("two attempts of 300 ms and 100 ms between").isLessThan(1.4);
        }
        api.verify(2, getRequestedFor(urlPathEqualTo("/x")));

        api.resetAll();
        api.stubFor(get(urlPathEqualTo("/x")).willReturn(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
        try (KubernetesApi c = client(0, Duration.ofSeconds(1))) {
            assertThatThrownBy(() -> c.get("/x", "testing")).isInstanceOf(KubernetesApiException.class)
                    .hasMessageContaining("while testing");
        }
    }

    @Test
    void theTokenIsReadOnEveryCallAndNoneSentWithoutTheFile() throws IOException, KubernetesApiException {
        api.stubFor(get(urlPathEqualTo("/x")).willReturn(okJson("{}")));
        try (KubernetesApi c = client(0, Duration.ofSeconds(10))) {
            c.get("/x", "testing");
            api.verify(getRequestedFor(urlPathEqualTo("/x")).withHeader("Authorization", absent()));
            Files.writeString(dir.resolve("token"), "first\n", StandardCharsets.UTF_8);
            c.get("/x", "testing");
            api.verify(getRequestedFor(urlPathEqualTo("/x")).withHeader("Authorization", equalTo("Bearer first")));
            Files.writeString(dir.resolve("token"), "rotated", StandardCharsets.UTF_8);
            c.get("/x", "testing");
            api.verify(getRequestedFor(urlPathEqualTo("/x")).withHeader("Authorization", equalTo("Bearer rotated")));
        }
    }

    @Test
    void settingsRefuseWhatCannotWork() {
        assertThatThrownBy(() -> KubernetesApi.Settings.inCluster().withApiServer(URI.create("ftp://api")))
                .hasMessageContaining("imexprobe.kubernetes.api");
        assertThatThrownBy(() -> KubernetesApi.Settings.inCluster().withTimeout(Duration.ZERO))
                .hasMessageContaining("timeout must be positive");
        assertThatThrownBy(() -> KubernetesApi.Settings.inCluster().withRetries(11, Duration.ZERO))
                .hasMessageContaining("retries must be 0..10");
        assertThat(KubernetesApi.Settings.inCluster().withApiServer(URI.create("http://localhost:8001")).apiServer())
                .hasToString("http://localhost:8001");
    }
}
