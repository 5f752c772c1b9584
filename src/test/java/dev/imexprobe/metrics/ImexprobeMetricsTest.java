package dev.imexprobe.metrics;

import dev.imexprobe.cuda.GpuDevice;
import dev.imexprobe.mesh.MeshState;
import dev.imexprobe.mesh.ProbeRecorder;
import dev.imexprobe.node.AgentIdentity;
import dev.imexprobe.node.ImexDaemon;
import dev.imexprobe.node.ImexDaemonState;
import dev.imexprobe.node.NodeReport;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.Verdict;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/** The pair and fabric gauges under results arriving while Prometheus scrapes, as in a running agent. */
class ImexprobeMetricsTest {

    private static final String GPU = "GPU-12f83d77-0ce5-7e59-0969-5d1462e22d73";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final MeshState mesh = new MeshState(Clock.systemUTC());
    private final ProbeRecorder recorder = new ProbeRecorder(mesh);

    private static NodeReport node() {
        GpuDevice gpu = new GpuDevice(0, GPU, "NVIDIA H200", "0000:18:00.0", Map.of(), 2L << 20, null, null);
        return new NodeReport(new AgentIdentity("0123456789abcdef", "node-a", "test"), true,
                new NodeReport.DriverView(true, "libcuda.so.1", null, true, "libnvidia-ml.so.1", null, "580.159.04",
                        13000, "13.0", "CUDA_SUCCESS"),
                List.of(gpu), 1, null, new ImexDaemon(ImexDaemonState.NOT_INSTALLED, "no daemon", null, false, null,
                        null, null, null, null, null), null, null, null, List.of(), Instant.now());
    }

    private static PairResult result(int peer, boolean pass) {
        List<StageResult> stages = new ArrayList<>();
        for (Stage s : Stage.values()) {
            boolean failsHere = !pass && s == Stage.IMPORT;
            stages.add(new StageResult(s, failsHere ? StageStatus.FAILED : StageStatus.OK, s == Stage.TRANSFER ? null
                    : failsHere ? 101 : 0, s == Stage.TRANSFER ? null : failsHere ? "CUDA_ERROR_INVALID_DEVICE"
                    : "CUDA_SUCCESS", 0.001, "test"));
        }
        return new PairResult(Direction.PUSH, "node-a", GPU, "node-" + peer, "GPU-peer-" + peer, Verdict.of(pass), 0.01,
                null, stages, null);
    }

    private ImexprobeMetrics bind(boolean pairs) {
        ImexprobeMetrics metrics = new ImexprobeMetrics(ImexprobeMetricsTest::node, mesh, () -> 8, pairs, "test");
        metrics.bindTo(registry);
        recorder.addListener(metrics);
        return metrics;
    }

    @Test
    void aScrapeWhileResultsArriveNeverFails() throws Exception {
        bind(true);
        AtomicBoolean stop = new AtomicBoolean();
        Thread mesh = Thread.ofPlatform().start(() -> {
            for (int i = 0; !stop.get(); i++) {
                recorder.record(result(i % 8, i % 3 != 0));
            }
        });
        try {
            for (int i = 0; i < 200; i++) {
                assertThat(registry.scrape()).contains("imexprobe_fabric_state{gpu=\"" + GPU + "\"}");
            }
        } finally {
            stop.set(true);
            mesh.join();
        }
    }

    @Test
    void pairGaugesFollowTheLastResultOfEachPair() {
        bind(false);
        recorder.record(result(1, true));
        recorder.record(result(2, false));
        String up1 = "imexprobe_pair_up{source_gpu=\"" + GPU + "\",source_node=\"node-a\",target_gpu=\"GPU-peer-1\","
                + "target_node=\"node-1\"}";
        String code2 = "imexprobe_pair_last_cu_result{source_gpu=\"" + GPU + "\",source_node=\"node-a\","
                + "target_gpu=\"GPU-peer-2\",target_node=\"node-2\"}";
        assertThat(registry.scrape()).contains(up1 + " 1.0").contains(code2 + " 101.0");
        recorder.record(result(1, false));
        recorder.record(result(2, true));
        assertThat(registry.scrape()).contains(up1 + " 0.0").contains(code2 + " 0.0");
        assertThat(registry.scrape().lines().filter(l -> l.startsWith("imexprobe_pair_up{"))).hasSize(2);
    }
}
