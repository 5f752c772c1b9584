package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuCall;
import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.HandleType;
import dev.imexprobe.cuda.Mapping;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.imexprobe.probe.TestStages.stage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine's contract, whatever thread the stages run on: order, skipping after a failure, release always,
 * a deadline per stage, a stuck call reported as a timeout with its release deferred until it returns, and
 * "driver busy" when the pool is full. Stages here are plain Java; no driver library is loaded.
 */
class StageEngineTest {

    private final DriverExecutor executor = new DriverExecutor(2, Duration.ofMillis(300));
    private final StageEngine engine = new StageEngine(executor);
    private final Set<String> driverCalls = ConcurrentHashMap.newKeySet();
    private final CountDownLatch unblock = new CountDownLatch(1);
    /** Opened by every test but the one that holds a release inside the driver. */
    private volatile CountDownLatch releaseGate = new CountDownLatch(0);

    @AfterEach
    void close() {
        unblock.countDown();
        executor.close();
    }

    /** A driver that only knows how to reserve and free an address range (what a release touches here). */
    private CudaDriver driver() {
        return (CudaDriver) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {CudaDriver.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("addressFree")) {
                        waitFor(releaseGate).run();
                    }
                    driverCalls.add(method.getName());
                    return switch (method.getName()) {
                        case "addressReserve" -> CuCall.ok(1L << 21);
                        case "addressFree", "unmap" -> CuResult.SUCCESS;
                        default -> throw new UnsupportedOperationException(method.getName());
                    };
                });
    }

    private ProbeSession session() {
        return new ProbeSession(driver(), HandleType.FABRIC, 2L << 20, 1L, 2L, 0, 0);
    }

    private static ProbeStage ok(Stage name, long sleepMillis) {
        return stage(name, () -> sleep(sleepMillis), StageOutcome.ok(CuResult.SUCCESS, name.label() + " done"));
    }

    /** A body that blocks until {@code latch} opens (at most 30 s), as a call the driver does not return. */
    private static Runnable waitFor(CountDownLatch latch) {
        return () -> {
            try {
                latch.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void everyStageRunsInOrderAndEachHasItsOwnDeadline() {
        // 3 × 150 ms is longer than the 300 ms deadline, but no single stage is.
        List<StageResult> r = engine.run(session(), List.of(ok(Stage.IMPORT, 150), ok(Stage.RESERVE, 150),
                ok(Stage.MAP, 150), new ReleaseStage()));
        assertThat(r).extracting(StageResult::name).containsExactly(Stage.IMPORT, Stage.RESERVE, Stage.MAP, Stage.RELEASE);
        assertThat(r.subList(0, 3)).allSatisfy(s -> assertThat(s.status()).isEqualTo(StageStatus.OK));
        assertThat(r.get(0).durationSeconds()).isGreaterThanOrEqualTo(0.14);
        assertThat(r.get(3).detail()).isEqualTo("nothing to release");
    }

    /** Each list handed to the pool is one imexprobe.DriverHop event while a recording asks for it, its points in order. */
    @Test
    void aRecordingSeesEachHopWithItsFourPointsInOrder() throws Exception {
        long sleep = 20 + new java.util.Random().nextInt(20);
        java.nio.file.Path file = java.nio.file.Files.createTempFile("hop", ".jfr");
        try (jdk.jfr.Recording recording = new jdk.jfr.Recording()) {
            recording.enable("imexprobe.DriverHop");
            recording.start();
            engine.run(session(), List.of(ok(Stage.IMPORT, sleep), new ReleaseStage()));
            recording.stop();
            recording.dump(file);
        }
        String stages = Stage.IMPORT.label() + "," + Stage.RELEASE.label();
        List<jdk.jfr.consumer.RecordedEvent> events = jdk.jfr.consumer.RecordingFile.readAllEvents(file).stream()
                .filter(e -> stages.equals(e.getString("stages"))).toList(); // not another test's late list
        java.nio.file.Files.delete(file);
        assertThat(events).hasSize(1);
        jdk.jfr.consumer.RecordedEvent e = events.getFirst();
        long submitted = e.getLong("submittedNanos"), started = e.getLong("startedNanos");
        long finished = e.getLong("finishedNanos"), resumed = e.getLong("resumedNanos");
        assertThat(submitted).isPositive().isLessThanOrEqualTo(started);
        assertThat(finished - started).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(sleep));
        assertThat(resumed).isGreaterThanOrEqualTo(finished);
    }

    @Test
    void afterAFailureLaterStagesAreSkippedButReleaseRuns() {
        ProbeStage failing = stage(Stage.MAP, () -> { }, StageOutcome.failed(CuResult.of(1), "cuMemMap returned it"));
        ProbeSession s = session();
        s.importerMapping = Mapping.reserve(s.driver, 0, 2L << 20, 0).value();
        List<StageResult> r = engine.run(s, List.of(ok(Stage.IMPORT, 0), failing, ok(Stage.ACCESS, 0), new ReleaseStage()));
        assertThat(r.get(1).status()).isEqualTo(StageStatus.FAILED);
        assertThat(r.get(2).status()).isEqualTo(StageStatus.SKIPPED);
        assertThat(r.get(2).detail()).isEqualTo("not run: map failed");
        assertThat(r.get(3).status()).isEqualTo(StageStatus.OK);
        assertThat(driverCalls).contains("addressFree");
    }

    @Test
    void aStageThatThrowsIsAnInternalErrorAndTheRestGoesOn() {
        ProbeStage throwing = stage(Stage.RESERVE, () -> {
            throw new IllegalStateException("boom");
        }, null);
        List<StageResult> r = engine.run(session(), List.of(throwing, ok(Stage.MAP, 0), new ReleaseStage()));
        assertThat(r.get(0).status()).isEqualTo(StageStatus.FAILED);
        assertThat(r.get(0).detail()).isEqualTo("internal error in reserve: java.lang.IllegalStateException: boom");
        assertThat(r.get(1).detail()).isEqualTo("not run: reserve failed");
        assertThat(r.get(2).detail()).isEqualTo("nothing to release");
    }

    @Test
    void aStuckCallIsATimeoutAndItsReleaseWaitsUntilItReturns() throws Exception {
        ProbeStage hanging = stage(Stage.MAP, waitFor(unblock), StageOutcome.ok(CuResult.SUCCESS, "mapped at last"));
        ProbeSession s = session();
        s.importerMapping = Mapping.reserve(s.driver, 0, 2L << 20, 0).value();
        long start = System.nanoTime();
        List<StageResult> r = engine.run(s, List.of(ok(Stage.RESERVE, 0), hanging, ok(Stage.ACCESS, 0), new ReleaseStage()));
        double waited = (System.nanoTime() - start) / 1e9;

        assertThat(waited).isBetween(0.25, 3.0);
        assertThat(r.get(0).status()).isEqualTo(StageStatus.OK);
        assertThat(r.get(1).status()).isEqualTo(StageStatus.TIMEOUT);
        assertThat(r.get(1).detail()).startsWith("no answer from the driver within 300 ms");
        assertThat(r.get(2).detail()).isEqualTo("not run: map timed out");
        assertThat(r.get(3).status()).isEqualTo(StageStatus.SKIPPED);
        assertThat(r.get(3).detail()).startsWith("deferred: the map call is still inside the driver");
        assertThat(executor.stuck()).isEqualTo(1);
        assertThat(driverCalls).doesNotContain("addressFree");

        unblock.countDown();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(driverCalls).as("released on the returning thread").contains("addressFree");
            assertThat(executor.stuck()).isZero();
        });
    }

    @Test
    void aSessionStuckInTheDriverIsNotTouchedByItsLaterStagesUntilTheCallReturns() throws Exception {
        ProbeStage hanging = stage(Stage.CREATE, waitFor(unblock), StageOutcome.ok(CuResult.SUCCESS, "created at last"));
        ProbeSession s = session();
        s.exporterMapping = Mapping.reserve(s.driver, 0, 2L << 20, 0).value();
        List<StageResult> first = engine.run(s, List.of(hanging, ok(Stage.EXPORT, 0)));
        assertThat(first.get(0).status()).isEqualTo(StageStatus.TIMEOUT);
        assertThat(s.stuck).isEqualTo(Stage.CREATE);

        // The exporter's later list (its write-back check and release) runs nothing while create is inside the driver.
        List<StageResult> later = engine.run(s, List.of(ok(Stage.WRITEBACK, 0), new ReleaseStage()));
        assertThat(later).allSatisfy(r -> assertThat(r.status()).isEqualTo(StageStatus.SKIPPED));
        assertThat(later.get(1).detail()).startsWith("deferred: the create call is still inside the driver");
        assertThat(driverCalls).doesNotContain("addressFree");

        unblock.countDown();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(driverCalls).as("released on the returning thread").contains("addressFree");
            assertThat(s.stuck).isNull();
            assertThat(executor.stuck()).isZero();
        });
    }

    /** The one thread of {@code one} busy until {@code hold} opens, and its queue (4 tasks) full behind it. */
    private static void fill(DriverExecutor one, CountDownLatch hold) throws InterruptedException {
        CountDownLatch busy = new CountDownLatch(1);
        for (int i = 0; i < 5; i++) {
            assertThat(one.start(() -> {
                busy.countDown();
                waitFor(hold).run();
            })).isTrue();
            assertThat(busy.await(10, TimeUnit.SECONDS)).as("the first task runs before the queue fills").isTrue();
        }
    }

    @Test
    void aFullPoolAnswersDriverBusyWithoutRunningAnything() throws Exception {
        DriverExecutor one = new DriverExecutor(1, Duration.ofMillis(300));
        StageEngine small = new StageEngine(one);
        CountDownLatch hold = new CountDownLatch(1);
        try {
            // One thread busy and its queue (4 tasks) full: nothing more is accepted.
            fill(one, hold);
            List<StageResult> r = small.run(session(), List.of(ok(Stage.IMPORT, 0), ok(Stage.MAP, 0), new ReleaseStage()));
            assertThat(r.get(0).status()).isEqualTo(StageStatus.TIMEOUT);
            assertThat(r.get(0).detail()).startsWith("driver busy: all 1 driver threads are taken");
            assertThat(r.get(1).detail()).isEqualTo("not run: import failed");
            // Release is never refused: it goes to the clean-up thread, which gives back whatever the session holds.
            assertThat(r.get(2).status()).isEqualTo(StageStatus.SKIPPED);
            assertThat(r.get(2).detail()).startsWith("deferred: all 1 driver threads are taken")
                    .endsWith("released on the clean-up thread");
        } finally {
            hold.countDown();
            one.close();
        }
    }

    /**
     * A probe's deadline shorter than the driver's holds for the driver too: the caller answers at its own deadline,
     * and the call still inside the driver is counted as stuck only once it passes the driver's deadline.
     */
    @Test
    void theCallersDeadlineHoldsForTheDriverAndTheCallIsStuckOnlyPastTheDriversOwn() throws Exception {
        DriverExecutor slow = new DriverExecutor(2, Duration.ofMillis(1500));
        StageEngine e = new StageEngine(slow);
        try {
            ProbeStage hanging = stage(Stage.CREATE, waitFor(unblock), StageOutcome.ok(CuResult.SUCCESS, "created at last"));
            long deadlineMs = 150 + new java.util.Random().nextInt(250);
            long start = System.nanoTime();
            List<StageResult> r = ProbeDeadline.within(start + deadlineMs * 1_000_000,
                    () -> e.run(session(), List.of(hanging, ok(Stage.EXPORT, 0), new ReleaseStage())));
            long waitedMs = (System.nanoTime() - start) / 1_000_000;

            assertThat(waitedMs).as("the caller's deadline of %d ms, not the driver's 1500", deadlineMs)
                    .isBetween(deadlineMs - 5, deadlineMs + 700);
            assertThat(r.get(0).status()).isEqualTo(StageStatus.TIMEOUT);
            assertThat(r.get(0).detail()).startsWith("no answer from the driver before the probe's deadline (");
            assertThat(r.get(1).detail()).isEqualTo("not run: create timed out");
            if ((System.nanoTime() - start) / 1_000_000 < 1400) {
                assertThat(slow.stuck()).as("not past the driver's deadline yet").isZero();
            }
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(slow.stuck()).as("past the driver's deadline").isEqualTo(1));
            assertThat((System.nanoTime() - start) / 1_000_000).as("counted at the driver's deadline, not before")
                    .isGreaterThanOrEqualTo(1500 - 5);
            unblock.countDown();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(slow.stuck()).isZero());
        } finally {
            unblock.countDown();
            slow.close();
        }
    }

    /**
     * A release whose probe's deadline has passed (a peer that never answered used it up) is not waited for and is
     * no driver timeout: it is deferred, and the driver thread releases after the answer. Another stage given up
     * before it started says so.
     */
    @Test
    void pastTheCallersDeadlineAReleaseIsDeferredNotATimeout() {
        ProbeSession s = session();
        s.importerMapping = Mapping.reserve(s.driver, 0, 2L << 20, 0).value();
        long past = System.nanoTime() - 1_000_000;
        releaseGate = new CountDownLatch(1); // the release stays inside the driver until the answer is in

        List<StageResult> r = ProbeDeadline.within(past, () -> engine.run(s, List.of(new ReleaseStage())));
        releaseGate.countDown();

        assertThat(r).singleElement().satisfies(release -> {
            assertThat(release.status()).isEqualTo(StageStatus.SKIPPED);
            assertThat(release.detail()).isEqualTo("deferred: the probe's deadline had passed; what the session "
                    + "holds is released on a driver thread after the answer");
        });
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(driverCalls).as("released after the answer").contains("addressFree");
            assertThat(s.stuck).isNull();
        });
        assertThat(executor.stuck()).isZero();

        List<StageResult> late = ProbeDeadline.within(past, () -> engine.run(session(),
                List.of(stage(Stage.IMPORT, waitFor(unblock), StageOutcome.ok(CuResult.SUCCESS, "imported")),
                        new ReleaseStage())));
        assertThat(late.get(0).status()).isEqualTo(StageStatus.TIMEOUT);
        // given up before a thread took it, or just after
        assertThat(late.get(0).detail()).satisfiesAnyOf(
                d -> assertThat(d).isEqualTo("not started: the probe's deadline had passed"),
                d -> assertThat(d).startsWith("no answer from the driver before the probe's deadline (")
                        .endsWith(" ms); the call is still running and its thread stays busy until it returns"));
    }

    /**
     * A list that waits in the queue past its deadline (every thread busy in calls that still return) is given up as
     * driver busy, but it is in no driver call: not counted as stuck, so the pool never looks exhausted for it, and
     * when a thread takes it none of its stages runs, only the session's release.
     */
    @Test
    void aListGivenUpWhileQueuedIsNoStuckCallAndRunsNothingLater() throws Exception {
        DriverExecutor one = new DriverExecutor(1, Duration.ofMillis(300));
        StageEngine small = new StageEngine(one);
        CountDownLatch hold = new CountDownLatch(1);
        CountDownLatch busy = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        try {
            assertThat(one.start(() -> { // a long call, not one a caller gave up on
                busy.countDown();
                waitFor(hold).run();
            })).isTrue();
            assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
            ProbeSession s = session();
            s.importerMapping = Mapping.reserve(s.driver, 0, 2L << 20, 0).value();
            ProbeStage counted = stage(Stage.IMPORT, ran::incrementAndGet, StageOutcome.ok(CuResult.SUCCESS, "imported"));
            ProbeStage map = stage(Stage.MAP, ran::incrementAndGet, StageOutcome.ok(CuResult.SUCCESS, "mapped"));

            List<StageResult> r = small.run(s, List.of(counted, map, new ReleaseStage()));

            assertThat(r.get(0).status()).isEqualTo(StageStatus.TIMEOUT);
            assertThat(r.get(0).detail()).startsWith("driver busy: not started within 300 ms, all 1 driver threads "
                    + "were taken (0 inside calls that have not returned)");
            assertThat(r.get(1).detail()).isEqualTo("not run: import timed out");
            assertThat(r.get(2).status()).isEqualTo(StageStatus.SKIPPED);
            assertThat(r.get(2).detail()).startsWith("deferred: the list never got a driver thread");
            assertThat(one.stuck()).as("a queued list is in no driver call").isZero();
            assertThat(one.exhausted()).isFalse();
            assertThat(driverCalls).doesNotContain("addressFree");

            hold.countDown();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(driverCalls).as("released once a thread took the list").contains("addressFree");
                assertThat(s.stuck).isNull();
            });
            assertThat(ran).as("none of the given-up list's stages ran").hasValue(0);
        } finally {
            hold.countDown();
            one.close();
        }
    }

    /**
     * The other path: the pool refuses the whole list, a thread frees up, and a stage run on its own gets stuck.
     * The stages after it are deferred just as in a list on one thread, and its release waits for its return.
     */
    @Test
    void aStuckCallOfAStageRunOnItsOwnDefersTheRestOfTheList() throws Exception {
        DriverExecutor one = new DriverExecutor(1, Duration.ofMillis(300));
        StageEngine small = new StageEngine(one);
        CountDownLatch hold = new CountDownLatch(1);
        try {
            fill(one, hold); // the list is refused
            ProbeStage freeThePool = new ProbeStage() { // runs on the caller: lets the held tasks finish
                @Override
                public Stage stage() {
                    return Stage.TRANSFER;
                }

                @Override
                public StageOutcome run(ProbeSession s) {
                    hold.countDown();
                    await().atMost(Duration.ofSeconds(10)).until(() -> one.active() == 0);
                    return StageOutcome.ok(null, "handed over");
                }

                @Override
                public boolean callsDriver() {
                    return false;
                }
            };
            ProbeStage hanging = stage(Stage.IMPORT, waitFor(unblock), StageOutcome.ok(CuResult.SUCCESS, "imported at last"));
            ProbeSession s = session();
            s.importerMapping = Mapping.reserve(s.driver, 0, 2L << 20, 0).value();

            List<StageResult> r = small.run(s, List.of(freeThePool, hanging, ok(Stage.MAP, 0), new ReleaseStage()));

            assertThat(r.get(0).status()).isEqualTo(StageStatus.OK);
            assertThat(r.get(1).status()).isEqualTo(StageStatus.TIMEOUT);
            assertThat(r.get(1).detail()).startsWith("no answer from the driver within 300 ms");
            assertThat(r.get(2).detail()).isEqualTo("not run: import timed out");
            assertThat(r.get(3).status()).isEqualTo(StageStatus.SKIPPED);
            assertThat(r.get(3).detail()).startsWith("deferred: the import call is still inside the driver");
            assertThat(driverCalls).doesNotContain("addressFree");

            unblock.countDown();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(driverCalls).as("released on the returning thread").contains("addressFree");
                assertThat(s.stuck).isNull();
            });
        } finally {
            hold.countDown();
            one.close();
        }
    }

    @Test
    void stagesWithoutADriverCallRunWithoutThePool() {
        ProbeStage plain = new ProbeStage() {
            @Override
            public Stage stage() {
                return Stage.TRANSFER;
            }

            @Override
            public StageOutcome run(ProbeSession s) {
                return StageOutcome.skipped("in-process");
            }

            @Override
            public boolean callsDriver() {
                return false;
            }
        };
        List<StageResult> r = engine.run(session(), List.of(plain));
        assertThat(r).singleElement().satisfies(s -> assertThat(s.detail()).isEqualTo("in-process"));
    }

    // ---- a milestone within a list, and a list started without waiting -----------------------------------------

    /** A stage that notes its name in {@code log} when it runs. */
    private static ProbeStage logged(Stage name, List<String> log) {
        return stage(name, () -> log.add(name.label()), StageOutcome.ok(CuResult.SUCCESS, name.label() + " done"));
    }

    @Test
    void theMilestoneRunsOnceRightAfterItsStageOnTheListsThreadWhileTheCallerWaits() {
        List<Stage> names = List.of(Stage.IMPORT, Stage.RESERVE, Stage.MAP, Stage.ACCESS, Stage.VERIFY,
                Stage.WRITEBACK);
        Stage after = names.get(new java.util.Random().nextInt(names.size()));
        List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<ProbeStage> stages = new java.util.ArrayList<>();
        for (Stage n : names) {
            stages.add(logged(n, log));
        }
        stages.add(new ReleaseStage());
        Thread caller = Thread.currentThread();
        Thread[] ranOn = {null};
        List<StageResult> r = engine.run(session(), stages, after, () -> {
            log.add("milestone");
            ranOn[0] = Thread.currentThread();
        });
        List<String> expected = new java.util.ArrayList<>();
        for (Stage n : names) {
            expected.add(n.label());
            if (n == after) {
                expected.add("milestone");
            }
        }
        assertThat(log).as("after %s", after).containsExactlyElementsOf(expected);
        assertThat(ranOn[0]).isNotNull().isNotSameAs(caller);
        assertThat(r).hasSize(names.size() + 1);
        assertThat(r.subList(0, names.size())).allSatisfy(s -> assertThat(s.status()).isEqualTo(StageStatus.OK));
    }

    @Test
    void aMilestoneAfterASkippedStageRunsAndOneThatThrowsStopsNothing() {
        ProbeStage failing = stage(Stage.IMPORT, () -> { }, StageOutcome.failed(CuResult.of(1), "import failed"));
        List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();
        ProbeStage release = new ProbeStage() { // runs after a failure, as the release does
            @Override
            public Stage stage() {
                return Stage.RELEASE;
            }

            @Override
            public StageOutcome run(ProbeSession s) {
                log.add("release");
                return StageOutcome.ok(CuResult.SUCCESS, "released");
            }

            @Override
            public boolean alwaysRuns() {
                return true;
            }
        };
        List<StageResult> r = engine.run(session(), List.of(failing, logged(Stage.WRITEBACK, log), release),
                Stage.WRITEBACK, () -> {
            log.add("milestone");
            throw new IllegalStateException("the answer's connection is gone");
        });
        // The write-back was skipped (it has its result), so the milestone ran; its exception ended nothing.
        assertThat(log).containsExactly("milestone", "release");
        assertThat(r).extracting(StageResult::status).containsExactly(StageStatus.FAILED, StageStatus.SKIPPED,
                StageStatus.OK);
    }

    @Test
    void aMilestoneBehindAStuckCallNeverRunsEvenOnceTheCallReturns() throws Exception {
        List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();
        ProbeStage stuck = stage(Stage.VERIFY, () -> {
            try {
                unblock.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, StageOutcome.ok(CuResult.SUCCESS, "late"));
        List<StageResult> r = engine.run(session(), List.of(stuck, logged(Stage.WRITEBACK, log),
                logged(Stage.RELEASE, log)),
                Stage.WRITEBACK, () -> log.add("milestone"));
        assertThat(r.getFirst().status()).isEqualTo(StageStatus.TIMEOUT);
        unblock.countDown();
        // The worker, once back, releases the session itself and stops: no later stage, no milestone runs.
        await().atMost(Duration.ofSeconds(5)).until(() -> executor.stuck() == 0 && executor.active() == 0);
        assertThat(log).isEmpty();
    }

    @Test
    void aStartedListRunsWhileTheCallerGoesOnAndAwaitGivesItsResults() throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        long millis = 20 + new java.util.Random().nextInt(30);
        ProbeStage waits = stage(Stage.WRITEBACK, () -> {
            try {
                go.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            sleep(millis);
        }, StageOutcome.ok(CuResult.SUCCESS, "checked"));
        long t0 = System.nanoTime();
        StageEngine.Pending pending = engine.start(session(), List.of(waits, new ReleaseStage()));
        // start returned while the stage still waits for the caller: the caller's own work runs meanwhile.
        assertThat(go.getCount()).isEqualTo(1);
        go.countDown();
        List<StageResult> r = pending.await();
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(millis));
        assertThat(r).extracting(StageResult::name).containsExactly(Stage.WRITEBACK, Stage.RELEASE);
        assertThat(r.getFirst().detail()).isEqualTo("checked");
        assertThat(r.getFirst().durationSeconds()).isGreaterThanOrEqualTo(millis / 1000.0);
    }
}
