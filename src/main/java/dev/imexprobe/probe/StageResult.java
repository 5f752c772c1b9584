package dev.imexprobe.probe;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import dev.imexprobe.cuda.CuResult;

/**
 * One stage as reported in every document: {@code cuResult}/{@code cuResultName} appear only when the stage
 * called the driver, and then never null.
 */
@JsonPropertyOrder({"name", "status", "cuResult", "cuResultName", "durationSeconds", "detail"})
public record StageResult(Stage name, StageStatus status,
                          @JsonInclude(JsonInclude.Include.NON_NULL) Integer cuResult,
                          @JsonInclude(JsonInclude.Include.NON_NULL) String cuResultName,
                          double durationSeconds, String detail) {

    public static StageResult of(Stage stage, StageOutcome outcome, long nanos) {
        CuResult r = outcome.cuResult();
        return new StageResult(stage, outcome.status(), r == null ? null : r.code(), r == null ? null : r.name(),
                nanos / 1e9, outcome.detail());
    }

    public static StageResult skipped(Stage stage, String detail) {
        return new StageResult(stage, StageStatus.SKIPPED, null, null, 0, detail);
    }

    public boolean ok() {
        return status == StageStatus.OK;
    }

    /** The failing result, for findings and metrics; null when the stage did not fail with a driver code. */
    public CuResult result() {
        return cuResult == null ? null : CuResult.of(cuResult);
    }
}
