package dev.imexprobe.node;

import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.DriverStatus;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.kubernetes.CliqueLabel;
import dev.imexprobe.kubernetes.ComputeDomainStatus;
import dev.imexprobe.probe.DriverExecutor;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kubernetes sources of the node report (ComputeDomains, the clique label) are asked on the refreshing thread,
 * not under the driver deadline: an API server slower than the deadline is not a hung driver call.
 */
class NodeServiceKubernetesTest {

    /** A driver whose library did not load: the report needs nothing else from it. */
    static final CudaDriver NO_DRIVER = (CudaDriver) Proxy.newProxyInstance(CudaDriver.class.getClassLoader(),
            new Class<?>[] {CudaDriver.class}, (proxy, method, args) -> {
                if (method.getName().equals("status")) {
                    return new DriverStatus(false, "/nonexistent/libcuda.so.1", "not loaded", false, null, null, null,
                            List.of());
                }
                throw new UnsupportedOperationException(method.getName());
            });

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aSlowApiServerIsNotADriverTimeout() {
        AtomicInteger asked = new AtomicInteger();
        NodeReporter reporter = new NodeReporter(NO_DRIVER, NodeInspectorSettings.defaults(),
                new AgentIdentity("a", "gb200-07", "test"))
                .cliqueLabel(() -> {
                    asked.incrementAndGet();
                    sleep(600);
                    return new CliqueLabel(CliqueLabel.OK, "6a1c7b2e-5d0f-4c3b-9a8e-00000000c0de.7", null,
                            Instant.now());
                })
                .computeDomains(() -> {
                    sleep(600);
                    return new ComputeDomainStatus(ComputeDomainStatus.ABSENT, "404", List.of(), Instant.now());
                });
        try (DriverExecutor executor = new DriverExecutor(1, Duration.ofMillis(300))) {
            NodeReport r = new NodeService(reporter, executor).refresh();

            assertThat(r.findings()).noneMatch(f -> f.is(FindingCode.TIMEOUT));
            assertThat(r.cliqueLabel().state()).isEqualTo("ok");
            assertThat(r.computeDomains().state()).isEqualTo("absent");
            assertThat(executor.stuck()).isZero();
            assertThat(asked.get()).as("asked once, before the report").isEqualTo(1);
        }
    }
}
