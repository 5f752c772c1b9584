package dev.imexprobe.probe;

import dev.imexprobe.cuda.CuResult;
import dev.imexprobe.cuda.CudaDriver;
import dev.imexprobe.cuda.HandleType;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * imexprobe.driver.spin: announced work and a caller awake near the expected end change no result, lose no task,
 * keep every deadline, and spin only within their bound.
 */
class SpinHandOffTest {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private final CountDownLatch unblock = new CountDownLatch(1);
    private final List<DriverExecutor> executors = new ArrayList<>();

    @AfterEach
    void close() {
        unblock.countDown();
        executors.forEach(DriverExecutor::close);
    }

    private DriverExecutor executor(int threads, Duration timeout, Duration spin) {
        DriverExecutor e = new DriverExecutor(threads, timeout, spin, () -> true); // whatever this machine's load
        executors.add(e);
        return e;
    }

    private static ProbeSession session() {
        return new ProbeSession((CudaDriver) null, HandleType.FABRIC, 2L << 20, 1L, 2L, 0, 0);
    }

    private static ProbeStage busy(Stage name, long micros, Runnable body) {
        return TestStages.stage(name, () -> {
            LockSupport.parkNanos(micros * 1000);
            body.run();
        }, StageOutcome.ok(CuResult.SUCCESS, name.label() + " done"));
    }

    @Test
    void expectedTakesTheMedianOfTheLastEight() {
        Expected e = new Expected();
        assertThat(e.estimate("k")).isEqualTo(-1);
        for (long n : new long[] {100, 900_000, 120, 110}) {
            e.record("k", n);
        }
        assertThat(e.estimate("k")).as("the slow one ignored").isEqualTo(110);
        for (int i = 0; i < 8; i++) {
            e.record("k", 500);
        }
        assertThat(e.estimate("k")).as("only the last eight count").isEqualTo(500);
        assertThat(e.estimate("other")).isEqualTo(-1);
    }

    @Test
    void aHostWithoutCpusToSpareParksAsWithoutTheSetting() throws Exception {
        DriverExecutor busy = new DriverExecutor(2, Duration.ofSeconds(5), Duration.ofMillis(1), () -> false);
        executors.add(busy);
        assertThat(busy.spinNanos()).isZero();
        busy.announce("/probe");
        Thread.sleep(5);
        assertThat(busy.start(() -> { })).isTrue();
        assertThat(busy.expectedGap("/probe")).as("nothing announced, nothing learned").isEqualTo(-1);
        assertThat(executor(2, Duration.ofSeconds(5), Duration.ofMillis(1)).spinNanos()).isEqualTo(1_000_000L);
    }

