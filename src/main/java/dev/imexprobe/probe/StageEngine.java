package dev.imexprobe.probe;

import java.util.ArrayList;
import java.util.List;

/**
 * Runs stages in order and owns what is common to all of them: the clock, the driver pool's deadline, and
 * what happens after a failure (later stages are skipped, release still runs). When a stage outlives its
 * deadline its thread is still inside the driver, so release is deferred until that call returns; the
 * session's resources are then released on the returning thread.
 */
public final class StageEngine {

    private final DriverExecutor executor;

    public StageEngine(DriverExecutor executor) {
        this.executor = executor;
    }

    public DriverExecutor executor() {
        return executor;
    }

    public List<StageResult> run(ProbeSession session, List<? extends ProbeStage> stages) {
        List<StageResult> results = new ArrayList<>(stages.size());
        Stage failedAt = null;
        Stage stuckAt = session.stuck;
        for (ProbeStage stage : stages) {
            if (stuckAt != null) {
                results.add(StageResult.skipped(stage.stage(), stage.alwaysRuns()
                        ? "deferred: the " + stuckAt.label() + " call is still inside the driver; its resources "
                                + "are released when it returns"
                        : "not run: " + stuckAt.label() + " timed out"));
                continue;
            }
            if (failedAt != null && !stage.alwaysRuns()) {
                results.add(StageResult.skipped(stage.stage(), "not run: " + failedAt.label() + " failed"));
                continue;
            }
            StageResult r = runOne(session, stage);
            results.add(r);
            if (r.status() == StageStatus.TIMEOUT && r.detail().startsWith(NO_ANSWER)) {
                stuckAt = stage.stage();
            } else if (r.status() == StageStatus.FAILED || r.status() == StageStatus.TIMEOUT) {
                failedAt = failedAt == null ? stage.stage() : failedAt;
            }
        }
        return results;
    }

    private static final String NO_ANSWER = "no answer from the driver within";

    private StageResult runOne(ProbeSession session, ProbeStage stage) {
        long start = System.nanoTime();
        if (!stage.callsDriver()) {
            return StageResult.of(stage.stage(), stage.run(session), System.nanoTime() - start);
        }
        DriverExecutor.Outcome<StageOutcome> o = executor.run(() -> stage.run(session), late -> {
            new ReleaseStage().run(session);
            session.stuck = null;
        });
        long nanos = System.nanoTime() - start;
        if (o.ok()) {
            return StageResult.of(stage.stage(), o.value(), nanos);
        }
        if (o.rejected() && stage.alwaysRuns()) {
            executor.cleanUp(() -> new ReleaseStage().run(session));
            return StageResult.of(stage.stage(), StageOutcome.skipped("deferred: all " + executor.threads()
                    + " driver threads are taken (" + executor.stuck() + " inside calls that have not returned); "
                    + "released on the clean-up thread"), nanos);
        }
        if (o.rejected()) {
            return StageResult.of(stage.stage(), StageOutcome.timeout("driver busy: all " + executor.threads()
                    + " driver threads are taken (" + executor.stuck() + " inside calls that have not returned); "
                    + "not attempted"), nanos);
        }
        if (o.timedOut()) {
            session.stuck = stage.stage();
            return StageResult.of(stage.stage(), StageOutcome.timeout(NO_ANSWER + " " + executor.timeout().toMillis()
                    + " ms; the call is still running and its thread stays busy until it returns"), nanos);
        }
        return StageResult.of(stage.stage(), StageOutcome.failed(null, "internal error in " + stage.stage().label()
                + ": " + o.error()), nanos);
    }

    /**
     * The verdict of a list of stages: pass when no stage up to write-back failed or timed out. A failed
     * release does not undo what the exchange proved; it is reported as its own (warning) finding.
     */
    public static boolean passed(List<StageResult> results) {
        return results.stream().noneMatch(r -> r.name() != Stage.RELEASE
                && (r.status() == StageStatus.FAILED || r.status() == StageStatus.TIMEOUT));
    }

    /** The first stage that failed or timed out, or null. */
    public static StageResult firstFailure(List<StageResult> results) {
        return results.stream().filter(r -> r.status() == StageStatus.FAILED || r.status() == StageStatus.TIMEOUT)
                .findFirst().orElse(null);
    }
}
