package dev.imexprobe.probe;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs stages in order and owns what is common to all of them: the clock, the driver pool's deadline, and
 * what happens after a failure (later stages are skipped, release still runs). When a stage outlives its
 * deadline its thread is still inside the driver, so release is deferred until that call returns; the
 * session's resources are then released on the returning thread.
 *
 * <p>One side's stages run one after another on ONE driver thread (one hop onto the pool and one back per list,
 * not per stage), while the caller keeps each stage's own deadline: it sleeps until the running stage's
 * deadline and only wakes earlier when the list is done. When the pool refuses the list, the stages are tried
 * one at a time, each answering "driver busy" if the pool is still full.
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
        if (session.stuck != null || stages.stream().noneMatch(ProbeStage::callsDriver)) {
            // A session whose earlier call is still inside the driver is not touched: every stage is skipped.
            return runEach(session, stages);
        }
        Batch batch = new Batch(session, stages);
        if (!executor.start(batch::work)) {
            return runEach(session, stages);
        }
        return batch.await();
    }

    /** What the loop decides before running a stage: null to run it, else the result it gets without running. */
    private static StageResult beforeRunning(ProbeStage stage, Stage failedAt, Stage stuckAt) {
        if (stuckAt != null) {
            return StageResult.skipped(stage.stage(), stage.alwaysRuns()
                    ? "deferred: the " + stuckAt.label() + " call is still inside the driver; its resources "
                            + "are released when it returns"
                    : "not run: " + stuckAt.label() + " timed out");
        }
        if (failedAt != null && !stage.alwaysRuns()) {
            return StageResult.skipped(stage.stage(), "not run: " + failedAt.label() + " failed");
        }
        return null;
    }

    private static boolean failed(StageResult r) {
        return r.status() == StageStatus.FAILED || r.status() == StageStatus.TIMEOUT;
    }

    private static StageOutcome internalError(ProbeStage stage, Throwable error) {
        return StageOutcome.failed(null, "internal error in " + stage.stage().label() + ": " + error);
    }

    private StageResult noAnswer(ProbeStage stage, long nanos) {
        return StageResult.of(stage.stage(), StageOutcome.timeout(NO_ANSWER + " " + executor.timeout().toMillis()
                + " ms; the call is still running and its thread stays busy until it returns"), nanos);
    }

    /**
     * The list on one driver thread. The worker runs the stages and publishes each result; the caller waits
     * for the end, or until the running stage's deadline passes, whichever comes first. A caller that gives up
     * marks the batch abandoned: the worker, once its stuck call returns, releases the session and stops.
     */
    private final class Batch {

        private final ProbeSession session;
        private final List<? extends ProbeStage> stages;
        private final StageResult[] results;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition finished = lock.newCondition();
        /** The first stage without a result, and since when it is the one running (the first: since submission). */
        private int current;
        private long currentSince;
        private boolean done;
        private boolean abandoned;
        /** The executor's record of the call the caller gave up on, set with {@code abandoned}. */
        private Object stuckCall;

        Batch(ProbeSession session, List<? extends ProbeStage> stages) {
            this.session = session;
            this.stages = stages;
            this.results = new StageResult[stages.size()];
            this.currentSince = System.nanoTime();
        }

        /** On the driver thread. */
        void work() {
            Stage failedAt = null;
            boolean late = false;
            for (int i = 0; i < stages.size(); i++) {
                ProbeStage stage = stages.get(i);
                long start = System.nanoTime();
                StageResult r = beforeRunning(stage, failedAt, null);
                if (r == null) {
                    StageOutcome o;
                    try {
                        o = stage.run(session);
                    } catch (Throwable t) {
                        o = internalError(stage, t);
                    }
                    r = StageResult.of(stage.stage(), o, System.nanoTime() - start);
                }
                lock.lock();
                try {
                    if (abandoned) {
                        late = true; // the caller reported this stage as timed out and went on
                        break;
                    }
                    results[i] = r;
                    current = i + 1;
                    currentSince = System.nanoTime();
                    if (current == stages.size()) {
                        done = true;
                        finished.signalAll();
                    }
                } finally {
                    lock.unlock();
                }
                if (failed(r)) {
                    failedAt = failedAt == null ? stage.stage() : failedAt;
                }
            }
            if (late) {
                executor.stuckCallReturned(stuckCall);
                new ReleaseStage().run(session);
                session.stuck = null;
            }
        }

        /** On the caller's thread. */
        List<StageResult> await() {
            boolean interrupted = false;
            lock.lock();
            try {
                while (!done) {
                    boolean driver = stages.get(current).callsDriver();
                    long left = executor.timeout().toNanos() - (System.nanoTime() - currentSince);
                    if (driver && (left <= 0 || interrupted)) {
                        return giveUp(System.nanoTime() - currentSince);
                    }
                    try {
                        // A stage without a driver call has no deadline (as when it ran on the caller): look again later.
                        finished.awaitNanos(driver ? left : executor.timeout().toNanos());
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                return List.copyOf(Arrays.asList(results));
            } finally {
                lock.unlock();
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** The running stage passed its deadline: report it, skip the rest, and leave the release to the worker. */
        private List<StageResult> giveUp(long waitedNanos) {
            abandoned = true;
            stuckCall = executor.stuckCallStarted();
            ProbeStage stuck = stages.get(current);
            session.stuck = stuck.stage(); // under the lock: the worker, once back, sees it set and clears it
            List<StageResult> out = new ArrayList<>(stages.size());
            Stage failedAt = null;
            for (int i = 0; i < current; i++) {
                out.add(results[i]);
                if (failed(results[i])) {
                    failedAt = failedAt == null ? results[i].name() : failedAt;
                }
            }
            out.add(noAnswer(stuck, waitedNanos));
            for (int i = current + 1; i < stages.size(); i++) {
                out.add(beforeRunning(stages.get(i), failedAt, stuck.stage()));
            }
            return out;
        }
    }

    /** One stage at a time, each driver stage its own task on the pool: when the pool refused the whole list. */
    private List<StageResult> runEach(ProbeSession session, List<? extends ProbeStage> stages) {
        List<StageResult> results = new ArrayList<>(stages.size());
        Stage failedAt = null;
        Stage stuckAt = session.stuck;
        for (ProbeStage stage : stages) {
            StageResult skipped = beforeRunning(stage, failedAt, stuckAt);
            if (skipped != null) {
                results.add(skipped);
                continue;
            }
            StageResult r = runOne(session, stage);
            results.add(r);
            if (r.status() == StageStatus.TIMEOUT && r.detail().startsWith(NO_ANSWER)) {
                stuckAt = stage.stage();
            } else if (failed(r)) {
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
        AtomicBoolean returned = new AtomicBoolean();
        DriverExecutor.Outcome<StageOutcome> o = executor.run(() -> stage.run(session), late -> {
            new ReleaseStage().run(session);
            returned.set(true);
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
            if (returned.get()) {
                session.stuck = null; // it came back (and released) between the deadline and the line above
            }
            return noAnswer(stage, nanos);
        }
        return StageResult.of(stage.stage(), internalError(stage, o.error()), nanos);
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
