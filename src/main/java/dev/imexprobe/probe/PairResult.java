package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonInclude;

import dev.imexprobe.finding.Finding;

import java.util.List;

/**
 * One direction of one GPU pair. Source is always the exporter and target the importer, whoever asked.
 *
 * @param debug the steps explained, only with debug=true
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PairResult(Direction direction, String sourceNode, String sourceGpu, String targetNode,
                         String targetGpu, Verdict verdict, double durationSeconds, Finding finding,
                         List<StageResult> stages, List<String> debug) {

    public boolean passed() {
        return verdict == Verdict.PASS;
    }

    /** The first stage that failed or timed out, or null. */
    public StageResult firstFailure() {
        return StageEngine.firstFailure(stages);
    }
}
