package dev.imexprobe.testing;

import dev.imexprobe.kubernetes.KubernetesApi;

import com.github.tomakehurst.wiremock.WireMockServer;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;

/**
 * A WireMock server on a free port standing in for the Kubernetes API server, as a JUnit 5 extension on a static
 * field ({@code @RegisterExtension static final FakeKubernetesApi api = FakeKubernetesApi.resetBeforeEachTest();}):
 * started before the class's {@code @BeforeAll} methods, stopped after its {@code @AfterAll} methods. It is the
 * {@link WireMockServer} itself, so a test stubs, verifies and reads the request journal on it as on any.
 */
public final class FakeKubernetesApi extends WireMockServer
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

    private final boolean resetBeforeEachTest;

    private FakeKubernetesApi(boolean resetBeforeEachTest) {
        super(options().dynamicPort());
        this.resetBeforeEachTest = resetBeforeEachTest;
    }

    /** Every test starts with no stubs, no scenarios and no requests, before the class's own {@code @BeforeEach}. */
    public static FakeKubernetesApi resetBeforeEachTest() {
        return new FakeKubernetesApi(true);
    }

    /** What the class stubs in {@code @BeforeAll}, and every request, stays for all its (ordered) tests. */
    public static FakeKubernetesApi keptAcrossTests() {
        return new FakeKubernetesApi(false);
    }

    /** The agent's client pointed at this server: no token file, no TLS. */
    public KubernetesApi client(Duration timeout, int retries, Duration backoff) {
        return new KubernetesApi(new KubernetesApi.Settings(URI.create(baseUrl()), Path.of("/nonexistent/token"),
                null, timeout, retries, backoff));
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        start();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (resetBeforeEachTest) {
            resetAll();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }
}
