package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.finding.Blame;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Names the finding for one exchange from its stages: the first stage that failed, its CUresult, and
 * whether exporter and importer share a node (the seed case). Returns null when the exchange passed.
 */
public final class ProbeDiagnosis {

    private ProbeDiagnosis() {
    }

    /**
     * @param sameNode   exporter and importer are on one node (their node names are equal)
     * @param sourceNode the exporter's node, for the evidence
     * @param targetNode the importer's node
     */
    public static Finding diagnose(List<StageResult> stages, boolean sameNode, String sourceNode, String targetNode) {
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
        evidence.put("sourceNode", sourceNode);
        evidence.put("targetNode", targetNode);
        evidence.put("sameNode", sameNode);
        Finding finding = code(failed, sameNode).finding(evidence);
        // create and export run on the exporter: whatever fails there (a driver error, a hang, a poisoned
        // context) is the source's, though the same codes elsewhere point at the importer.
        boolean onExporter = failed.name() == Stage.CREATE || failed.name() == Stage.EXPORT;
        return onExporter && finding.blame() == Blame.TARGET ? finding.withBlame(Blame.SOURCE, null) : finding;
    }

    static FindingCode code(StageResult failed, boolean sameNode) {
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
            case CREATE -> code == CuResult.NOT_PERMITTED.code() ? FindingCode.CREATE_NOT_PERMITTED
                    : FindingCode.DRIVER_ERROR;
            case EXPORT -> FindingCode.DRIVER_ERROR;
            case IMPORT -> {
                if (code == CuResult.NOT_PERMITTED.code()) {
                    yield FindingCode.IMPORT_NOT_PERMITTED;
                }
                if (code == CuResult.INVALID_DEVICE.code()) {
                    yield sameNode ? FindingCode.SAME_NODE_INVALID_DEVICE : FindingCode.INVALID_DEVICE;
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
