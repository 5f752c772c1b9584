package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.testing.ProbeResults;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The finding of one exchange, and above all whom it blames: the exporter (source) or the importer (target). */
class ProbeDiagnosisTest {

    private static Finding failAt(Stage stage, int code, boolean sameNode) {
        return ProbeResults.failAt(stage, CuResult.of(code), "node-a", "GPU-a", sameNode ? "node-a" : "node-b", "GPU-b")
                .finding();
    }

    @Test
    void aPassingExchangeHasNoFinding() {
        assertThat(ProbeResults.pass("node-a", "GPU-a", "node-b", "GPU-b").finding()).isNull();
    }

    @Test
    void createWithoutAChannelBlamesTheSource() {
        Finding f = failAt(Stage.CREATE, 800, false);

        assertThat(f.code()).isEqualTo("CREATE_NOT_PERMITTED");
        assertThat(f.blame()).isEqualTo(Blame.SOURCE);
        assertThat(f.evidence()).containsEntry("stage", "create").containsEntry("driverResult", "CUDA_ERROR_NOT_PERMITTED")
                .containsEntry("driverResultCode", 800);
    }

    @Test
    void anyOtherDriverErrorOnTheExporterBlamesTheSource() {
        Finding create = failAt(Stage.CREATE, 1, false);
        Finding export = failAt(Stage.EXPORT, 1, false);

        assertThat(create.code()).isEqualTo("DRIVER_ERROR");
        assertThat(create.blame()).as("cuMemCreate runs on the exporter").isEqualTo(Blame.SOURCE);
        assertThat(create.cause()).isEqualTo("create failed with CUDA_ERROR_INVALID_VALUE.");
        assertThat(ProbeDiagnosis.verdict(false, create)).isEqualTo(Verdict.FAIL);
        assertThat(export.code()).isEqualTo("DRIVER_ERROR");
        assertThat(export.blame()).as("cuMemExportToShareableHandle runs on the exporter").isEqualTo(Blame.SOURCE);
    }

    /**
     * A GPU a job has filled (an H100: cuMemCreate 2 with the context retained) is not probed, never failed; a 2 where
     * NVML finds memory free, or cannot tell, is the driver's and fails.
     */
    @Test
    void outOfMemoryAtCreateIsAFullGpuOnlyWhereNvmlFindsItFull() {
        String call = "cuMemCreate(FABRIC, 2 MiB) on GPU 0 returned CUDA_ERROR_OUT_OF_MEMORY";
        for (boolean sameNode : new boolean[] {false, true}) {
            Finding full = createFailed(call + CreateStage.GPU_FULL + "8 MiB free", sameNode);
            assertThat(full.code()).isEqualTo("GPU_OUT_OF_MEMORY");
            assertThat(full.severity().name()).isEqualTo("INFO");
            assertThat(full.blame()).as("the exporter's GPU is the full one").isEqualTo(Blame.SOURCE);
            assertThat(full.cause()).startsWith("create failed with CUDA_ERROR_OUT_OF_MEMORY: the GPU had no memory left");
            assertThat(ProbeDiagnosis.verdict(false, full)).isEqualTo(Verdict.NOT_PROBED);

            for (String notFull : new String[] {call + "; NVML reports 140000 MiB free: not a full GPU",
                    call + "; NVML could not tell the GPU's free memory", call}) {
                Finding f = createFailed(notFull, sameNode);
                assertThat(f.code()).as(notFull).isEqualTo("DRIVER_ERROR");
                assertThat(f.severity().name()).isEqualTo("ERROR");
                assertThat(ProbeDiagnosis.verdict(false, f)).isEqualTo(Verdict.FAIL);
            }
        }
        assertThat(ProbeDiagnosis.verdict(true, null)).isEqualTo(Verdict.PASS);
        // elsewhere 2 is no full exporter
        assertThat(failAt(Stage.IMPORT, 2, false).code()).isEqualTo("DRIVER_ERROR");
    }

    private static Finding createFailed(String detail, boolean sameNode) {
        List<StageResult> stages = new ArrayList<>();
        stages.add(new StageResult(Stage.CREATE, StageStatus.FAILED, 2, "CUDA_ERROR_OUT_OF_MEMORY", 0.001, detail));
        for (Stage s : Stage.values()) {
            if (s != Stage.CREATE) {
                stages.add(StageResult.skipped(s, "not run: create failed"));
            }
        }
        return ProbeDiagnosis.diagnose(stages, sameNode, "GPU-a", true, "node-a", sameNode ? "node-a" : "node-b");
    }

    @Test
    void anIllegalStateOnTheExporterBlamesTheSource() {
        Finding f = failAt(Stage.CREATE, 401, false);

        assertThat(f.code()).isEqualTo("CONTEXT_POISONED");
        assertThat(f.blame()).isEqualTo(Blame.SOURCE);
    }

    @Test
    void aTimeoutOnTheExporterBlamesTheSourceAndOnTheImporterTheTarget() {
        assertThat(timeoutAt(Stage.CREATE).blame()).isEqualTo(Blame.SOURCE);
        assertThat(timeoutAt(Stage.EXPORT).blame()).isEqualTo(Blame.SOURCE);
        assertThat(timeoutAt(Stage.IMPORT).blame()).isEqualTo(Blame.TARGET);
        assertThat(timeoutAt(Stage.IMPORT).code()).isEqualTo("TIMEOUT");
    }

    @Test
    void importWithoutTheChannelBlamesTheTarget() {
        Finding f = failAt(Stage.IMPORT, 800, false);

        assertThat(f.code()).isEqualTo("IMPORT_NOT_PERMITTED");
        assertThat(f.blame()).isEqualTo(Blame.TARGET);
    }

