package dev.imexprobe.metrics;

import dev.imexprobe.cuda.FabricInfo;
import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.node.ImexDaemonState;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.testing.MutableClock;
import dev.imexprobe.testing.NodeReports;
import dev.imexprobe.testing.ProbeResults;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A scrape that runs while the mesh refreshes the gauges (after every result and every round) must succeed. Found
 * by LivePrometheusIT: re-registering MultiGauge rows (remove + add of the same id, micrometer#6851) let a
 * concurrent scrape see one gauge twice, and /actuator/prometheus answered 500 DuplicateLabelsException — one
 * failed scrape is up == 0, the start of ImexprobeAgentDown. Rows are now registered once and read a live value.
 */
class ScrapeDuringRefreshTest {

    @Test
    void scrapesNeverFailWhileGaugesAreRefreshed() throws Exception {
        MutableClock clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
        MeshState mesh = new MeshState(clock);
        // One GPU and one pair, as each agent of the live test has: a gauge of a single row is where it showed.
        AtomicReference<NodeReport> node = new AtomicReference<>(NodeReports.report(List.of(NodeReports.gpu(0,
                NodeReports.GPU0, new FabricInfo(3, FabricInfo.STATE_COMPLETED, 0, 7, NodeReports.CLUSTER, 0, 1))), 1,
                ImexDaemonState.READY));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ImexprobeMetrics metrics = new ImexprobeMetrics(node::get, mesh, () -> 3, () -> 0, false, "1.2.3");
        metrics.bindTo(registry);
        mesh.record(ProbeResults.pass("node-a", "GPU-a0", "node-b", "GPU-node-b"));
        metrics.refreshGauges();

        AtomicBoolean stop = new AtomicBoolean();
        List<Throwable> errors = new ArrayList<>();
        Thread refresher = Thread.ofPlatform().start(() -> {
            int i = 0;
            while (!stop.get()) {
                // Values change and the pair set stays: what a mesh round does to the gauges.
                mesh.record(i++ % 2 == 0 ? ProbeResults.pass("node-a", "GPU-a0", "node-b", "GPU-node-b")
                        : ProbeResults.unreachable("node-a", "GPU-a0", "x:1", "node-b", "GPU-node-b"));
                metrics.refreshGauges();
            }
        });
        long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        int scrapes = 0;
        try {
            while (System.nanoTime() < end) {
                try {
                    String text = registry.scrape();
                    assertThat(text).contains("imexprobe_fabric_healthy{");
                    scrapes++;
                } catch (RuntimeException e) {
                    errors.add(e);
                    break;
                }
            }
        } finally {
            stop.set(true);
            refresher.join(10_000);
        }
        assertThat(errors).as("scrapes during refreshes (after %d good ones)", scrapes).isEmpty();
        assertThat(scrapes).isPositive();

        String text = registry.scrape();
        assertThat(text.lines().filter(l -> l.startsWith("imexprobe_pair_up{"))).hasSize(1);
        assertThat(text.lines().filter(l -> l.startsWith("imexprobe_fabric_healthy{"))).hasSize(1);
    }
}
