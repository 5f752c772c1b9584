package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Names the finding for one exchange from its stages: the first stage that failed, its CUresult, whether
 * exporter and importer share a node and whether the importer sees the exporter's GPU (the seed case). Returns
 * null when the exchange passed.
 */
public final class ProbeDiagnosis {

    private ProbeDiagnosis() {
    }

    /**
     * @param sameNode        exporter and importer are on one node (their node names are equal)
     * @param exporterGpu     the exporter's GPU UUID, for the evidence; null when not known
     * @param exporterGpuSeen whether the importer's process has the exporter's GPU: CUDA enumerates it, or NVML
     *                        reaches it past CUDA_VISIBLE_DEVICES (its device node is there); null when not known
     * @param sourceNode      the exporter's node, for the evidence; null when not known
     * @param targetNode      the importer's node; null when not known (an export's own reply)
     */
    public static Finding diagnose(List<StageResult> stages, boolean sameNode, String exporterGpu,
                                   Boolean exporterGpuSeen, String sourceNode, String targetNode) {
        StageResult failed = StageEngine.firstFailure(stages);
        if (failed == null) {
            return null;
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("stage", failed.name().label());
        if (failed.cuResult() != null) {
            // Not named cuResult: that name belongs to stage results alone.
            evidence.put("driverResult", failed.cuResultName());
            evidence.put("driverResultCode", failed.cuResult());
        }
        evidence.put("detail", failed.detail());
        // a side not known here (an export asked for by hand names no importer) is left out, never written as
        // null, nor guessed as another node
        if (sourceNode != null) {
            evidence.put("sourceNode", sourceNode);
        }
        if (targetNode != null) {
            evidence.put("targetNode", targetNode);
        }
        if (sourceNode != null && targetNode != null) {
            evidence.put("sameNode", sameNode);
        }
        if (exporterGpu != null) {
            evidence.put("exporterGpu", exporterGpu);
        }
        if (exporterGpuSeen != null) {
            evidence.put("exporterGpuSeen", exporterGpuSeen);
        }
        Finding finding = code(failed, sameNode, exporterGpuSeen).finding(evidence);
        // create and export run on the exporter: whatever fails there (a driver error, a hang, a poisoned
        // context) is the source's, though the same codes elsewhere point at the importer.
        boolean onExporter = failed.name() == Stage.CREATE || failed.name() == Stage.EXPORT;
        return onExporter && finding.blame() == Blame.TARGET ? finding.withBlame(Blame.SOURCE, null) : finding;
    }

    /**
     * An exchange's verdict from whether its stages passed and its finding: one that could not allocate on a full
     * GPU ({@link FindingCode#GPU_OUT_OF_MEMORY}) is not probed, never failed, as a GPU the agent left to a job is.
     */
    public static Verdict verdict(boolean pass, Finding finding) {
        return pass ? Verdict.PASS : finding != null && FindingCode.GPU_OUT_OF_MEMORY.name().equals(finding.code())
                ? Verdict.NOT_PROBED : Verdict.FAIL;
    }

    /** What an importer's finding says of whether it saw the exporter's GPU; null when it does not say. */
    public static Boolean exporterGpuSeen(Finding importerFinding) {
        Object seen = importerFinding == null || importerFinding.evidence() == null ? null
                : importerFinding.evidence().get("exporterGpuSeen");
        return seen instanceof Boolean b ? b : null;
    }

    static FindingCode code(StageResult failed, boolean sameNode, Boolean exporterGpuSeen) {
        if (failed.status() == StageStatus.TIMEOUT) {
            return FindingCode.TIMEOUT;
        }
        CuResult r = failed.result();
        int code = r == null ? -1 : r.code();
        Stage stage = failed.name();
        if (code == CuResult.ILLEGAL_STATE.code()) {
            return FindingCode.CONTEXT_POISONED;
        }
        return switch (stage) {
            // Measured on an H100 beside a job holding all but 8 or 64 MiB: the context is retained and
            // cuMemCreate(2 MiB) returns 2. A GPU NVML finds full says nothing about IMEX (the pair is not probed,
            // verdict); a 2 with memory free is the driver's and fails.
            case CREATE -> code == CuResult.NOT_PERMITTED.code() ? FindingCode.CREATE_NOT_PERMITTED
                    : code == CuResult.OUT_OF_MEMORY.code() && failed.detail() != null
                            && failed.detail().contains(CreateStage.GPU_FULL) ? FindingCode.GPU_OUT_OF_MEMORY
                    : FindingCode.DRIVER_ERROR;
            case EXPORT -> FindingCode.DRIVER_ERROR;
            case IMPORT -> {
                if (code == CuResult.NOT_PERMITTED.code()) {
                    yield FindingCode.IMPORT_NOT_PERMITTED;
                }
                // Measured on two H200s: with the exporter's GPU hidden from the importer's container, a
                // same-node FABRIC import is 801 (POSIX_FD 101), which alone reads like a bad handle. A probe's
                // handle is fresh and its exporter alive, so the hidden GPU is the cause; users reported 101 too.
                // CUDA_VISIBLE_DEVICES alone imported fine there, so a GPU NVML still reaches is not "hidden".
                if (code == CuResult.INVALID_DEVICE.code()) {
                    yield sameNode && !Boolean.TRUE.equals(exporterGpuSeen) ? FindingCode.SAME_NODE_EXPORTER_GPU_HIDDEN
                            : FindingCode.INVALID_DEVICE;
                }
                if (code == CuResult.NOT_SUPPORTED.code() && sameNode && Boolean.FALSE.equals(exporterGpuSeen)) {
                    yield FindingCode.SAME_NODE_EXPORTER_GPU_HIDDEN;
                }
                if (code == CuResult.NOT_SUPPORTED.code() || code == CuResult.INVALID_HANDLE.code()) {
                    yield FindingCode.HANDLE_REJECTED;
                }
                yield FindingCode.DRIVER_ERROR;
            }
            case RESERVE, MAP -> code == CuResult.INVALID_DEVICE.code() ? FindingCode.INVALID_DEVICE
                    : FindingCode.MAP_FAILED;
            case ACCESS -> FindingCode.ACCESS_DENIED;
            case VERIFY, WRITEBACK -> code == CuResult.SUCCESS.code() ? FindingCode.PATTERN_MISMATCH
                    : FindingCode.DRIVER_ERROR;
            case RELEASE -> FindingCode.RELEASE_FAILED;
            case TRANSFER -> FindingCode.PEER_ERROR;
        };
    }
}