    @Test
    void onOneNodeAnImporterWithoutTheExportersGpuIsTheSeedCaseWhicheverCodeTheDriverGives() {
        // Measured on two H200s: 801 for FABRIC, 101 for POSIX_FD; users reported 101 for FABRIC.
        for (int code : new int[] {801, 101}) {
            Finding f = importFails(code, true, false);
            assertThat(f.code()).as("%d", code).isEqualTo("SAME_NODE_EXPORTER_GPU_HIDDEN");
            assertThat(f.blame()).isEqualTo(Blame.TARGET);
            assertThat(f.evidence()).containsEntry("sameNode", true).containsEntry("exporterGpuSeen", false)
                    .containsEntry("exporterGpu", "GPU-a").containsEntry("driverResultCode", code);
            assertThat(f.cause()).contains("(node-a)").contains("(GPU-a)").doesNotContain("unknown");
        }
        // 101 on one node with nothing known of the importer's GPUs is still most likely the seed case.
        assertThat(importFails(101, true, null).code()).isEqualTo("SAME_NODE_EXPORTER_GPU_HIDDEN");
    }

    @Test
    void theSameCodesMeanSomethingElseAcrossNodesOrWhereTheImporterSeesTheExportersGpu() {
        assertThat(importFails(101, false, false).code()).isEqualTo("INVALID_DEVICE");
        assertThat(importFails(101, true, true).code()).isEqualTo("INVALID_DEVICE");
        assertThat(importFails(801, true, true).code()).isEqualTo("HANDLE_REJECTED");
        assertThat(importFails(801, true, null).code()).as("801 alone reads as a bad handle").isEqualTo("HANDLE_REJECTED");
        assertThat(importFails(801, false, false).code()).isEqualTo("HANDLE_REJECTED");
        assertThat(importFails(801, false, false).blame()).isEqualTo(Blame.SOURCE);
    }

    @Test
    void theImportersVerdictOnTheExportersGpuTravelsInItsEvidence() {
        assertThat(ProbeDiagnosis.exporterGpuSeen(importFails(801, true, false))).isFalse();
        assertThat(ProbeDiagnosis.exporterGpuSeen(importFails(801, true, true))).isTrue();
        assertThat(ProbeDiagnosis.exporterGpuSeen(importFails(801, true, null))).isNull();
        assertThat(ProbeDiagnosis.exporterGpuSeen(null)).isNull();
    }

    private static Finding importFails(int code, boolean sameNode, Boolean exporterGpuSeen) {
        List<StageResult> stages = new ArrayList<>();
        for (Stage s : Stage.values()) {
            if (s.ordinal() < Stage.IMPORT.ordinal()) {
                stages.add(new StageResult(s, StageStatus.OK, s == Stage.TRANSFER ? null : 0,
                        s == Stage.TRANSFER ? null : "CUDA_SUCCESS", 0.001, "ok"));
            } else if (s == Stage.IMPORT) {
                stages.add(new StageResult(s, StageStatus.FAILED, code, CuResult.of(code).name(), 0.001, "failed"));
            } else {
                stages.add(StageResult.skipped(s, "not run"));
            }
        }
        return ProbeDiagnosis.diagnose(stages, sameNode, "GPU-a", exporterGpuSeen, "node-a",
                sameNode ? "node-a" : "node-b");
    }

    @Test
    void aRejectedHandleBlamesTheSource() {
        assertThat(failAt(Stage.IMPORT, 801, false).code()).isEqualTo("HANDLE_REJECTED");
        assertThat(failAt(Stage.IMPORT, 400, false).code()).isEqualTo("HANDLE_REJECTED");
        assertThat(failAt(Stage.IMPORT, 801, false).blame()).isEqualTo(Blame.SOURCE);
    }

    @Test
    void importerSideStagesBlameTheTarget() {
        assertThat(failAt(Stage.ACCESS, 1, false).code()).isEqualTo("ACCESS_DENIED");
        assertThat(failAt(Stage.MAP, 2, false).code()).isEqualTo("MAP_FAILED");
        assertThat(failAt(Stage.RESERVE, 101, false).code()).isEqualTo("INVALID_DEVICE");
        assertThat(failAt(Stage.VERIFY, 0, false).code()).isEqualTo("PATTERN_MISMATCH");
        assertThat(failAt(Stage.ACCESS, 1, false).blame()).isEqualTo(Blame.TARGET);
        assertThat(failAt(Stage.MAP, 2, false).blame()).isEqualTo(Blame.TARGET);
    }

    @Test
    void eachFindingKeepsItsCatalogueSeverity() {
        for (Stage s : List.of(Stage.CREATE, Stage.EXPORT, Stage.IMPORT, Stage.MAP, Stage.ACCESS)) {
            Finding f = failAt(s, 1, false);
            assertThat(f.severity()).isEqualTo(f.catalogueEntry().severity());
        }
    }

    private static Finding timeoutAt(Stage stage) {
        List<StageResult> stages = new ArrayList<>();
        for (Stage s : Stage.values()) {
            if (s.ordinal() < stage.ordinal()) {
                stages.add(new StageResult(s, StageStatus.OK, s == Stage.TRANSFER ? null : 0,
                        s == Stage.TRANSFER ? null : "CUDA_SUCCESS", 0.001, "ok"));
            } else if (s == stage) {
                stages.add(new StageResult(s, StageStatus.TIMEOUT, null, null, 5.0, "no answer within 5s"));
            } else {
                stages.add(StageResult.skipped(s, "not run"));
            }
        }
        return ProbeDiagnosis.diagnose(stages, false, "GPU-a", null, "node-a", "node-b");
    }
}
