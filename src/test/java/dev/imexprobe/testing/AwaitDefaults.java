package dev.imexprobe.testing;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.time.Duration;

/**
 * Awaitility's default for every test class (autodetected: META-INF/services and junit-platform.properties): the
 * first check at once. Awaitility's own default waits one poll interval (100 ms, or the test's) before it, so an
 * {@code await()} whose condition already holds cost 100–250 ms each; AgentApiIT alone ran ~200 of them. Poll
 * intervals and {@code atMost} bounds are unchanged.
 */
public final class AwaitDefaults implements BeforeAllCallback {

    @Override
    public void beforeAll(ExtensionContext context) {
        Awaitility.setDefaultPollDelay(Duration.ZERO);
    }
}
