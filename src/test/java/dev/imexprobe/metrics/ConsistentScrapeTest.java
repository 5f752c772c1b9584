package dev.imexprobe.metrics;

import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.node.ImexDaemonState;
import dev.imexprobe.testing.MutableClock;
import dev.imexprobe.testing.NodeReports;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvoker;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

class ConsistentScrapeTest {

    private final ImexprobeMetrics metrics = new ImexprobeMetrics(() -> NodeReports.twoGpus(1, ImexDaemonState.READY),
            new MeshState(new MutableClock(Instant.parse("2026-12-01T10:00:00Z"))), () -> 3, () -> 0, false, "1.2.3");

    ConsistentScrapeTest() {
        metrics.bindTo(new SimpleMeterRegistry());
    }

    @Test
    void theScrapeRunsWhileNoRefreshCanStart() throws Exception {
        AtomicBoolean refreshedDuringScrape = new AtomicBoolean(true);
        OperationInvoker scrape = context -> {
            Thread refresh = Thread.ofPlatform().start(metrics::refreshGauges);
            try {
                refresh.join(300);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            refreshedDuringScrape.set(!refresh.isAlive());
            return "scraped";
        };
        Object answer = new ConsistentScrape(metrics).apply(EndpointId.of("prometheus"), OperationType.READ, null,
                scrape).invoke(null);
        assertThat(answer).isEqualTo("scraped");
        assertThat(refreshedDuringScrape).as("a refresh finished while the scrape collected").isFalse();
    }

    @Test
    void otherEndpointsAreLeftAsTheyAre() {
        OperationInvoker health = context -> "UP";
        assertThat(new ConsistentScrape(metrics).apply(EndpointId.of("health"), OperationType.READ, null, health))
                .isSameAs(health);
    }
}