    @Test
    void announcedAndUnannouncedWorkIsAllTakenUp() throws Exception {
        DriverExecutor pool = executor(2, Duration.ofSeconds(5), Duration.ofNanos(200_000));
        ExecutorService callers = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> done = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                done.add(callers.submit(() -> {
                    int ok = 0;
                    for (int i = 0; i < 400; i++) {
                        ThreadLocalRandom rnd = ThreadLocalRandom.current();
                        if (rnd.nextBoolean()) {
                            pool.expect(rnd.nextLong(0, 400_000));
                        }
                        if (rnd.nextInt(4) == 0) {
                            LockSupport.parkNanos(rnd.nextLong(0, 300_000));
                        }
                        int v = i;
                        DriverExecutor.Outcome<Integer> o = pool.run(() -> v * 2, null);
                        if (o.ok() && o.value() == v * 2) {
                            ok++;
                        }
                    }
                    return ok;
                }));
            }
            for (Future<Integer> f : done) {
                assertThat(f.get(60, TimeUnit.SECONDS)).as("every task ran, none waited into its deadline")
                        .isEqualTo(400);
            }
        } finally {
            callers.shutdownNow();
        }
    }

    @Test
    void anAnnouncementLearnsTheGapToItsSubmissionAndAnEndedRequestForgetsIt() throws Exception {
        DriverExecutor pool = executor(2, Duration.ofSeconds(5), Duration.ofNanos(100_000));
        assertThat(pool.expectedGap("/v1/imports")).isEqualTo(-1);
        for (int i = 0; i < 3; i++) {
            pool.announce("/v1/imports");
            Thread.sleep(20); // the request's filters, its body, its checks
            CountDownLatch ran = new CountDownLatch(1);
            assertThat(pool.start(ran::countDown)).isTrue();
            assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
            pool.announced();
        }
        assertThat(pool.expectedGap("/v1/imports")).isBetween(19_000_000L, 2_000_000_000L);
        pool.announce("/probe");
        pool.announced(); // nothing submitted (a refused request): no gap learned
        Thread.sleep(5);
        assertThat(pool.start(() -> { })).isTrue();
        assertThat(pool.expectedGap("/probe")).isEqualTo(-1);
    }

    @Test
    void anAnnouncementSpinsOneWorkerForAtMostTwiceTheSpin() throws Exception {
        DriverExecutor pool = executor(4, Duration.ofSeconds(5), Duration.ofMillis(1));
        for (int i = 0; i < 8; i++) {
            pool.run(() -> 1, null); // the workers exist and are parked
        }
        long before = driverThreadsCpu();
        pool.expect(0);
        pool.expect(20_000_000); // a second announcement moves the window: 19–21 ms from now
        Thread.sleep(300);
        long spent = driverThreadsCpu() - before;
        assertThat(spent).as("CPU of the driver threads over 300 ms after two announcements, ns")
                .isLessThan(40_000_000L);
        assertThat(pool.run(() -> "after", null).value()).isEqualTo("after");
    }

    @Test
    void aCallerWaitingForALongListSpinsOnlyNearItsEnd() {
        DriverExecutor pool = executor(2, Duration.ofSeconds(5), Duration.ofMillis(1));
        StageEngine engine = new StageEngine(pool);
        List<ProbeStage> list = List.of(busy(Stage.IMPORT, 40_000, () -> { }), busy(Stage.MAP, 40_000, () -> { }));
        for (int i = 0; i < 4; i++) {
            engine.run(session(), list); // the engine learns that this list takes ~80 ms
        }
        long cpu = THREADS.getCurrentThreadCpuTime();
        long wall = System.nanoTime();
        List<StageResult> r = engine.run(session(), list);
        long spentCpu = THREADS.getCurrentThreadCpuTime() - cpu;
        assertThat(System.nanoTime() - wall).isGreaterThan(75_000_000L);
        assertThat(r).extracting(StageResult::status).containsOnly(StageStatus.OK);
        assertThat(spentCpu).as("the caller's CPU while it waited ~80 ms for the list, ns").isLessThan(30_000_000L);
    }

    @Test
    void aStuckCallKeepsItsDeadlineWhenTheCallerSpins() throws Exception {
        DriverExecutor pool = executor(2, Duration.ofMillis(300), Duration.ofMillis(1));
        StageEngine engine = new StageEngine(pool);
        for (int i = 0; i < 8; i++) {
            List<StageResult> r = engine.run(session(), List.of(busy(Stage.CREATE, 2_000, () -> { }),
                    busy(Stage.EXPORT, 1_000, () -> { })));
            assertThat(r).extracting(StageResult::status).containsOnly(StageStatus.OK);
        }
        ProbeStage hanging = busy(Stage.EXPORT, 0, () -> {
            try {
                unblock.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long start = System.nanoTime();
        List<StageResult> r = engine.run(session(), List.of(busy(Stage.CREATE, 2_000, () -> { }), hanging));
        double waited = (System.nanoTime() - start) / 1e9;
        assertThat(waited).isBetween(0.25, 3.0);
        assertThat(r.get(0).status()).isEqualTo(StageStatus.OK);
        assertThat(r.get(1).status()).isEqualTo(StageStatus.TIMEOUT);
        assertThat(r.get(1).detail()).startsWith("no answer from the driver within 300 ms");
        assertThat(pool.stuck()).isEqualTo(1);
    }

    private static long driverThreadsCpu() {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("driver-")) {
                long c = THREADS.getThreadCpuTime(t.threadId());
                sum += Math.max(0, c);
            }
        }
        return sum;
    }
}
