package dev.imexprobe.probe;

import dev.imexprobe.trace.Timeline;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Predicate;
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
 * one at a time, each answering "driver busy" if the pool is still full. Either way the same loop
 * ({@code runLoop}) decides which stage runs; only where it runs differs.
 */
public final class StageEngine {

    private final DriverExecutor executor;
    /** How long each kind of list (its stages and size) took on its driver thread the last few times. */
    private final Expected expected = new Expected();

    public StageEngine(DriverExecutor executor) {
        this.executor = executor;
    }

    public DriverExecutor executor() {
        return executor;
    }

    public List<StageResult> run(ProbeSession session, List<? extends ProbeStage> stages) {
        return start(session, stages, null, null).await();
    }

    /**
     * As {@link #run}, and {@code then} runs right after stage {@code after} has its result and before the next
     * stage begins, on the thread that runs the list, while the caller still waits: for a caller whose peer may
     * go on from that point (the importer's answer committed once it is done with the memory's contents). Not
     * run when the stage is never reached or the caller gave up waiting before it; what it throws is ignored.
     * {@code then} must not block: it runs on a driver thread inside the list's deadline, so a wait there (a
     * socket write to a stalled peer, a lock) would count against the driver and hold a pool thread. The importer's
     * head is a few hundred bytes into a socket buffer that is empty at that point of the exchange.
     */
    public List<StageResult> run(ProbeSession session, List<? extends ProbeStage> stages, Stage after, Runnable then) {
        return start(session, stages, after, then).await();
    }

    /** A list handed to the driver pool whose results the caller takes later. */
    public interface Pending {
        /** The results, as {@link #run} gives them: waits for the end, or the running stage's deadline. */
        List<StageResult> await();
    }

    /**
     * Hands the list to the driver pool and returns at once, so that the caller can go on with other work (the
     * exporter reading the importer's answer while its check runs). Without a free driver thread the list runs
     * here, as {@link #run} would, before this returns.
     */
    public Pending start(ProbeSession session, List<? extends ProbeStage> stages) {
        return start(session, stages, null, null);
    }

    private Pending start(ProbeSession session, List<? extends ProbeStage> stages, Stage after, Runnable then) {
        if (session.stuck == null && anyCallsDriver(stages)) {
            OneThread list = new OneThread(session, stages, after, then);
            if (executor.start(list::work)) {
                return list::await;
            }
        }
        List<StageResult> results = runNow(session, stages, after, then);
        return () -> results;
    }

    private List<StageResult> runNow(ProbeSession session, List<? extends ProbeStage> stages, Stage after,
                                     Runnable then) {
        // No driver call in the list, a session whose earlier call is still inside the driver (every stage is
        // skipped), or a pool that refused the whole list: each driver stage is its own task on the pool.
        List<StageResult> results = new ArrayList<>(stages.size());
        runLoop(stages, 0, new Course(session.stuck), stage -> runOne(session, stage), r -> {
            results.add(r);
            milestone(r, after, then);
            return true;
        });
        return results;
    }

    private static void milestone(StageResult r, Stage after, Runnable then) {
        if (then != null && r.name() == after) {
            try {
                then.run();
            } catch (RuntimeException e) {
                // The caller's business (its answer's connection closed early): the list goes on regardless.
            }
        }
    }

    private static boolean anyCallsDriver(List<? extends ProbeStage> stages) {
        for (ProbeStage s : stages) {
            if (s.callsDriver()) {
                return true;
            }
        }
        return false;
    }

