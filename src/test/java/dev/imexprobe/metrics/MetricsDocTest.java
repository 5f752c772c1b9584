package dev.imexprobe.metrics;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.node.ImexDaemonState;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.testing.MeshAgents;
import dev.imexprobe.testing.MutableClock;
import dev.imexprobe.testing.NodeReports;
import dev.imexprobe.testing.ProbeResults;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** docs/metrics.md against what the binder really renders: names, types and labels, both ways. */
class MetricsDocTest {

    private static final Pattern ROW = Pattern.compile("^\\| `(imexprobe_[a-z_]+)` \\| (\\w+) \\| ([^|]*) \\|.*\\|$");
    private static final Pattern TYPE = Pattern.compile("^# TYPE (imexprobe_[a-z_]+) (\\w+)$");
    private static final Pattern BACKTICKED = Pattern.compile("`([A-Za-z_]+)`"); // UUID: dcgm-exporter's label

    /** name → {type, labels} as documented. */
    static Map<String, Family> documented = new TreeMap<>();
    /** name → {type, labels} as scraped. */
    static Map<String, Family> rendered = new TreeMap<>();

    record Family(String type, Set<String> labels) {
    }

    @BeforeAll
    static void readBoth() throws IOException {
        for (String line : Files.readAllLines(Path.of("docs", "metrics.md"))) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                Set<String> labels = new TreeSet<>();
                Matcher l = BACKTICKED.matcher(m.group(3));
                while (l.find()) {
                    labels.add(l.group(1));
                }
                assertThat(documented.put(m.group(1), new Family(m.group(2), labels)))
                        .as("%s is listed once", m.group(1)).isNull();
            }
        }

        // A scrape with every kind of result behind it: a pass, a driver failure, an unreachable peer.
        MeshState mesh = new MeshState(new MutableClock(Instant.parse("2026-12-01T10:00:00Z")));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ImexprobeMetrics metrics = new ImexprobeMetrics(() -> NodeReports.twoGpus(1, ImexDaemonState.READY), mesh,
                () -> 3, () -> 0, false, "1.2.3").contexts(new dev.imexprobe.cuda.PrimaryContexts(g -> true,
                java.time.Duration.ZERO));
        metrics.bindTo(registry);
        for (PairResult r : List.of(ProbeResults.pass("a", "GPU-a", "b", "GPU-b"),
                ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "a", "GPU-a", "c", "GPU-c"),
                ProbeResults.unreachable("a", "GPU-a", "10.0.0.4:8080", "d", "GPU-d"))) {
            mesh.record(r);
            metrics.onResult(r);
        }
        mesh.cycleFinished();
        String scrape = registry.scrape();
        for (String line : scrape.split("\n")) {
            Matcher m = TYPE.matcher(line);
            if (m.matches()) {
                rendered.put(m.group(1), new Family(m.group(2), new TreeSet<>()));
            }
        }
        for (MeshAgents.Sample s : MeshAgents.samples(scrape)) {
            String family = familyOf(s.name());
            if (family != null) {
                rendered.get(family).labels().addAll(s.labels().keySet());
                rendered.get(family).labels().remove("le");
            }
        }
    }

    private static String familyOf(String sample) {
        if (rendered.containsKey(sample)) {
            return sample;
        }
        for (String suffix : List.of("_bucket", "_count", "_sum")) {
            if (sample.endsWith(suffix) && rendered.containsKey(sample.substring(0, sample.length() - suffix.length()))) {
                return sample.substring(0, sample.length() - suffix.length());
            }
        }
        return null;
    }

    @Test
    void theScrapeWasRead() {
        assertThat(rendered).containsKeys("imexprobe_pair_up", "imexprobe_stage_duration_seconds", "imexprobe_probes_total");
        assertThat(documented).hasSizeGreaterThan(10);
    }

    @Test
    void everyRenderedMetricIsDocumentedAndNothingElse() {
        assertThat(documented.keySet()).containsExactlyInAnyOrderElementsOf(rendered.keySet());
    }

    @Test
    void typesAndLabelsAreAsDocumented() {
        for (Map.Entry<String, Family> e : rendered.entrySet()) {
            Family doc = documented.get(e.getKey());
            assertThat(doc).as(e.getKey()).isNotNull();
            assertThat(doc.type()).as("type of %s", e.getKey()).isEqualTo(e.getValue().type());
            assertThat(doc.labels()).as("labels of %s", e.getKey()).isEqualTo(e.getValue().labels());
        }
    }
}
