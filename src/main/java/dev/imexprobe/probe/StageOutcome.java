package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuResult;

/**
 * What a stage decided: its status, the CUresult when it called the driver (null when it did not), and a
 * sentence for the user. The engine adds the stage's name and duration.
 */
public record StageOutcome(StageStatus status, CuResult cuResult, String detail) {

    public static StageOutcome ok(CuResult result, String detail) {
        return new StageOutcome(StageStatus.OK, result, detail);
    }

    /** A driver call that returned an error: the result names the call that failed. */
    public static StageOutcome failed(CuResult result, String detail) {
        return new StageOutcome(StageStatus.FAILED, result, detail);
    }

    public static StageOutcome skipped(String detail) {
        return new StageOutcome(StageStatus.SKIPPED, null, detail);
    }

    public static StageOutcome timeout(String detail) {
        return new StageOutcome(StageStatus.TIMEOUT, null, detail);
    }

    /** ok when the call succeeded, failed naming the call otherwise. */
    public static StageOutcome of(CuResult result, String call, String okDetail) {
        return result.ok() ? ok(result, okDetail) : failed(result, call + " returned " + result.name());
    }

    public boolean ok() {
        return status == StageStatus.OK;
    }
}
