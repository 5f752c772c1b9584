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

    /**
     * A scrape sees each pair's up and last CUresult from one refresh. Found by LivePrometheusIT: a scrape read
     * pair_up 0 from a refresh in progress and the code 0 from before it, and ImexprobePairImportFailing went pending
     * with cu_result none for an import that failed with 800. Without {@link ImexprobeMetrics#consistent} this test
     * sees such torn pairs within a second on this VM.
     */
    @Test
    void aScrapeSeesEachPairsUpAndCodeFromOneRefresh() throws Exception {
        MeshState mesh = new MeshState(new MutableClock(Instant.parse("2026-12-01T10:00:00Z")));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ImexprobeMetrics metrics = new ImexprobeMetrics(() -> NodeReports.twoGpus(1, ImexDaemonState.READY), mesh,
                () -> 3, () -> 0, false, "1.2.3");
        metrics.bindTo(registry);
        // Several pairs, so that a refresh takes long enough to be caught half done.
        List<String> targets = java.util.stream.IntStream.range(0, 16).mapToObj(i -> "GPU-t" + i).toList();
        AtomicBoolean stop = new AtomicBoolean();
        Thread refresher = Thread.ofPlatform().start(() -> {
            for (int i = 0; !stop.get(); i++) {
                // Every pair passes, then every pair fails its import with a driver code, and so on.
                boolean pass = i % 2 == 0;
                for (String t : targets) {
                    mesh.record(pass ? ProbeResults.pass("node-a", "GPU-a0", "node-b", t)
                            : ProbeResults.failAt(dev.imexprobe.probe.Stage.IMPORT,
                            dev.imexprobe.cuda.CuResult.NOT_PERMITTED, "node-a", "GPU-a0", "node-b", t));
                }
                metrics.refreshGauges();
            }
        });
        List<String> torn = new ArrayList<>();
        int scrapes = 0;
        int failedSeen = 0;
        int passedSeen = 0;
        long start = System.nanoTime();
        try {
            // At least 2 s, and until both states were seen (a loaded machine may let few scrapes in), 30 s at most.
            while (torn.isEmpty() && System.nanoTime() - start < Duration.ofSeconds(30).toNanos()
                    && (System.nanoTime() - start < Duration.ofSeconds(2).toNanos() || failedSeen == 0 || passedSeen == 0
                    || scrapes < 20)) {
                java.util.Map<String, Double> up = new java.util.HashMap<>();
                java.util.Map<String, Double> code = new java.util.HashMap<>();
                for (String line : metrics.consistent(registry::scrape).lines().toList()) {
                    java.util.Map<String, Double> into = line.startsWith("imexprobe_pair_up{") ? up
                            : line.startsWith("imexprobe_pair_last_cu_result{") ? code : null;
                    if (into != null) {
                        into.put(line.substring(line.indexOf('{'), line.indexOf('}') + 1),
                                Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
                    }
                }
                scrapes++;
                for (var e : up.entrySet()) {
                    Double c = code.get(e.getKey());
                    if (e.getValue() == 0.0) {
                        failedSeen++;
                        if (c == null || c != 800.0) {
                            torn.add("up 0, code " + c + " " + e.getKey());
                        }
                    } else {
                        passedSeen++;
                        if (c == null || c != 0.0) {
                            torn.add("up 1, code " + c + " " + e.getKey());
                        }
                    }
                }
            }
        } finally {
            stop.set(true);
            refresher.join(10_000);
        }
        assertThat(torn).as("pairs torn between two refreshes in %d scrapes", scrapes).isEmpty();
        assertThat(failedSeen).as("failed pairs seen").isPositive();
        assertThat(passedSeen).as("passing pairs seen").isPositive();
    }
}
