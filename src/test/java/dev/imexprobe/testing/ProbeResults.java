package dev.imexprobe.testing;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.finding.Finding;
import dev.imexprobe.finding.FindingCode;
import dev.imexprobe.probe.Direction;
import dev.imexprobe.probe.PairResult;
import dev.imexprobe.probe.ProbeDiagnosis;
import dev.imexprobe.probe.Stage;
import dev.imexprobe.probe.StageResult;
import dev.imexprobe.probe.StageStatus;
import dev.imexprobe.probe.Verdict;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pair results shaped as the prober makes them (every stage listed in order; a stage that calls the driver
 * carries its CUresult, the transfer never does), for tests of what consumes results: mesh state, metrics,
 * the scheduler. Source exports, target imports.
 */
public final class ProbeResults {

    /** Each stage that ran took this long, so histograms have something to count. */
    public static final double STAGE_SECONDS = 0.002;

    private ProbeResults() {
    }

    public static PairResult pass(String sourceNode, String sourceGpu, String targetNode, String targetGpu) {
        List<StageResult> stages = new ArrayList<>();
        for (Stage s : Stage.values()) {
            stages.add(ran(s, StageStatus.OK, CuResult.SUCCESS));
        }
        return new PairResult(Direction.PUSH, sourceNode, sourceGpu, targetNode, targetGpu, Verdict.PASS,
                STAGE_SECONDS * stages.size(), null, List.copyOf(stages), null);
    }

    /**
     * Every stage before {@code stage} passed, {@code stage} failed with {@code code}, the rest were skipped
     * (release still ran); the finding is the one the prober's diagnosis names.
     */
    public static PairResult failAt(Stage stage, CuResult code, String sourceNode, String sourceGpu, String targetNode,
                                    String targetGpu) {
        List<StageResult> stages = new ArrayList<>();
        for (Stage s : Stage.values()) {
            if (s.ordinal() < stage.ordinal()) {
                stages.add(ran(s, StageStatus.OK, CuResult.SUCCESS));
            } else if (s == stage) {
                stages.add(ran(s, StageStatus.FAILED, code));
            } else if (s == Stage.RELEASE) {
                stages.add(ran(s, StageStatus.OK, CuResult.SUCCESS));
            } else {
                stages.add(StageResult.skipped(s, "not run: " + stage.label() + " failed"));
            }
        }
        // The seed's containers: on one node, each sees only its own GPU.
        boolean sameNode = sourceNode.equals(targetNode);
        Finding finding = ProbeDiagnosis.diagnose(stages, sameNode, sourceGpu, sameNode ? false : null, sourceNode,
                targetNode);
        return new PairResult(Direction.PUSH, sourceNode, sourceGpu, targetNode, targetGpu, Verdict.FAIL,
                STAGE_SECONDS * (stage.ordinal() + 2), finding, List.copyOf(stages), null);
    }

    /**
     * The target agent did not answer: the transfer failed without a CUresult, the finding is PEER_UNREACHABLE.
     * {@code targetNode}/{@code targetGpu} may be the address and null when the peer was never identified.
     */
    public static PairResult unreachable(String sourceNode, String sourceGpu, String address, String targetNode,
                                         String targetGpu) {
        List<StageResult> stages = new ArrayList<>();
        for (Stage s : Stage.values()) {
            stages.add(s == Stage.TRANSFER
                    ? new StageResult(Stage.TRANSFER, StageStatus.FAILED, null, null, 0.001, "connection refused")
                    : StageResult.skipped(s, "not run: the target could not be asked who it is"));
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("peer", address);
        evidence.put("stage", "transfer");
        evidence.put("detail", "connection refused");
        return new PairResult(Direction.PUSH, sourceNode, sourceGpu, targetNode, targetGpu, Verdict.FAIL, 0.001,
                FindingCode.PEER_UNREACHABLE.finding(evidence), List.copyOf(stages), null);
    }

    private static StageResult ran(Stage s, StageStatus status, CuResult code) {
        boolean driver = s != Stage.TRANSFER;
        return new StageResult(s, status, driver ? code.code() : null, driver ? code.name() : null, STAGE_SECONDS,
                status == StageStatus.OK ? "ok" : "failed");
    }
}
