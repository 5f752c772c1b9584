package dev.imexprobe.peer;

import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.GpuSelector;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.StageStitch;
import dev.imexprobe.probe.Verdict;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** How an exchange between GPUs of two IMEX domains is judged, from where its first failure came. */
class ExchangeTest {

    static final GpuSelector.Gpu A = new GpuSelector.Gpu(0, "GPU-a", "fabric:6a1c7b2e-0000-4000-8000-0000000000c1/1", null);
    static final GpuSelector.Gpu B = new GpuSelector.Gpu(0, "GPU-b", "fabric:6a1c7b2e-0000-4000-8000-0000000000c1/2", null);

    static PairResult failingAt(Stage failing, int code, String name, String detail) {
        StageStitch stitch = new StageStitch();
        for (Stage s : Stage.values()) {
            if (s.ordinal() < failing.ordinal()) {
                stitch.add(new StageResult(s, StageStatus.OK, null, null, 0.001, "ok"));
            } else if (s == failing) {
                stitch.add(new StageResult(s, StageStatus.FAILED, code, name, 0.001, detail));
            }
        }
        return Exchange.finish(Direction.PUSH, "node-a", A, "node-b", B, stitch, null, null, System.nanoTime(),
                new Exchange.Debug(false));
    }

    /** Every stage, in a random order: only a failure where the importer acts on the export is "apart by design". */
    @Test
    void onlyAFailureOnTheExportNamesTheDomainsApart() {
        List<Stage> stages = new ArrayList<>(List.of(Stage.values()));
        stages.remove(Stage.RELEASE); // a release failure fails no exchange
        Collections.shuffle(stages, ThreadLocalRandom.current());
        for (Stage s : stages) {
            Finding f = failingAt(s, 999, "CUDA_ERROR_UNKNOWN", "cuX returned CUDA_ERROR_UNKNOWN").finding();
            boolean apart = s == Stage.IMPORT || s == Stage.MAP || s == Stage.ACCESS || s == Stage.VERIFY
                    || s == Stage.WRITEBACK;
            if (apart) {
                assertThat(f.code()).as(s.label()).isEqualTo("DIFFERENT_IMEX_DOMAIN");
                assertThat(f.evidence()).containsEntry("stage", s.label()).containsEntry("driverResult", "CUDA_ERROR_UNKNOWN");
            } else {
                assertThat(f.code()).as(s.label()).isNotEqualTo("DIFFERENT_IMEX_DOMAIN");
                assertThat(f.evidence()).as(s.label()).containsEntry("stage", s.label());
            }
        }
    }

    /** A full exporter GPU in a pair across domains is the full GPU, not probed, as in any pair. */
    @Test
    void aFullGpuAcrossDomainsIsTheFullGpu() {
        PairResult r = failingAt(Stage.CREATE, 2, "CUDA_ERROR_OUT_OF_MEMORY",
                "cuMemCreate returned CUDA_ERROR_OUT_OF_MEMORY; the GPU is full: NVML reports 3 MiB free");

        assertThat(r.finding().code()).isEqualTo("GPU_OUT_OF_MEMORY");
        assertThat(r.verdict()).isEqualTo(Verdict.NOT_PROBED);
        assertThat(r.finding().evidence()).containsEntry("sourceNode", "node-a").containsEntry("targetNode", "node-b");
    }

    /**
     * Two agents sharing one GPU: its UUID names both sides, so the side that refused is the one the exchange names
     * (drawn), never the source by default; a finding that is not a GPU's own refusal keeps its blame.
     */
    @Test
    void aRefusalBlamesTheSideThatRefusedEvenOnOneSharedGpu() {
        GpuSelector.Gpu shared = new GpuSelector.Gpu(0, "GPU-s", A.domain(), "COMPUTE_MODE_EXCLUSIVE_PROCESS");
        Finding refusal = FindingCode.COMPUTE_MODE_EXCLUSIVE_PROCESS.finding(
                Map.of("gpu", 0, "uuid", "GPU-s"));
        assertThat(refusal.blame()).isEqualTo(Blame.LOCAL);
        Blame side = ThreadLocalRandom.current().nextBoolean()
                ? Blame.SOURCE : Blame.TARGET;
        PairResult r = Exchange.notProbed(Direction.PULL, "node-a", shared, "node-b", shared, List.of(),
                refusal, side, System.nanoTime());

        assertThat(r.verdict()).isEqualTo(Verdict.NOT_PROBED);
        assertThat(r.finding().blame()).as(side.name()).isEqualTo(side);
        Finding other = FindingCode.GPU_OUT_OF_MEMORY.finding(Map.of());
        assertThat(Exchange.notProbed(Direction.PUSH, "node-a", shared, "node-b", shared, List.of(), other,
                Blame.TARGET, System.nanoTime()).finding().blame()).isEqualTo(other.blame());
    }
}