    /**
     * A kind of stage list: the ordinals of its stages as bits, and the session's size. Its own equals and
     * hashCode: a record's are bootstrapped through method handles, which the agents' C1-only JIT does not inline
     * (1 % of the request threads' CPU per probe on the H200, for a map lookup).
     */
    private record Kind(int stages, long sizeBytes) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Kind k && k.stages == stages && k.sizeBytes == sizeBytes;
        }

        @Override
        public int hashCode() {
            return 31 * stages + Long.hashCode(sizeBytes);
        }
    }

    /** One stage's result, and whether its call is still inside the driver (the rest of the list is then deferred). */
    private record Ran(StageResult result, boolean stuck) {
    }

    /** The rule of a run in one place: after a failure later stages are skipped and release runs; after a stuck
     * call every later stage waits for it. */
    private static final class Course {

        private Stage failedAt;
        private Stage stuckAt;

        Course(Stage stuckAt) {
            this.stuckAt = stuckAt;
        }

        /** Null to run the stage, else the result it gets without running. */
        StageResult before(ProbeStage stage) {
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

        void after(Stage stage, StageResult r, boolean stuck) {
            if (stuck) {
                stuckAt = stage;
            } else if (failedAt == null && failed(r)) {
                failedAt = stage;
            }
        }
    }

    /**
     * The one run loop: from {@code from} on, each stage is skipped or run through {@code call} as {@code course}
     * decides, and handed to {@code sink}. Stops early, returning false, when the sink refuses a result (the
     * caller already reported the stage and went on).
     */
    private static boolean runLoop(List<? extends ProbeStage> stages, int from, Course course,
                                   Function<ProbeStage, Ran> call, Predicate<StageResult> sink) {
        for (int i = from; i < stages.size(); i++) {
            ProbeStage stage = stages.get(i);
            StageResult r = course.before(stage);
            boolean stuck = false;
            if (r == null) {
                Ran ran = call.apply(stage);
                r = ran.result();
                stuck = ran.stuck();
            }
            if (!sink.test(r)) {
                return false;
            }
            course.after(stage.stage(), r, stuck);
        }
        return true;
    }

    private static boolean failed(StageResult r) {
        return r.status() == StageStatus.FAILED || r.status() == StageStatus.TIMEOUT;
    }

    private static StageOutcome internalError(ProbeStage stage, Throwable error) {
        return StageOutcome.failed(null, "internal error in " + stage.stage().label() + ": " + error);
    }

    /** Runs the stage on the calling thread (the list's driver thread, or the caller for a stage without a call). */
    private static Ran runHere(ProbeSession session, ProbeStage stage) {
        long start = System.nanoTime();
        StageOutcome o;
        try {
            o = stage.run(session);
        } catch (Throwable t) {
            o = internalError(stage, t);
        }
        return new Ran(StageResult.of(stage.stage(), o, System.nanoTime() - start), false);
    }

    /** The call passed the driver's deadline, or the caller's ({@code callersDeadline}): it is left to its thread. */
    private Ran noAnswer(ProbeStage stage, long nanos, boolean callersDeadline) {
        String within = callersDeadline ? "before the probe's deadline (" + nanos / 1_000_000 + " ms)"
                : "within " + executor.timeout().toMillis() + " ms";
        return new Ran(StageResult.of(stage.stage(), StageOutcome.timeout("no answer from the driver " + within
                + "; the call is still running and its thread stays busy until it returns"), nanos), true);
    }

    private StageResult notStarted(ProbeStage stage, long nanos) {
        return StageResult.of(stage.stage(), StageOutcome.timeout("driver busy: not started within "
                + executor.timeout().toMillis() + " ms, all " + executor.threads() + " driver threads were taken ("
                + executor.stuck() + " inside calls that have not returned); none of its calls will run"), nanos);
    }

    /**
     * The list on one driver thread. The worker runs the loop and publishes each result; the caller waits
     * for the end, or until the running stage's deadline passes, whichever comes first. A caller that gives up
     * marks the list abandoned: the worker, once its stuck call returns, releases the session and stops.
     */
    private final class OneThread {

        private final ProbeSession session;
        private final List<? extends ProbeStage> stages;
        private final Stage after;
        private final Runnable then;
        private final StageResult[] results;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition finished = lock.newCondition();
        /** The first stage without a result, and since when it is the one running (the first: since submission). */
        private int current;
        private long currentSince;
        /** Read without the lock by a caller spinning for the end. */
        private volatile boolean done;
        private final long submitted;
        /** When the worker took the list: for {@link Timeline#hop} only. */
        private volatile long startedAt;
        /**
         * Whether a driver thread took the list (1) or its caller gave up while it still waited (2), decided once:
         * a compare-and-set, not the list's lock, which the thread would take on every list while its caller may
         * hold it (a preempted caller then held the thread up, and one caller's lists moved between threads).
         */
        private final java.util.concurrent.atomic.AtomicInteger taken = new java.util.concurrent.atomic.AtomicInteger();
        private long doneAt;
        private boolean abandoned;
        /** The executor's record of the call the caller gave up on, set with {@code abandoned}. */
        private Object stuckCall;

        OneThread(ProbeSession session, List<? extends ProbeStage> stages, Stage after, Runnable then) {
            this.session = session;
            this.stages = stages;
            this.after = after;
            this.then = then;
            this.results = new StageResult[stages.size()];
            this.currentSince = System.nanoTime();
            this.submitted = currentSince;
        }

        /** What kind of list this is, for {@link Expected}: which stages, how many bytes. */
        private Object kind() {
            int mask = 0;
            for (ProbeStage stage : stages) {
                mask |= 1 << stage.stage().ordinal();
            }
            return new Kind(mask, session.sizeBytes());
        }

        /** On the driver thread. */
        void work() {
            startedAt = System.nanoTime();
            if (!taken.compareAndSet(0, 1)) {
                // nothing of this list ran; what earlier lists of the session hold is released here, as after a
                // stuck call
                new ReleaseStage().run(session);
                session.stuck = null;
                return;
            }
            boolean finishedAll = runLoop(stages, 0, new Course(null), stage -> runHere(session, stage), this::publish);
            if (!finishedAll) {
                executor.stuckCallReturned(stuckCall);
                new ReleaseStage().run(session);
                session.stuck = null;
            }
        }

        /** On the driver thread: false when the caller already reported this stage as timed out and went on. */
        private boolean publish(StageResult r) {
            lock.lock();
            try {
                if (abandoned) {
                    return false;
                }
                results[current] = r;
                // Under the lock: a caller giving up meanwhile waits for it, so the two never overlap.
                milestone(r, after, then);
                current++;
                currentSince = System.nanoTime();
                if (current == stages.size()) {
                    doneAt = currentSince;
                    executor.returning(); // what the caller submits next waits for this thread, the one that ran last
                    done = true;
                    finished.signalAll();
                }
                return true;
            } finally {
                lock.unlock();
            }
        }

        /** On the caller's thread. */
        List<StageResult> await() {
            long spin = executor.spinNanos();
            Object kind = spin > 0 ? kind() : null;
            if (kind != null) {
                awaitNear(expected.estimate(kind), spin);
            }
            boolean interrupted = false;
            // The caller's own deadline (an on-demand probe's) holds for the driver too: the answer keeps it.
            boolean bounded = ProbeDeadline.bound();
            long callerDeadline = bounded ? ProbeDeadline.nanos() : 0;
            lock.lock();
            try {
                while (!done) {
                    boolean driver = stages.get(current).callsDriver();
                    long now = System.nanoTime();
                    long left = executor.timeout().toNanos() - (now - currentSince);
                    long callerLeft = bounded ? callerDeadline - now : Long.MAX_VALUE;
                    if (driver && (left <= 0 || callerLeft <= 0 || interrupted)) {
                        return giveUp(now - currentSince, Math.max(0, left), left > 0 && callerLeft <= 0);
                    }
                    try {
                        // A stage without a driver call has no deadline (as when it ran on the caller): look again later.
                        finished.awaitNanos(driver ? Math.min(left, callerLeft) : executor.timeout().toNanos());
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                if (kind != null) {
                    expected.record(kind, doneAt - submitted);
                }
                hopEvent();
                return List.copyOf(Arrays.asList(results));
            } finally {
                lock.unlock();
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private void hopEvent() {
            if (Timeline.hops()) {
                StringBuilder names = new StringBuilder();
                for (ProbeStage stage : stages) {
                    names.append(names.isEmpty() ? "" : ",").append(stage.stage().label());
                }
                Timeline.hop(names.toString(), submitted, startedAt, doneAt, System.nanoTime());
            }
        }

        /**
         * Parks until {@code spin} before the list is expected to end, then spins until {@code spin} after:
         * the worker's signal then finds the caller awake and wakes nobody. Never past the first stage's
         * deadline (the wait after it keeps every deadline); an interrupt ends it at once.
         */
        private void awaitNear(long expectedNanos, long spin) {
            if (expectedNanos < 0 || expectedNanos + spin >= executor.timeout().toNanos()) {
                return;
            }
            long wakeAt = submitted + expectedNanos - spin;
            long spinUntil = submitted + expectedNanos + spin;
            if (System.nanoTime() - wakeAt < 0) {
                lock.lock();
                try {
                    long left;
                    while (!done && (left = wakeAt - System.nanoTime()) > 0) {
                        finished.awaitNanos(left);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // the wait below gives up as for any interrupt
                    return;
                } finally {
                    lock.unlock();
                }
            }
            while (!done && System.nanoTime() - spinUntil < 0) {
                Thread.onSpinWait();
            }
        }

        /**
         * The running stage passed its deadline, or the caller's: report it, skip the rest, and leave the release to
         * the worker. {@code overdueInNanos}: how long until the call passes the driver's deadline (0: it has);
         * {@code callersDeadline}: the caller's deadline came first.
         */
        private List<StageResult> giveUp(long waitedNanos, long overdueInNanos, boolean callersDeadline) {
            abandoned = true;
            boolean queued = taken.compareAndSet(0, 2);
            // A list still waiting for a thread is in no driver call: not counted as stuck, so it cannot make the
            // pool look exhausted (which refuses all driver work and fails liveness) while calls still return. One
            // given up at the caller's deadline counts once it passes the driver's.
            stuckCall = queued ? null : executor.stuckCallStarted(overdueInNanos);
            ProbeStage stuck = stages.get(current);
            session.stuck = stuck.stage(); // under the lock: the worker, once back, sees it set and clears it
            List<StageResult> out = new ArrayList<>(stages.size());
            Course course = new Course(null);
            for (int i = 0; i < current; i++) {
                out.add(results[i]);
                course.after(results[i].name(), results[i], false);
            }
            if (callersDeadline && stuck.alwaysRuns()) {
                // A release the probe's deadline leaves no time to wait for (a peer that never answered used it
                // up): not a timeout of the driver; the worker releases, as after any list given up.
                out.add(StageResult.skipped(stuck.stage(), "deferred: " + ProbeDeadline.PASSED + "; what the "
                        + "session holds is released on a driver thread after the answer"));
                for (int i = current + 1; i < stages.size(); i++) {
                    out.add(StageResult.skipped(stages.get(i).stage(), "not run: " + ProbeDeadline.PASSED));
                }
                return out;
            }
            if (queued) {
                out.add(callersDeadline ? StageResult.of(stuck.stage(), StageOutcome.timeout("not started: "
                        + ProbeDeadline.PASSED), waitedNanos) : notStarted(stuck, waitedNanos));
                for (int i = current + 1; i < stages.size(); i++) {
                    ProbeStage later = stages.get(i);
                    out.add(StageResult.skipped(later.stage(), later.alwaysRuns()
                            ? "deferred: the list never got a driver thread; what the session holds is released "
                                    + "when one takes it"
                            : "not run: " + stuck.stage().label() + " timed out"));
                }
                return out;
            }
            Ran timedOut = noAnswer(stuck, waitedNanos, callersDeadline);
            out.add(timedOut.result());
            course.after(stuck.stage(), timedOut.result(), timedOut.stuck());
            // Every later stage is now skipped or deferred by the course; none is run.
            runLoop(stages, current + 1, course, stage -> {
                throw new IllegalStateException("a stage after a stuck call must not run");
            }, out::add);
            return out;
        }
    }

    /** One driver stage as its own task on the pool (a stage without a driver call runs on the caller). */
    private Ran runOne(ProbeSession session, ProbeStage stage) {
        if (!stage.callsDriver()) {
            return runHere(session, stage);
        }
        long start = System.nanoTime();
        AtomicBoolean returned = new AtomicBoolean();
        DriverExecutor.Outcome<StageOutcome> o = executor.run(() -> stage.run(session), late -> {
            new ReleaseStage().run(session);
            returned.set(true);
            session.stuck = null;
        });
        long nanos = System.nanoTime() - start;
        if (o.ok()) {
            return new Ran(StageResult.of(stage.stage(), o.value(), nanos), false);
        }
        if (o.rejected() && stage.alwaysRuns()) {
            executor.cleanUp(() -> new ReleaseStage().run(session));
            return new Ran(StageResult.of(stage.stage(), StageOutcome.skipped("deferred: all " + executor.threads()
                    + " driver threads are taken (" + executor.stuck() + " inside calls that have not returned); "
                    + "released on the clean-up thread"), nanos), false);
        }
        if (o.rejected()) {
            return new Ran(StageResult.of(stage.stage(), StageOutcome.timeout("driver busy: all " + executor.threads()
                    + " driver threads are taken (" + executor.stuck() + " inside calls that have not returned); "
                    + "not attempted"), nanos), false);
        }
        if (o.timedOut()) {
            session.stuck = stage.stage();
            if (returned.get()) {
                session.stuck = null; // it came back (and released) between the deadline and the line above
            }
            return noAnswer(stage, nanos, false);
        }
        return new Ran(StageResult.of(stage.stage(), internalError(stage, o.error()), nanos), false);
    }

    /**
     * The verdict of a list of stages: pass when no stage up to write-back failed or timed out. A failed
     * release does not undo what the exchange proved; it is reported as its own (warning) finding.
     */
    public static boolean passed(List<StageResult> results) {
        for (StageResult r : results) { // loops, not streams: on every exchange, and the agents run C1 only
            if (r.name() != Stage.RELEASE && failed(r)) {
                return false;
            }
        }
        return true;
    }

    /** The first stage that failed or timed out, or null. */
    public static StageResult firstFailure(List<StageResult> results) {
        for (StageResult r : results) {
            if (failed(r)) {
                return r;
            }
        }
        return null;
    }
}
