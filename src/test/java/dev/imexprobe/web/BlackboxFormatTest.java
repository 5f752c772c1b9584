package dev.imexprobe.web;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeReport;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.Verdict;
import dev.imexprobe.testing.ProbeResults;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** /probe?format=prometheus: blackbox_exporter's names, written by the Prometheus client library. */
class BlackboxFormatTest {

    @Test
    void aPassingProbeIsOneSeriesPerStageAndACuResultPerDriverStage() {
        PairResult pass = ProbeResults.pass("node-a", "GPU-a", "node-b", "GPU-b");
        String text = ProbeController.BlackboxFormat.render(
                new ProbeReport("b:8080", "node-b", Verdict.PASS, 0.25, List.of(pass)));

        assertThat(text).contains("# TYPE probe_success gauge\nprobe_success 1.0\n")
                .contains("# TYPE probe_duration_seconds gauge\nprobe_duration_seconds 0.25\n")
                .contains("probe_stage_duration_seconds{direction=\"push\",source_gpu=\"GPU-a\",stage=\"map\","
                        + "target_gpu=\"GPU-b\"} 0.002\n")
                .contains("probe_stage_cu_result{direction=\"push\",source_gpu=\"GPU-a\",stage=\"import\","
                        + "target_gpu=\"GPU-b\"} 0.0\n");
        assertThat(text.lines().filter(l -> l.startsWith("probe_stage_duration_seconds{"))).hasSize(Stage.values().length);
        // transfer never calls the driver, so it has no CUresult series
        assertThat(text.lines().filter(l -> l.startsWith("probe_stage_cu_result{")))
                .hasSize(Stage.values().length - 1).noneMatch(l -> l.contains("stage=\"transfer\""));
    }

    @Test
    void aFailureSaysZeroAndItsCuResult() {
        PairResult failed = ProbeResults.failAt(Stage.IMPORT, CuResult.NOT_PERMITTED, "node-a", "GPU-a", "node-b",
                "GPU-b");
        String text = ProbeController.BlackboxFormat.render(
                new ProbeReport("b:8080", "node-b", Verdict.FAIL, 0.5, List.of(failed)));
        assertThat(text).contains("\nprobe_success 0.0\n").contains("stage=\"import\",target_gpu=\"GPU-b\"} "
                + (double) CuResult.NOT_PERMITTED.code() + "\n");
    }

    @Test
    void labelValuesAreEscapedAndAMissingGpuIsEmpty() {
        PairResult odd = ProbeResults.pass("node-a", "GPU-\"a\"\\\n", "node-b", "GPU-b");
        PairResult unreachable = ProbeResults.unreachable("node-a", "GPU-a", "10.0.0.9:8080", "10.0.0.9:8080", null);
        String text = ProbeController.BlackboxFormat.render(
                new ProbeReport("b:8080", "node-b", Verdict.FAIL, 0.5, List.of(odd, unreachable)));
        assertThat(text).contains("source_gpu=\"GPU-\\\"a\\\"\\\\\\n\"")
                .contains("probe_stage_duration_seconds{direction=\"push\",source_gpu=\"GPU-a\",stage=\"transfer\","
                        + "target_gpu=\"\"} 0.001\n");
    }

    @Test
    void aRepeatedSeriesKeepsItsFirstSampleInsteadOfFailingTheAnswer() {
        PairResult first = ProbeResults.pass("node-a", "GPU-a", "node-b", "GPU-b");
        PairResult again = ProbeResults.failAt(Stage.MAP, CuResult.NOT_PERMITTED, "node-a", "GPU-a", "node-b", "GPU-b");
        String text = ProbeController.BlackboxFormat.render(
                new ProbeReport("b:8080", "node-b", Verdict.FAIL, 0.5, List.of(first, again)));
        assertThat(text.lines().filter(l -> l.startsWith("probe_stage_cu_result{") && l.contains("stage=\"map\"")))
                .containsExactly("probe_stage_cu_result{direction=\"push\",source_gpu=\"GPU-a\",stage=\"map\","
                        + "target_gpu=\"GPU-b\"} 0.0");
    }
}
